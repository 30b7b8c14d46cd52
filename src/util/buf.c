#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fdio.h"

void buf__init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf__release(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

int buf__reserve(struct buf *b, size_t extra)
{
	size_t need, ncap;
	unsigned char *n;

	if (extra > b->max || b->len > b->max - extra)
		return -E2BIG;
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap = ncap > b->max / 2 ? b->max : ncap * 2;
	if (ncap > b->max)
		ncap = b->max; /* the first allocation may exceed a small cap */
	n = realloc(b->data, ncap);
	if (!n)
		return -ENOMEM;
	b->data = n;
	b->cap = ncap;
	return 0;
}

void buf__shrink(struct buf *b)
{
	unsigned char *n;

	if (!b->data || b->len == b->cap)
		return;
	if (!b->len) {
		buf__release(b);
		return;
	}
	n = realloc(b->data, b->len);
	if (n) {
		b->data = n;
		b->cap = b->len;
	}
}

int buf__append(struct buf *b, const void *data, size_t len)
{
	int err;

	if (!len)
		return 0;
	err = buf__reserve(b, len);
	if (err)
		return err;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

void buf__reset(struct buf *b)
{
	b->len = 0;
}

int buf__read_file(struct buf *b, const char *path)
{
	int fd, err = 0;
	ssize_t n;

	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	buf__reset(b);
	for (;;) {
		err = buf__reserve(b, 4096);
		if (err)
			break;
		n = read(fd, b->data + b->len, b->cap - b->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		b->len += n;
	}
	close(fd);
	return err;
}

void buf__put(struct buf_out *o, const void *data, size_t len)
{
	if (!o->err)
		o->err = buf__append(o->b, data, len);
}

void buf__puts(struct buf_out *o, const char *s)
{
	buf__put(o, s, strlen(s));
}
