// waits.js - the main thread sleeps in nap() (Atomics.wait, a blocking
// futex) between short spins in spin(). Prints "ready", runs argv[2] s.
'use strict';

const cell = new Int32Array(new SharedArrayBuffer(4));

function nap(ms) {
  Atomics.wait(cell, 0, 0, ms);
}

function spin(ms) {
  const end = Date.now() + ms;
  let s = 0;
  while (Date.now() < end) s++;
  return s;
}

const stop = Date.now() + Number(process.argv[2] || 10) * 1000;
process.stdout.write('ready ' + process.pid + '\n');
while (Date.now() < stop) {
  nap(20);
  spin(1);
}
