# split.pl - three Perl subs sharing the CPU as 50/30/20 of each round
# (timed by the process's CPU clock): hot() and warm() are plain subs,
# Worker::method() a method of a package. Prints "ready PID" at once,
# then runs for $ARGV[0] seconds (default 10).
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_PROCESS_CPUTIME_ID CLOCK_MONOTONIC);

sub cpu_ms { return clock_gettime(CLOCK_PROCESS_CPUTIME_ID) * 1000; }

sub hot {
    my ($ms) = @_;
    my $end = cpu_ms() + $ms;
    my $s = 0;
    while (cpu_ms() < $end) {
        for my $i (1 .. 2000) { $s = ($s + $i * $i) % 1000003; }
    }
    return $s;
}

sub warm {
    my ($ms) = @_;
    my $end = cpu_ms() + $ms;
    my $s = '';
    while (cpu_ms() < $end) {
        for my $i (1 .. 500) { $s .= chr(65 + $i % 26); }
        $s = length($s) > 4096 ? '' : $s;
    }
    return length($s);
}

package Worker;

sub new { return bless { acc => 0 }, shift; }

sub method {
    my ($self, $ms) = @_;
    my $end = main::cpu_ms() + $ms;
    while (main::cpu_ms() < $end) {
        for my $i (1 .. 2000) { $self->{acc} = ($self->{acc} * 31 + $i) % 1000003; }
    }
    return $self->{acc};
}

package main;

sub run {
    my ($secs) = @_;
    my $w = Worker->new;
    my $stop = clock_gettime(CLOCK_MONOTONIC) + $secs;
    my $x = 0;
    while (clock_gettime(CLOCK_MONOTONIC) < $stop) {
        $x += hot(25);
        $x += warm(15);
        $x += $w->method(10);
    }
    return $x;
}

$| = 1;
print "ready $$\n";
run($ARGV[0] // 10);
