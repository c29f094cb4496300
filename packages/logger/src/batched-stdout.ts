import Transport, { type TransportStreamOptions } from "winston-transport";

// winston's formats leave the finished line under this symbol (triple-beam's MESSAGE).
const MESSAGE = Symbol.for("message");
// Short enough that `docker logs -f` still reads as live; long enough that a busy gateway writes
// one chunk for hundreds of request lines.
const FLUSH_MS = 25;
const FLUSH_BYTES = 64 * 1024;

interface LineSink {
  write(chunk: string): unknown;
}

const pending = new Set<BatchedStdout>();
let exitHook = false;

/**
 * A winston transport that gathers lines and writes them in one chunk per FLUSH_MS (sooner past
 * FLUSH_BYTES), on a timer, never from the log call. Stdout to a file or a terminal is written
 * synchronously by Node, so the Console transport made one blocking write per request line.
 * Whatever is still gathered when the process exits (process.exit on SIGTERM's drain, a start-up
 * failure, an uncaught error) is written synchronously on `exit`: no line is lost. A SIGKILL loses
 * at most the last FLUSH_MS of lines.
 *
 * Stdout on a pipe (a container runtime's log collector) is made blocking too: Node writes a pipe
 * at once only while it has room, and queues the rest in the process, where an exit drops it (a
 * 5,000-line burst before process.exit lost hundreds of lines whenever the reader lagged). Blocking,
 * a collector slower than the log rate slows the process to its pace, once per chunk, as Docker's
 * default blocking log mode does, instead of growing a queue and losing its tail.
 */
export class BatchedStdout extends Transport {
  private lines: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    options: TransportStreamOptions = {},
    private readonly sink: LineSink = process.stdout,
  ) {
    super(options);
    if (!exitHook) {
      exitHook = true;
      process.on("exit", flushAll);
      blockOnFullPipe(process.stdout);
    }
  }

  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    const line = `${String(info[MESSAGE])}\n`;
    this.lines.push(line);
    this.bytes += line.length;
    pending.add(this);
    if (this.bytes >= FLUSH_BYTES) this.flush();
    // Unref'd: a process with nothing else to do exits, and `exit` writes what is left.
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
    callback();
  }

  /** Writes every gathered line now, in one chunk. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    pending.delete(this);
    if (this.lines.length === 0) return;
    const chunk = this.lines.join("");
    this.lines = [];
    this.bytes = 0;
    this.sink.write(chunk);
  }

  override close(): void {
    this.flush();
  }
}

function flushAll(): void {
  for (const transport of pending) transport.flush();
}

/** A pipe's handle written in blocking mode (files and terminals are already); nothing for other streams. */
function blockOnFullPipe(stream: NodeJS.WriteStream): void {
  const internals = stream as { _type?: string; _handle?: { setBlocking?: (blocking: boolean) => number } };
  if (internals._type === "pipe") internals._handle?.setBlocking?.(true);
}
