/* offcpu_wait.c - ground truth for off-CPU profiles: threads that block in
 * known functions, each timing its own waits.
 *
 *   wait_sleep   nanosleep()
 *   wait_pipe    read() of a pipe another thread feeds
 *   wait_mutex   pthread_mutex_lock() of a mutex another thread holds
 *   wait_fsync   fdatasync() of 1 MiB just written (disk: uninterruptible)
 *   burn         a CPU-bound thread (should show almost no off-CPU time)
 *   wait_churn   with -c: nanosleep() of 300 us in short-lived threads, one
 *                after the other (thread IDs used once, slots of exited
 *                threads, IDs that share a slot with the threads above)
 *
 * No thread is pinned, so with more threads than CPUs wake-ups migrate.
 * Each wait is timed as wall time less the thread's own CPU time inside it
 * (CLOCK_THREAD_CPUTIME_ID): what fdatasync() spends on the CPU (page
 * writeback, the journal) is on-CPU time, not blocked time, and on a busy
 * disk it is a tenth of the call or more.
 * Usage: offcpu_wait -g GOFILE -d SECONDS -o TRUTH.json -f DATAFILE [-c]
 * Prints "ready PID", waits until GOFILE exists, runs SECONDS, writes
 * {"wait_sleep": s, ..., "burn_cpu": s} (seconds blocked in each function,
 * and the burner's CPU time) to TRUTH.json, prints "done", then waits to be
 * killed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile int stop;
static double t_sleep, t_pipe, t_mutex, t_fsync, t_burn_cpu, t_churn;
static long n_churn;
static int pipefd[2];
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static const char *datafile;

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds off the CPU so far: wall time less this thread's CPU time. */
static double off_cpu_clock(void)
{
	return now(CLOCK_MONOTONIC) - now(CLOCK_THREAD_CPUTIME_ID);
}

static void nap(long ns)
{
	struct timespec ts = {0, ns};

	nanosleep(&ts, NULL);
}

NOINLINE static void wait_sleep(void)
{
	double t0 = off_cpu_clock();

	nap(8000000);
	t_sleep += off_cpu_clock() - t0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!stop)
		wait_sleep();
	return NULL;
}

NOINLINE static void feed_sleep(void)
{
	nap(8000000);
}

static void *feeder(void *arg)
{
	char c = 'x';

	(void)arg;
	while (!stop) {
		feed_sleep();
		if (write(pipefd[1], &c, 1) != 1)
			break;
	}
	close(pipefd[1]);
	return NULL;
}

NOINLINE static int wait_pipe(void)
{
	double t0 = off_cpu_clock();
	char c;
	ssize_t n = read(pipefd[0], &c, 1);

	t_pipe += off_cpu_clock() - t0;
	return n == 1;
}

static void *reader(void *arg)
{
	(void)arg;
	while (wait_pipe())
		;
	return NULL;
}

NOINLINE static void hold_sleep(void)
{
	nap(8000000);
}

NOINLINE static void idle_sleep(void)
{
	nap(3000000);
}

static void *holder(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&mtx);
		hold_sleep();
		pthread_mutex_unlock(&mtx);
		idle_sleep();
	}
	return NULL;
}

NOINLINE static void wait_mutex(void)
{
	double t0 = off_cpu_clock();

	pthread_mutex_lock(&mtx);
	t_mutex += off_cpu_clock() - t0;
	pthread_mutex_unlock(&mtx);
}

static void *waiter(void *arg)
{
	(void)arg;
	while (!stop) {
		wait_mutex();
		/* Let the holder take it again (a wait below the threshold). */
		nap(4000000);
	}
	return NULL;
}

NOINLINE static void wait_fsync(int fd)
{
	double t0 = off_cpu_clock();

	fdatasync(fd);
	t_fsync += off_cpu_clock() - t0;
}

static void *syncer(void *arg)
{
	static char buf[1 << 20];
	int fd = open(datafile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	(void)arg;
	if (fd < 0)
		return NULL;
	memset(buf, 'd', sizeof(buf));
	while (!stop)
		if (pwrite(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf))
			wait_fsync(fd);
	close(fd);
	unlink(datafile);
	return NULL;
}

NOINLINE static void burn(void)
{
	volatile unsigned long x = 0;
	double t0 = now(CLOCK_THREAD_CPUTIME_ID);

	while (!stop)
		for (int i = 0; i < 100000; i++)
			x += i;
	t_burn_cpu = now(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static void *burner(void *arg)
{
	(void)arg;
	burn();
	return NULL;
}

NOINLINE static void wait_churn(void)
{
	double t0 = off_cpu_clock();

	nap(300000);
	t_churn += off_cpu_clock() - t0;
}

static void *churn_one(void *arg)
{
	(void)arg;
	wait_churn();
	return NULL;
}

/* One short-lived thread after another (joined before the next starts, so
 * t_churn has one writer at a time). */
static void *churner(void *arg)
{
	pthread_t t;

	(void)arg;
	while (!stop) {
		if (pthread_create(&t, NULL, churn_one, NULL))
			break;
		pthread_join(t, NULL);
		n_churn++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = {sleeper, feeder, reader, holder, waiter, syncer, burner, churner};
	pthread_t th[sizeof(fns) / sizeof(fns[0])];
	size_t nfns = sizeof(fns) / sizeof(fns[0]) - 1; /* the churner with -c */
	const char *go = NULL, *out = NULL;
	double secs = 3;
	size_t i;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "g:d:o:f:c")) != -1) {
		if (c == 'g')
			go = optarg;
		else if (c == 'd')
			secs = atof(optarg);
		else if (c == 'o')
			out = optarg;
		else if (c == 'f')
			datafile = optarg;
		else if (c == 'c')
			nfns++;
		else
			return 2;
	}
	if (!go || !out || !datafile || pipe(pipefd))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (access(go, F_OK))
		nap(20000000);
	for (i = 0; i < nfns; i++)
		pthread_create(&th[i], NULL, fns[i], NULL);
	nap(0);
	{
		struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};

		nanosleep(&ts, NULL);
	}
	stop = 1;
	for (i = 0; i < nfns; i++)
		pthread_join(th[i], NULL);
	f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f,
		"{\"wait_sleep\": %.6f, \"wait_pipe\": %.6f, \"wait_mutex\": %.6f, "
		"\"wait_fsync\": %.6f, \"burn_cpu\": %.6f, \"wait_churn\": %.6f, "
		"\"churn_threads\": %ld}\n",
		t_sleep, t_pipe, t_mutex, t_fsync, t_burn_cpu, t_churn, n_churn);
	fclose(f);
	printf("done\n");
	fflush(stdout);
	pause();
	return 0;
}
