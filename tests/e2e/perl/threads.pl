# threads.pl - two Perl threads (ithreads: each its own interpreter) busy in
# subs of their own: the main thread in main::mainwork(), a worker thread in
# Worker::threadwork(). Prints "ready PID" once the worker runs, then runs
# for $ARGV[0] seconds (default 10).
use strict;
use warnings;
use threads;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

sub spin { my $s = 0; $s = ($s + $_ * $_) % 1000003 for 1 .. 5000; return $s; }

sub mainwork {
    my ($stop) = @_;
    my $x = 0;
    $x += spin() while clock_gettime(CLOCK_MONOTONIC) < $stop;
    return $x;
}

package Worker;

sub threadwork {
    my ($stop) = @_;
    my $x = 0;
    $x += main::spin() while main::clock_gettime(main::CLOCK_MONOTONIC()) < $stop;
    return $x;
}

package main;

my $stop = clock_gettime(CLOCK_MONOTONIC) + ($ARGV[0] // 10);
my $t = threads->create(\&Worker::threadwork, $stop);
$| = 1;
print "ready $$\n";
mainwork($stop);
$t->join;
