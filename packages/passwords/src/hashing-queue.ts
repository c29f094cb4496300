// scrypt runs on libuv's thread pool (4 threads), which dns.lookup and file reads share. A burst of
// sign-ins must neither take every thread nor hold 128 MiB each: at most SLOTS run at once per
// process, and one per client, so a flood from one client (one address, one IPv6 /64) always
// leaves a slot to everyone else. Those waiting are bounded too, in all and per client, and served
// one client at a time in turn, so a flood neither delays another client by more than a hash nor
// queues minutes of work that its callers will have given up on.
const SLOTS = 2;
const MAX_RUNNING_PER_CLIENT = 1;
const MAX_WAITING = 16;
const MAX_WAITING_PER_CLIENT = 2;
// Until hashes have been timed: a few hundred milliseconds each (scrypt-params.ts).
const FIRST_GUESS_MS = 500;

/** The queue is full (in all, or for this client): refuse now, and say when to try again. */
export class HashingBusy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("password hashing: queue full");
    this.name = "HashingBusy";
  }
}

/** The caller's signal fired (its client went away) before the hash started: no hash was spent. */
export class HashingAbandoned extends Error {
  constructor() {
    super("password hashing: abandoned before it started");
    this.name = "HashingAbandoned";
  }
}

export interface HashingOptions {
  /**
   * Whose hash this is (a client's limit key): each client runs one hash at a time and waits in its
   * own line, served in turn. Unnamed (the admin CLI): one line, bounded in all only.
   */
  client?: string;
  /** Aborted (the client closed its connection): the hash is dropped if it has not started. */
  signal?: AbortSignal;
}

/** Hands the slot to a waiter. */
type Waiter = () => void;

export interface HashingStats {
  /** Hashes started since the process began (each one is real work). */
  started: number;
  running: number;
  waiting: number;
}

export class HashingQueue {
  private running = 0;
  private waiting = 0;
  private started = 0;
  private averageMs = FIRST_GUESS_MS;
  // One line per client; Map order is the turn: a client served goes to the back.
  private readonly lines = new Map<string | undefined, Waiter[]>();
  private readonly runningBy = new Map<string, number>();

  constructor(
    private readonly limits = {
      slots: SLOTS,
      maxRunningPerClient: MAX_RUNNING_PER_CLIENT,
      maxWaiting: MAX_WAITING,
      maxWaitingPerClient: MAX_WAITING_PER_CLIENT,
    },
  ) {}

  stats(): HashingStats {
    return { started: this.started, running: this.running, waiting: this.waiting };
  }

  async run<T>(work: () => Promise<T>, { client, signal }: HashingOptions = {}): Promise<T> {
    if (signal?.aborted) throw new HashingAbandoned();
    if (this.running < this.limits.slots && this.mayRun(client)) this.occupy(client);
    else await this.wait(client, signal);
    if (signal?.aborted) {
      this.release(client);
      throw new HashingAbandoned();
    }
    this.started++;
    const began = performance.now();
    try {
      return await work();
    } finally {
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - began);
      this.release(client);
    }
  }

  private mayRun(client: string | undefined): boolean {
    return client === undefined || (this.runningBy.get(client) ?? 0) < this.limits.maxRunningPerClient;
  }

  private occupy(client: string | undefined): void {
    this.running++;
    if (client !== undefined) this.runningBy.set(client, (this.runningBy.get(client) ?? 0) + 1);
  }

  private wait(client: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    const line = this.lines.get(client) ?? [];
    if (this.waiting >= this.limits.maxWaiting || (client !== undefined && line.length >= this.limits.maxWaitingPerClient)) {
      // Roughly when this client's line or the whole queue will have moved on.
      const ahead = Math.max(line.length, this.waiting / Math.max(1, this.lines.size)) + 1;
      throw new HashingBusy(Math.max(1, Math.ceil((this.averageMs * ahead) / 1000)));
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.remove(client, waiter);
        reject(new HashingAbandoned());
      };
      // The slot is taken for the waiter before it is woken (release), so no newcomer can take it.
      const waiter: Waiter = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      line.push(waiter);
      this.lines.set(client, line);
      this.waiting++;
    });
  }

  /** Free slots go to the first clients in turn that may run another hash. */
  private release(client: string | undefined): void {
    this.running--;
    if (client !== undefined) {
      const left = this.runningBy.get(client)! - 1;
      if (left === 0) this.runningBy.delete(client);
      else this.runningBy.set(client, left);
    }
    while (this.running < this.limits.slots) {
      if (!this.startNext()) break;
    }
  }

  private startNext(): boolean {
    for (const [client, line] of this.lines) {
      if (!this.mayRun(client)) continue;
      const waiter = line.shift()!;
      this.waiting--;
      this.lines.delete(client);
      if (line.length > 0) this.lines.set(client, line);
      this.occupy(client);
      waiter();
      return true;
    }
    return false;
  }

  private remove(client: string | undefined, waiter: Waiter): void {
    const line = this.lines.get(client);
    const index = line?.indexOf(waiter) ?? -1;
    if (index < 0) return;
    line!.splice(index, 1);
    this.waiting--;
    if (line!.length === 0) this.lines.delete(client);
  }
}

/** This process's queue: every hash of the process waits in it. */
export const hashingQueue = new HashingQueue();
