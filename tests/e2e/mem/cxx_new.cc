// cxx_new.cc - C++ allocations through operator new (libstdc++'s calls
// malloc), for test_memory.py: 60 % of the bytes from make_big (kept), 40 %
// from make_small (freed). Prints the truth as one JSON line at exit.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

struct Small {
	char payload[200];
};

__attribute__((noinline, noipa)) static char *make_big()
{
	char *p = new char[16384];
	p[1] = 1; // not a tail call
	return p;
}

__attribute__((noinline, noipa)) static Small *make_small()
{
	Small *s = new Small();
	s->payload[1] = 1;
	return s;
}

int main(int argc, char **argv)
{
	unsigned long long total = (argc > 1 ? strtoull(argv[1], nullptr, 10) : 100) << 20;
	size_t nbig = total * 6 / 10 / 16384, nsmall = total * 4 / 10 / sizeof(Small);
	std::vector<char *> kept;

	kept.reserve(nbig);
	usleep(argc > 2 ? atoi(argv[2]) * 1000 : 500000);
	for (size_t i = 0; i < nbig; i++)
		kept.push_back(make_big());
	for (size_t i = 0; i < nsmall; i++)
		delete make_small();
	std::printf("{\"big_bytes\": %llu, \"small_bytes\": %llu, \"kept_bytes\": %llu}\n",
		    (unsigned long long)nbig * 16384, (unsigned long long)nsmall * sizeof(Small),
		    (unsigned long long)nbig * 16384);
	std::fflush(stdout);
	return 0;
}
