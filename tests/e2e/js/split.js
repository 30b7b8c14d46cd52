// split.js - three JavaScript functions sharing the CPU as 50/30/20 of
// each round (timed by the process's CPU clock): hot() is optimized,
// interp() deoptimizes again and again, Worker.method() is a class method.
// Prints "ready" once warm, then runs for argv[2] seconds.
'use strict';

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function hot(ms) {
  const end = cpuMs() + ms;
  let s = 0;
  while (cpuMs() < end) {
    for (let i = 0; i < 20000; i++) s = (s + i * i) % 1000003;
  }
  return s;
}

// Called with values of changing types: its optimized code keeps being
// thrown away.
function interp(ms, v) {
  const end = cpuMs() + ms;
  let s = v;
  while (cpuMs() < end) {
    for (let i = 0; i < 2000; i++) s = s + (i & 1 ? v : i);
    if (typeof s === 'string') s = s.length;
  }
  return s;
}

class Worker {
  constructor() { this.acc = 0; }
  method(ms) {
    const end = cpuMs() + ms;
    while (cpuMs() < end) {
      for (let i = 0; i < 20000; i++) this.acc = (this.acc * 31 + i) % 1000003;
    }
    return this.acc;
  }
}

function main() {
  const secs = Number(process.argv[2] || 10);
  const w = new Worker();
  const kinds = [1, 1.5, 'x', {}, [1]];
  let k = 0, x = 0;
  const stop = Date.now() + secs * 1000;
  let ready = false;
  while (Date.now() < stop) {
    x += hot(25);
    x += Number(interp(15, kinds[k++ % kinds.length])) || 0;
    x += w.method(10);
    if (!ready && k > 20) {
      ready = true;
      process.stdout.write('ready ' + process.pid + '\n');
    }
  }
  return x;
}

main();
