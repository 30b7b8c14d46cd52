// cxxwork.cpp - a C++ workload whose hot function has a mangled name:
// shop::Basket<long>::checksum() const (_ZNK4shop6BasketIlE8checksumEv).
// Prints "ready PID" once running; runs until killed.
#include <cstdio>
#include <unistd.h>
#include <vector>

namespace shop
{
template <typename T> class Basket {
    public:
	explicit Basket(size_t n) : items(n)
	{
		for (size_t i = 0; i < n; i++)
			items[i] = static_cast<T>(i * 7 + 1);
	}
	__attribute__((noinline)) T checksum() const
	{
		T h = 0;
		for (int r = 0; r < 200; r++)
			for (T v : items)
				h = h * 31 + (v ^ r);
		return h;
	}

    private:
	std::vector<T> items;
};
} // namespace shop

static volatile long sink;

int main()
{
	shop::Basket<long> b(4096);

	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		sink = b.checksum();
}
