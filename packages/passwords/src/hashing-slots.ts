// scrypt runs on libuv's thread pool (4 threads), which dns.lookup and file reads share. A burst of
// sign-ins must neither take every thread nor hold 128 MiB each: at most this many run at once per
// process, the rest wait their turn.
const SLOTS = 2;

let running = 0;
const waiting: (() => void)[] = [];

export async function inHashingSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter, so `running` never drops while one waits.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}
