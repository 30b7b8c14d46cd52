/* fuzz_grpc.c - libFuzzer harness for what export/grpc.c reads from a
 * collector: reply header and trailer lines (grpc-status, grpc-message,
 * grpc-encoding, grpc-status-details-bin with base64 of a google.rpc.Status
 * holding RetryInfo), percent-decoding, base64, Status decoding and the
 * 5-byte message framing. The first byte picks the entry point. Nothing may
 * crash, read out of bounds or produce an unterminated string. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/grpc.h"
#include "util/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void headers(const char *text, size_t len)
{
	struct grpc_reply r;
	size_t pos = 0;

	grpc__reply_init(&r);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;

		grpc__reply_header(&r, text + pos, n);
		pos += n;
	}
	if (strnlen(r.message, sizeof(r.message)) == sizeof(r.message))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	unsigned char out[512];
	char msg[64];
	int code, n;
	__s64 delay;
	bool compressed;
	const unsigned char *m;
	size_t mlen;

	if (!size)
		return 0;
	size--;
	switch (data[0] % 5) {
	case 0:
		headers(text, size);
		break;
	case 1:
		grpc__decode_message(text, size, msg, sizeof(msg));
		if (strnlen(msg, sizeof(msg)) == sizeof(msg))
			abort();
		break;
	case 2:
		n = scan__base64(text, size, out, sizeof(out));
		if (n > (int)sizeof(out) || (n < 0 && n != -EINVAL && n != -ENOSPC))
			abort();
		break;
	case 3:
		if (!grpc__decode_status(text, size, &code, msg, sizeof(msg), &delay) &&
		    strnlen(msg, sizeof(msg)) == sizeof(msg))
			abort();
		break;
	default:
		if (!grpc__parse_frame(text, size, &compressed, &m, &mlen) &&
		    (m < (const unsigned char *)text || m + mlen > (const unsigned char *)text + size))
			abort();
		break;
	}
	return 0;
}
