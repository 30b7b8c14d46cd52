/* json.c - JSON string literals (see json.h). */
#include "util/json.h"
#include "util/utf8.h"

void json__fput_str(FILE *f, const char *s)
{
	unsigned char c;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		c = (unsigned char)*s;
		n = utf8__seq(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
		} else if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			s++;
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
	fputc('"', f);
}
