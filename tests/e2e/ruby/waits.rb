# waits.rb - a Ruby process that mostly waits: nap sleeps 20 ms at a time,
# spin burns a little CPU between naps. Prints "ready PID", then runs for
# ARGV[0] seconds.

def nap
  sleep 0.02
end

def spin
  s = 0
  i = 0
  while i < 200000
    s += i
    i += 1
  end
  s
end

secs = (ARGV[0] || 5).to_f
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + secs
$stdout.sync = true
puts "ready #{Process.pid}"
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  nap
  spin
end
