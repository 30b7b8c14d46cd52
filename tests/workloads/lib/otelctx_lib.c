/* otelctx_lib.c - an SDK-like shared library that owns the OpenTelemetry
 * thread-context variable (OTEP 4947), for threadctx_writer's library
 * variants: built as libotelctx_desc.so (TLSDESC, -mtls-dialect=gnu2, the
 * OTEP's recommended model) and libotelctx_gd.so (legacy general dynamic),
 * linked at start or dlopen()ed, so a reader meets every way a loader
 * places a library's TLS: static TLS, glibc's static surplus for dlopen,
 * and the dynamic thread vector. */

/* The variable readers look up in .dynsym (STT_TLS). */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

/* Attach @rec (NULL: detach) to the calling thread. */
__attribute__((visibility("default"))) void otelctx_set(void *rec)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = rec;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Where the calling thread's variable is, for tests. */
__attribute__((visibility("default"))) void *otelctx_addr(void)
{
	return &otel_thread_ctx_v1;
}
