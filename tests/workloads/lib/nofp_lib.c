/* nofp_lib.c - the shared library of the no-frame-pointer workloads
 * (libnofp.so, built -O2 -fomit-frame-pointer): it only loops and calls
 * back into the main binary, so every sample taken in the callback has
 * this library's frames between the callback and main. */
#define NOINLINE __attribute__((noinline))

typedef void (*nofp_cb)(long);

NOINLINE void nofp_lib_step(nofp_cb cb, long unit)
{
	cb(unit);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

NOINLINE void nofp_lib_apply(nofp_cb cb, long units)
{
	for (long u = 0; u < units; u++)
		nofp_lib_step(cb, u);
	__asm__ volatile("" ::: "memory");
}
