// JavaWork.java - three Java methods sharing a thread's CPU as 50/30/20 of
// each round (timed by the thread's CPU clock): hot() makes a bimorphic
// virtual call, inlined() calls mix(), small enough to be inlined, which
// calls big(), too big to be; plain() is a plain loop. Each is interpreted
// at first, then compiled (C1, then C2). The worker thread is
// "javawork-worker"; a thread "javawork-napper-with-a-long-name" (longer
// than a kernel thread name) sleeps 20 ms at a time in nap() (off-CPU
// waits). Prints "ready PID" once warm, then runs for args[0]
// seconds in all, and at the end "work N cpu_ms M": the inner loops' passes
// since "ready" and the worker's CPU time meanwhile (a benchmark's
// throughput: a profiler's time in the thread's interrupts counts as its
// CPU time, so N / M falls with it whatever CPU the thread gets).
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class JavaWork {
    interface Shape { long area(long x); }

    static final class Square implements Shape {
        public long area(long x) { return x * x + (x >>> 3); }
    }

    static final class Circle implements Shape {
        public long area(long x) { return 3 * x * x + 7; }
    }

    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;
    static long passes;

    static long cpuNs() {
        return MX.getCurrentThreadCpuTime();
    }

    static long hot(Shape[] shapes, long ms) {
        long end = cpuNs() + ms * 1000000L, s = 0;
        while (cpuNs() < end) {
            for (int i = 0; i < 20000; i++) s += shapes[i & 1].area(s + i);
            passes++;
        }
        return s;
    }

    static long big(long a, int b) {
        a = (a ^ (a >>> 7)) * 31 + b; b += (int) (a & 255);
        a = (a ^ (a >>> 8)) * 33 + b; b += (int) (a & 256);
        a = (a ^ (a >>> 9)) * 35 + b; b += (int) (a & 257);
        a = (a ^ (a >>> 10)) * 37 + b; b += (int) (a & 258);
        a = (a ^ (a >>> 11)) * 39 + b; b += (int) (a & 259);
        a = (a ^ (a >>> 12)) * 41 + b; b += (int) (a & 260);
        a = (a ^ (a >>> 13)) * 43 + b; b += (int) (a & 261);
        a = (a ^ (a >>> 14)) * 45 + b; b += (int) (a & 262);
        a = (a ^ (a >>> 15)) * 47 + b; b += (int) (a & 263);
        a = (a ^ (a >>> 16)) * 49 + b; b += (int) (a & 264);
        a = (a ^ (a >>> 17)) * 51 + b; b += (int) (a & 265);
        a = (a ^ (a >>> 18)) * 53 + b; b += (int) (a & 266);
        a = (a ^ (a >>> 19)) * 55 + b; b += (int) (a & 267);
        a = (a ^ (a >>> 7)) * 57 + b; b += (int) (a & 268);
        a = (a ^ (a >>> 8)) * 59 + b; b += (int) (a & 269);
        a = (a ^ (a >>> 9)) * 61 + b; b += (int) (a & 270);
        a = (a ^ (a >>> 10)) * 63 + b; b += (int) (a & 271);
        a = (a ^ (a >>> 11)) * 65 + b; b += (int) (a & 272);
        a = (a ^ (a >>> 12)) * 67 + b; b += (int) (a & 273);
        a = (a ^ (a >>> 13)) * 69 + b; b += (int) (a & 274);
        a = (a ^ (a >>> 14)) * 71 + b; b += (int) (a & 275);
        a = (a ^ (a >>> 15)) * 73 + b; b += (int) (a & 276);
        a = (a ^ (a >>> 16)) * 75 + b; b += (int) (a & 277);
        a = (a ^ (a >>> 17)) * 77 + b; b += (int) (a & 278);
        a = (a ^ (a >>> 18)) * 79 + b; b += (int) (a & 279);
        a = (a ^ (a >>> 19)) * 81 + b; b += (int) (a & 280);
        a = (a ^ (a >>> 7)) * 83 + b; b += (int) (a & 281);
        a = (a ^ (a >>> 8)) * 85 + b; b += (int) (a & 282);
        a = (a ^ (a >>> 9)) * 87 + b; b += (int) (a & 283);
        a = (a ^ (a >>> 10)) * 89 + b; b += (int) (a & 284);
        a = (a ^ (a >>> 11)) * 91 + b; b += (int) (a & 285);
        a = (a ^ (a >>> 12)) * 93 + b; b += (int) (a & 286);
        a = (a ^ (a >>> 13)) * 95 + b; b += (int) (a & 287);
        a = (a ^ (a >>> 14)) * 97 + b; b += (int) (a & 288);
        a = (a ^ (a >>> 15)) * 99 + b; b += (int) (a & 289);
        a = (a ^ (a >>> 16)) * 101 + b; b += (int) (a & 290);
        a = (a ^ (a >>> 17)) * 103 + b; b += (int) (a & 291);
        a = (a ^ (a >>> 18)) * 105 + b; b += (int) (a & 292);
        a = (a ^ (a >>> 19)) * 107 + b; b += (int) (a & 293);
        a = (a ^ (a >>> 7)) * 109 + b; b += (int) (a & 294);
        return a + b;
    }

    static long mix(long a, int i) {
        return big(a, i) * 31 + i;
    }

    static long inlined(long ms) {
        long end = cpuNs() + ms * 1000000L, s = 1;
        while (cpuNs() < end) {
            for (int i = 0; i < 2000; i++) s = mix(s, i);
            passes++;
        }
        return s;
    }

    static long plain(long ms) {
        long end = cpuNs() + ms * 1000000L, s = 1;
        while (cpuNs() < end) {
            for (int i = 0; i < 20000; i++) s = (s ^ (s >>> 7)) * 31 + i;
            passes++;
        }
        return s;
    }

    static void rounds(long secs) {
        Shape[] shapes = { new Square(), new Circle() };
        long stop = System.nanoTime() + secs * 1000000000L, ready = 0, cpu0 = 0;
        for (int k = 0; System.nanoTime() < stop; k++) {
            sink += hot(shapes, 25);
            sink += inlined(15);
            sink += plain(10);
            if (k == 40) {
                ready = passes;
                cpu0 = cpuNs();
                System.out.println("ready " + ProcessHandle.current().pid());
                System.out.flush();
            }
        }
        System.out.println("work " + (passes - ready) + " cpu_ms " + (cpuNs() - cpu0) / 1000000);
    }

    static void nap() throws InterruptedException {
        Thread.sleep(20);
    }

    public static void main(String[] args) throws Exception {
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 10;
        Thread n = new Thread(() -> {
            try {
                for (;;) nap();
            } catch (InterruptedException e) {
            }
        }, "javawork-napper-with-a-long-name");
        n.setDaemon(true);
        n.start();
        Thread t = new Thread(() -> rounds(secs), "javawork-worker");
        t.start();
        t.join();
    }
}
