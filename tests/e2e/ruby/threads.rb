# threads.rb - two Ruby threads spinning in worker_loop while the main
# thread sleeps in main_wait. Prints "ready PID", then runs for ARGV[0]
# seconds.

def worker_loop(k)
  s = 0
  loop { s = (s + k) % 1000 }
end

def main_wait(secs)
  sleep secs
end

secs = (ARGV[0] || 10).to_f
2.times { |k| Thread.new { worker_loop(k + 1) } }
$stdout.sync = true
puts "ready #{Process.pid}"
main_wait(secs)
