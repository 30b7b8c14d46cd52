# waits.pl - a Perl sub that sleeps: nap() waits in select() 20 ms at a
# time for $ARGV[0] seconds (default 5); busy() burns some CPU between, so
# the capture has CPU samples too.
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

sub nap { select(undef, undef, undef, 0.02); }

sub busy { my $s = 0; $s += $_ for 1 .. 200000; return $s; }

$| = 1;
print "ready $$\n";
my $stop = clock_gettime(CLOCK_MONOTONIC) + ($ARGV[0] // 5);
while (clock_gettime(CLOCK_MONOTONIC) < $stop) {
    nap();
    busy();
}
