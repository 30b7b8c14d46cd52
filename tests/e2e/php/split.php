<?php
// split.php - three PHP functions sharing the CPU as 50/30/20 of each
// round (timed by the process's CPU clock): hot() and interp() are
// functions, Worker::method() a class method. Prints "ready PID" once
// running, then runs for argv[1] seconds.

function cpu_ms()
{
    $u = getrusage();
    return ($u['ru_utime.tv_sec'] + $u['ru_stime.tv_sec']) * 1000.0 +
        ($u['ru_utime.tv_usec'] + $u['ru_stime.tv_usec']) / 1000.0;
}

function hot($ms)
{
    $end = cpu_ms() + $ms;
    $s = 0;
    while (cpu_ms() < $end) {
        for ($i = 0; $i < 20000; $i++) {
            $s = ($s + $i * $i) % 1000003;
        }
    }
    return $s;
}

function interp($ms, $v)
{
    $end = cpu_ms() + $ms;
    $s = 0;
    while (cpu_ms() < $end) {
        for ($i = 0; $i < 5000; $i++) {
            $s = strlen($v . $i) + $s % 7919;
        }
    }
    return $s;
}

class Worker
{
    private $acc = 0;

    public function method($ms)
    {
        $end = cpu_ms() + $ms;
        while (cpu_ms() < $end) {
            for ($i = 0; $i < 20000; $i++) {
                $this->acc = ($this->acc * 31 + $i) % 1000003;
            }
        }
        return $this->acc;
    }
}

$secs = (float)($argv[1] ?? 10);
$w = new Worker();
$stop = microtime(true) + $secs;
$x = 0;
$k = 0;
while (microtime(true) < $stop) {
    $x += hot(25);
    $x += interp(15, 'v');
    $x += $w->method(10);
    if (++$k == 5) {
        echo 'ready ', getmypid(), "\n";
        flush();
    }
}
echo $x > 0 ? "done\n" : "done.\n";
