/* test_procctx.c - the OpenTelemetry process-context reader (proc/procctx):
 * header checks, the bounded payload decoder against payloads encoded by
 * nanopb from our own process_context.proto, malformed inputs, and the read
 * protocol over a file laid out like /proc/PID/mem. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pb_encode.h>

#include "opentelemetry/proto/processcontext/v1development/process_context.pb.h"
#include "proc/procctx.h"
#include "symbolize/symbolizer.h"
#include "test.h"

#define PC(x) opentelemetry_proto_processcontext_v1development_##x
#define CM(x) opentelemetry_proto_common_v1_##x

struct kvs {
	const char *const *k; /* keys */
	const char *const *v; /* string values; NULL = int 42 */
	size_t n;
};

static bool enc_str(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const char *str = *arg;

	return pb_encode_tag_for_field(s, f) &&
	       pb_encode_string(s, (const pb_byte_t *)str, strlen(str));
}

static bool enc_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct kvs *a = *arg;

	for (size_t i = 0; i < a->n; i++) {
		CM(KeyValue) kv = CM(KeyValue_init_zero);

		kv.key.funcs.encode = enc_str;
		kv.key.arg = (void *)a->k[i];
		kv.has_value = true;
		if (a->v[i]) {
			kv.value.which_value = CM(AnyValue_string_value_tag);
			kv.value.value.string_value.funcs.encode = enc_str;
			kv.value.value.string_value.arg = (void *)a->v[i];
		} else {
			kv.value.which_value = CM(AnyValue_int_value_tag);
			kv.value.value.int_value = 42;
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, CM(KeyValue_fields), &kv))
			return false;
	}
	return true;
}

/* A ProcessContext payload with @a as resource attributes (and one extra
 * non-resource attribute, which the reader must not take). */
static size_t encode_ctx(const struct kvs *a, unsigned char *out, size_t cap)
{
	static const char *const xk[] = {"threadlocal.schema_version"}, *const xv[] = {"v1"};
	static const struct kvs extra = {xk, xv, 1};
	PC(ProcessContext) m = PC(ProcessContext_init_zero);
	pb_ostream_t s = pb_ostream_from_buffer(out, cap);

	m.has_resource = true;
	m.resource.attributes.funcs.encode = enc_attrs;
	m.resource.attributes.arg = (void *)a;
	m.attributes.funcs.encode = enc_attrs;
	m.attributes.arg = (void *)&extra;
	if (!pb_encode(&s, PC(ProcessContext_fields), &m))
		return 0;
	return s.bytes_written;
}

static void put(unsigned char *b, __u64 v, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static void header(unsigned char *h, const char *sig, __u32 ver, __u32 size, __u64 ts,
		   __u64 payload)
{
	memcpy(h, sig, 8);
	put(h + 8, ver, 4);
	put(h + 12, size, 4);
	put(h + 16, ts, 8);
	put(h + 24, payload, 8);
}

/* With PROCCTX_SEED_DIR set, keep header + payload as a fuzzer seed. */
static void write_seed(const char *name, const unsigned char *payload, size_t len)
{
	const char *dir = getenv("PROCCTX_SEED_DIR");
	unsigned char h[PROCCTX_HEADER_SIZE];
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	header(h, "OTEL_CTX", 2, (__u32)len, 1, 0x1020);
	fwrite(h, 1, sizeof(h), f);
	fwrite(payload, 1, len, f);
	fclose(f);
}

static const char *const K[] = {"service.name", "service.instance.id", "process.pid",
				"deployment.environment.name", "service.name"};
static const char *const V[] = {"checkout", "inst-7", NULL, "prod", "dup"};

TEST(decode_nanopb_payload)
{
	struct kvs a = {K, V, 5};
	unsigned char buf[1024];
	struct procctx c;
	size_t len = encode_ctx(&a, buf, sizeof(buf));

	CHECK(len > 0);
	CHECK_EQ_U64(procctx__decode(buf, len, &c), 0);
	CHECK_EQ_U64(c.n, 4); /* the duplicated service.name keeps the first */
	CHECK_STR(c.kv[0].key, "service.name");
	CHECK_STR(c.kv[0].value, "checkout");
	CHECK_STR(c.kv[1].value, "inst-7");
	CHECK_STR(c.kv[2].key, "process.pid");
	CHECK_STR(c.kv[2].value, "42");
	CHECK_STR(c.kv[3].value, "prod");
	procctx__clear(&c);
	CHECK_EQ_U64(c.n, 0);
	write_seed("valid.bin", buf, len);
	/* Empty payload: a valid message with nothing in it. */
	CHECK_EQ_U64(procctx__decode(buf, 0, &c), 0);
	CHECK_EQ_U64(c.n, 0);
}

TEST(decode_malformed)
{
	struct kvs a = {K, V, 4};
	unsigned char buf[1024], bad[1024];
	struct procctx c;
	size_t len = encode_ctx(&a, buf, sizeof(buf)), cut, i;
	/* resource { attributes { key: "a\0b" value { string_value: "x" } } } */
	static const unsigned char nul_key[] = {0x0a, 0x0c, 0x0a, 0x0a, 0x0a, 0x03, 'a', 0,
						'b',  0x12, 0x03, 0x0a, 0x01, 'x'};
	/* Same with a value that is not UTF-8. */
	static const unsigned char bad_utf8[] = {0x0a, 0x0b, 0x0a, 0x09, 0x0a, 0x01, 'k',
						 0x12, 0x04, 0x0a, 0x02, 0xc3, 0x28};
	/* A group wire type, and a length past the end. */
	static const unsigned char group[] = {0x0b, 0x0c};
	static const unsigned char overlong[] = {0x0a, 0x7f, 0x0a};
	static const unsigned char varint11[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
						 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};

	CHECK(len > 10);
	/* Every truncation of a valid payload is refused or decodes a prefix of
	 * it, never crashes; a cut inside the resource is refused. */
	for (cut = 1; cut < len; cut++) {
		int err = procctx__decode(buf, cut, &c);

		CHECK(err == 0 || err == -EBADMSG);
		if (err)
			CHECK_EQ_U64(c.n, 0);
		procctx__clear(&c);
	}
	CHECK_EQ_U64(procctx__decode(buf, len - 1, &c), -EBADMSG);
	CHECK_EQ_U64(procctx__decode(nul_key, sizeof(nul_key), &c), -EBADMSG);
	CHECK_EQ_U64(procctx__decode(bad_utf8, sizeof(bad_utf8), &c), -EBADMSG);
	CHECK_EQ_U64(procctx__decode(group, sizeof(group), &c), -EBADMSG);
	CHECK_EQ_U64(procctx__decode(overlong, sizeof(overlong), &c), -EBADMSG);
	CHECK_EQ_U64(procctx__decode(varint11, sizeof(varint11), &c), -EBADMSG);
	/* Random garbage never crashes and never leaks (ASan in the fuzzer). */
	srand(7);
	for (i = 0; i < 2000; i++) {
		size_t n = (size_t)rand() % sizeof(bad);

		for (size_t j = 0; j < n; j++)
			bad[j] = (unsigned char)rand();
		if (!procctx__decode(bad, n, &c))
			procctx__clear(&c);
	}
}

/* Hand-encoded protobuf pieces for the OTEP 4947 key map. */
static size_t pb_len(unsigned char *b, int field, const void *data, size_t len)
{
	b[0] = (unsigned char)(field << 3 | 2);
	b[1] = (unsigned char)len; /* tests keep every piece < 128 bytes */
	memcpy(b + 2, data, len);
	return 2 + len;
}

/* ProcessContext.attributes entry @key = AnyValue bytes @any. */
static size_t ctx_attr(unsigned char *b, const char *key, const unsigned char *any, size_t nany)
{
	unsigned char kv[128];
	size_t n = pb_len(kv, 1, key, strlen(key));

	n += pb_len(kv + n, 2, any, nany);
	return pb_len(b, 2, kv, n);
}

static size_t key_map_payload(unsigned char *out, const char *schema, bool int_entry)
{
	unsigned char arr[128], any[128], s1[64], any1[64];
	size_t n = 0, na = 0;

	na += pb_len(arr + na, 1, any1, pb_len(any1, 1, "http.route", 10));
	if (int_entry) { /* AnyValue{int_value 5}: index 1 has no usable name */
		s1[0] = 3 << 3;
		s1[1] = 5;
		na += pb_len(arr + na, 1, s1, 2);
	}
	na += pb_len(arr + na, 1, any1, pb_len(any1, 1, "http.method", 11));
	if (schema)
		n += ctx_attr(out + n, "threadlocal.schema_version", any,
			      pb_len(any, 1, schema, strlen(schema)));
	n += ctx_attr(out + n, "threadlocal.attribute_key_map", any, pb_len(any, 5, arr, na));
	return n;
}

TEST(key_map)
{
	unsigned char buf[512];
	struct procctx c;
	size_t len = key_map_payload(buf, "tlsdesc_v1_dev", true);

	CHECK_EQ_U64(procctx__decode(buf, len, &c), 0);
	CHECK_EQ_U64(c.n, 0); /* not resource attributes */
	CHECK_EQ_U64(c.nthread_keys, 3);
	CHECK_STR(c.thread_keys[0], "http.route");
	CHECK(c.thread_keys[1] == NULL);
	CHECK_STR(c.thread_keys[2], "http.method");
	write_seed("key_map.bin", buf, len);
	procctx__clear(&c);
	CHECK(c.nthread_keys == 0);
	/* No schema: the map is taken. Another schema (e.g. Go's): ignored. */
	len = key_map_payload(buf, NULL, false);
	CHECK_EQ_U64(procctx__decode(buf, len, &c), 0);
	CHECK_EQ_U64(c.nthread_keys, 2);
	procctx__clear(&c);
	len = key_map_payload(buf, "go_pprof_labels_v1", false);
	CHECK_EQ_U64(procctx__decode(buf, len, &c), 0);
	CHECK_EQ_U64(c.nthread_keys, 0);
	/* Truncated anywhere: refused, nothing left allocated. */
	len = key_map_payload(buf, "tls_v1", false);
	for (size_t cut = 1; cut < len; cut++) {
		int err = procctx__decode(buf, cut, &c);

		CHECK(err == 0 || err == -EBADMSG);
		CHECK(err == 0 || c.nthread_keys == 0);
		procctx__clear(&c);
	}
}

TEST(header_checks)
{
	unsigned char h[PROCCTX_HEADER_SIZE];
	struct procctx_header out;

	header(h, "OTEL_CTX", 2, 100, 123, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), 0);
	CHECK_EQ_U64(out.payload_size, 100);
	CHECK_EQ_U64(out.published_at_ns, 123);
	CHECK_EQ_U64(out.payload, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h) - 1, 0x1000, 0x2000, &out), -EINVAL);
	header(h, "OTEL_CTY", 2, 100, 123, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EINVAL);
	header(h, "OTEL_CTX", 1, 100, 123, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EPROTONOSUPPORT);
	header(h, "OTEL_CTX", 3, 100, 123, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EPROTONOSUPPORT);
	header(h, "OTEL_CTX", 2, 100, 0, 0x1020); /* being updated */
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EAGAIN);
	header(h, "OTEL_CTX", 2, PROCCTX_MAX_PAYLOAD + 1, 1, 0x1020);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EFBIG);
	header(h, "OTEL_CTX", 2, 0x1000, 1, 0x1020); /* in the mapping, ends past it */
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EINVAL);
	header(h, "OTEL_CTX", 2, 100, 1, 0);
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EINVAL);
	header(h, "OTEL_CTX", 2, 100, 1, UINT64_MAX - 10); /* wraps */
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), -EINVAL);
	header(h, "OTEL_CTX", 2, 100, 1, 0x9000); /* elsewhere: allowed */
	CHECK_EQ_U64(procctx__parse_header(h, sizeof(h), 0x1000, 0x2000, &out), 0);
}

TEST(mapping_names)
{
	struct procmaps_entry e = {.start = 0x1000, .end = 0x2000, .perms = PROCMAPS_READ};

	e.path = "[anon:OTEL_CTX]";
	CHECK(procctx__is_mapping(&e));
	e.path = "[anon_shmem:OTEL_CTX]";
	CHECK(procctx__is_mapping(&e));
	e.path = "/memfd:OTEL_CTX";
	e.deleted = true;
	CHECK(procctx__is_mapping(&e));
	e.path = "/memfd:OTEL_CTX2";
	CHECK(!procctx__is_mapping(&e));
	e.path = "[anon:OTEL]";
	CHECK(!procctx__is_mapping(&e));
	e.path = "[anon:OTEL_CTX]";
	e.perms = 0;
	CHECK(!procctx__is_mapping(&e));
	e.perms = PROCMAPS_READ;
	e.end = e.start + 16;
	CHECK(!procctx__is_mapping(&e));
}

/* A fake /proc/PID: maps naming an OTEL_CTX mapping at 0x10000 and a sparse
 * mem file with the header there and the payload at @payload_at. */
static int make_proc(const char *root, int pid, const unsigned char *payload, size_t len,
		     __u64 payload_at, __u64 ts, const char *sig)
{
	char path[512];
	unsigned char h[PROCCTX_HEADER_SIZE];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "mkdir -p %s/%d", root, pid);
	if (system(path))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "00010000-00011000 rw-s 00000000 00:01 1234 /memfd:OTEL_CTX (deleted)\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/mem", root, pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	header(h, sig, 2, (__u32)len, ts, payload_at);
	if (pwrite(fd, h, sizeof(h), 0x10000) != (ssize_t)sizeof(h) ||
	    (len && pwrite(fd, payload, len, (off_t)payload_at) != (ssize_t)len)) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

TEST(read_protocol_and_symbolizer)
{
	static const char *const k2[] = {"service.name"}, *const v2[] = {"cart"};
	struct kvs a = {K, V, 4}, b = {k2, v2, 1};
	char root[] = "/tmp/procctx_testXXXXXX", path[600];
	unsigned char buf[1024];
	const struct profile_process_desc *d;
	struct symbolizer_stats st;
	struct symbolizer *s = NULL;
	struct procctx c;
	size_t len = encode_ctx(&a, buf, sizeof(buf));
	int fd;

	CHECK(mkdtemp(root));
	CHECK(!make_proc(root, 100, buf, len, 0x10020, 555, "OTEL_CTX"));
	/* Payload pointing at memory that does not exist (past EOF: EIO-like). */
	CHECK(!make_proc(root, 101, buf, 0, 0x7000000000, 555, "OTEL_CTX"));
	snprintf(path, sizeof(path), "%s/101/mem", root);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	put(buf + 900, 64, 4);
	CHECK(pwrite(fd, buf + 900, 4, 0x10000 + 12) == 4); /* payload_size 64 */
	close(fd);
	CHECK(!make_proc(root, 102, buf, len, 0x10020, 555, "BAD_SIGN"));

	snprintf(path, sizeof(path), "%s/100/mem", root);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ_U64(procctx__read(fd, 0x10000, 0x11000, &c), 0);
	CHECK_EQ_U64(c.published_at_ns, 555);
	CHECK_EQ_U64(c.n, 4);
	CHECK_EQ_U64(procctx__published_at(fd, 0x10000, 0x11000), 555);
	procctx__clear(&c);
	close(fd);
	snprintf(path, sizeof(path), "%s/101/mem", root);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ_U64(procctx__read(fd, 0x10000, 0x11000, &c), -EIO);
	close(fd);

	s = symbolizer__new(root);
	CHECK(s);
	symbolizer__add_process(s, 100);
	symbolizer__add_process(s, 101);
	symbolizer__add_process(s, 102);
	d = symbolizer__process(s, 100);
	CHECK(d);
	CHECK_EQ_U64(d->nattrs, 4);
	CHECK_STR(d->attrs[0].key, "service.name");
	CHECK_STR(d->attrs[0].value, "checkout");
	CHECK_EQ_U64(symbolizer__process(s, 101)->nattrs, 0);
	CHECK_EQ_U64(symbolizer__process(s, 102)->nattrs, 0);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.process_contexts, 1);
	CHECK_EQ_U64(st.process_context_errors, 2); /* 101's pointer, 102's signature */
	symbolizer__refresh_contexts(s); /* broken ones are not retried */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.process_context_errors, 2);

	/* An update (new timestamp) is picked up by refresh; the old desc
	 * attributes stay valid. */
	len = encode_ctx(&b, buf, sizeof(buf));
	CHECK(!make_proc(root, 100, buf, len, 0x10100, 777, "OTEL_CTX"));
	symbolizer__refresh_contexts(s);
	CHECK_STR(d->attrs[0].value, "cart");
	CHECK_EQ_U64(d->nattrs, 1);
	symbolizer__refresh_contexts(s); /* unchanged: no re-read */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.process_contexts, 2);
	symbolizer__free(s);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(!system(path));
}

int main(void)
{
	RUN(decode_nanopb_payload);
	RUN(decode_malformed);
	RUN(key_map);
	RUN(header_checks);
	RUN(mapping_names);
	RUN(read_protocol_and_symbolizer);
	return TEST_DONE();
}
