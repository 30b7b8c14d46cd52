# split.rb - three Ruby functions sharing the CPU as 50/30/20 of each round
# (timed by the process's CPU clock): hot and warm are methods of the
# top level, Worker#crunch a method of a class. Prints "ready PID" once
# running, then runs for ARGV[0] seconds.

def cpu_ms
  Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :float_millisecond)
end

def hot(ms)
  stop = cpu_ms + ms
  s = 0
  while cpu_ms < stop
    i = 0
    while i < 2000
      s = (s + i * i) % 1000003
      i += 1
    end
  end
  s
end

def warm(ms)
  stop = cpu_ms + ms
  s = 1
  while cpu_ms < stop
    i = 0
    while i < 2000
      s = (s * 7 + i) % 999983
      i += 1
    end
  end
  s
end

class Worker
  def initialize
    @acc = 0
  end

  def crunch(ms)
    stop = cpu_ms + ms
    while cpu_ms < stop
      i = 0
      while i < 2000
        @acc = (@acc * 31 + i) % 1000003
        i += 1
      end
    end
    @acc
  end
end

secs = (ARGV[0] || 10).to_f
w = Worker.new
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + secs
$stdout.sync = true
puts "ready #{Process.pid}"
x = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  x += hot(25)
  x += warm(15)
  x += w.crunch(10)
end
puts x if x < 0
