<?php
// waits.php - a PHP function that sleeps: nap() waits in usleep() most of
// the time, busy() spins a few milliseconds between naps (so a capture has
// CPU samples too). Prints "ready PID", then runs for argv[1] seconds.

function nap()
{
    usleep(20000);
}

function busy()
{
    $s = 0;
    for ($i = 0; $i < 200000; $i++) {
        $s += $i;
    }
    return $s;
}

$secs = (float)($argv[1] ?? 10);
$stop = microtime(true) + $secs;
echo 'ready ', getmypid(), "\n";
flush();
while (microtime(true) < $stop) {
    nap();
    busy();
}
