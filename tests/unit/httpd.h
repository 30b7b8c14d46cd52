/* httpd.h - a scripted HTTP/1.1 server for unit tests, in a thread on
 * 127.0.0.1 with an ephemeral port (loopback only, no root).
 *
 * Request i gets reply script[i] (the last one repeats). Each request's
 * path, header block and body are recorded, with a count, so tests can
 * check what arrived and how often. Keep-alive connections are served until
 * the client closes them: free the client before httpd_stop(), then
 * check the records, then httpd_release().
 */
#ifndef PROFCAP_TEST_HTTPD_H
#define PROFCAP_TEST_HTTPD_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct httpd_reply {
	int status;
	const char *headers; /* extra "Name: value\r\n" lines, or NULL */
	const void *body;
	size_t body_len;
};

#define HTTPD_MAX_REQUESTS 64

struct httpd {
	int fd;
	int port;
	pthread_t thread;
	const struct httpd_reply *script;
	size_t nscript;
	pthread_mutex_t mu;
	int nrequests;
	int nconnections;
	char path[256];
	char headers[8192];			   /* of the last request */
	unsigned char *bodies[HTTPD_MAX_REQUESTS]; /* every request's body */
	size_t body_lens[HTTPD_MAX_REQUESTS];
};

static inline int httpd_read_request(int c, char *hdr, size_t hdrlen, unsigned char **body,
				     size_t *blen)
{
	size_t n = 0, need, have, cl = 0;
	char *end, *p;
	ssize_t r;

	*body = NULL;
	*blen = 0;
	for (;;) {
		if (n + 1 >= hdrlen)
			return -1;
		r = recv(c, hdr + n, hdrlen - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		hdr[n] = '\0';
		if ((unsigned char)hdr[0] == 0x16) /* a TLS handshake */
			return -2;
		end = strstr(hdr, "\r\n\r\n");
		if (end)
			break;
	}
	have = n - (size_t)(end + 4 - hdr);
	for (p = hdr; (p = strchr(p, '\n')); p++)
		if (!strncasecmp(p + 1, "content-length:", 15))
			cl = strtoul(p + 16, NULL, 10);
	*body = malloc(cl + 1);
	if (!*body)
		return -1;
	memcpy(*body, end + 4, have < cl ? have : cl);
	for (need = cl; have < need; have += (size_t)r) {
		r = recv(c, *body + have, need - have, 0);
		if (r <= 0)
			return -1;
	}
	*blen = cl;
	end[2] = '\0'; /* keep the header block, drop the blank line */
	return 0;
}

static inline void httpd_reply_to(struct httpd *h, int c, int i)
{
	const struct httpd_reply *rp =
		&h->script[(size_t)i < h->nscript ? (size_t)i : h->nscript - 1];
	char head[1024];
	int n;

	n = snprintf(head, sizeof(head), "HTTP/1.1 %d Scripted\r\nContent-Length: %zu\r\n%s\r\n",
		     rp->status, rp->body_len, rp->headers ? rp->headers : "");
	if (send(c, head, (size_t)n, MSG_NOSIGNAL) < 0)
		return;
	if (rp->body_len)
		send(c, rp->body, rp->body_len, MSG_NOSIGNAL);
}

static inline void *httpd_main(void *arg)
{
	struct httpd *h = arg;
	struct timeval tv = {.tv_sec = 10};
	char hdr[sizeof(h->headers)];
	unsigned char *body;
	size_t blen;
	int c, i, r;

	while ((c = accept(h->fd, NULL, NULL)) >= 0) {
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		pthread_mutex_lock(&h->mu);
		h->nconnections++;
		pthread_mutex_unlock(&h->mu);
		while (!(r = httpd_read_request(c, hdr, sizeof(hdr), &body, &blen))) {
			pthread_mutex_lock(&h->mu);
			i = h->nrequests++;
			memcpy(h->headers, hdr, sizeof(hdr));
			sscanf(hdr, "%*s %255s", h->path);
			if (i < HTTPD_MAX_REQUESTS) {
				h->bodies[i] = body;
				h->body_lens[i] = blen;
			} else {
				free(body);
			}
			pthread_mutex_unlock(&h->mu);
			httpd_reply_to(h, c, i);
		}
		if (r == -2) /* what a plain server says to a TLS client */
			send(c, "HTTP/1.1 400 Bad Request\r\n\r\n", 28, MSG_NOSIGNAL);
		free(body);
		close(c);
	}
	return NULL;
}

/* Listen on 127.0.0.1:<ephemeral> and serve @script (@n replies, n >= 1). */
static inline int httpd_start(struct httpd *h, const struct httpd_reply *script, size_t n)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);

	memset(h, 0, sizeof(*h));
	h->script = script;
	h->nscript = n;
	pthread_mutex_init(&h->mu, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0 || bind(h->fd, (struct sockaddr *)&a, sizeof(a)) || listen(h->fd, 16) ||
	    getsockname(h->fd, (struct sockaddr *)&a, &alen))
		return -errno;
	h->port = ntohs(a.sin_port);
	return -pthread_create(&h->thread, NULL, httpd_main, h);
}

/* Stop serving; what was recorded stays readable until httpd_release(). */
static inline void httpd_stop(struct httpd *h)
{
	shutdown(h->fd, SHUT_RDWR);
	pthread_join(h->thread, NULL);
	close(h->fd);
	pthread_mutex_destroy(&h->mu);
}

static inline void httpd_release(struct httpd *h)
{
	for (int i = 0; i < h->nrequests && i < HTTPD_MAX_REQUESTS; i++) {
		free(h->bodies[i]);
		h->bodies[i] = NULL;
	}
}

/* A port on 127.0.0.1 where nothing listens (bound, then released). */
static inline int httpd_closed_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &alen))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

#endif
