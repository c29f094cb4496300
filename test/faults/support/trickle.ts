import net from "node:net";

// Never finished: a request line and headers longer than any deadline lets the trickle send.
const PARTIAL_REQUEST = `GET /api/v1/tasks/${"t".repeat(200)} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${"s".repeat(4000)}`;
const OPEN_BATCH = 100;

interface TrickledSocket {
  socket: net.Socket;
  openedAt: number;
  sent: number;
  /** Closed by the test at the end, not by the server. */
  byTest: boolean;
}

interface TrickleReport {
  /** Sockets opened in all (replacements included). */
  opened: number;
  /** The most open at once. */
  peakOpen: number;
  /** Sockets the server closed, with how long each had been open. */
  closedByServerMs: number[];
  /** How many of those got Node's 408 before the close. */
  answered408: number;
  /** Sockets still open when the trickle was stopped (closed by the test). */
  leftOpen: number;
}

export interface Trickle {
  /** Stops replacing closed sockets; waits up to `waitMs` for the server to close the rest, then closes what is left. */
  stop(waitMs: number): Promise<TrickleReport>;
}

/**
 * `count` sockets to 127.0.0.1:`port`, each sending one byte of a request that never ends every
 * `byteEveryMs` (spread evenly over time). A socket the server closes is replaced until `stop`, so
 * `count` trickle at once throughout.
 */
export async function startTrickle(port: number, count: number, byteEveryMs: number): Promise<Trickle> {
  const open = new Set<TrickledSocket>();
  const report: TrickleReport = { opened: 0, peakOpen: 0, closedByServerMs: [], answered408: 0, leftOpen: 0 };
  let replacing = true;
  let allClosed: (() => void) | undefined;

  const openOne = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const entry: TrickledSocket = { socket: net.connect(port, "127.0.0.1"), openedAt: Date.now(), sent: 0, byTest: false };
      entry.socket.once("connect", () => {
        open.add(entry);
        report.opened++;
        report.peakOpen = Math.max(report.peakOpen, open.size);
        resolve();
      });
      entry.socket.on("data", (chunk: Buffer) => {
        if (chunk.toString("latin1").startsWith("HTTP/1.1 408")) report.answered408++;
      });
      entry.socket.on("error", (error) => {
        if (!open.has(entry)) reject(error);
      });
      entry.socket.once("close", () => {
        if (!open.delete(entry)) return;
        if (!entry.byTest) report.closedByServerMs.push(Date.now() - entry.openedAt);
        if (replacing) void openOne().catch(() => {});
        if (open.size === 0) allClosed?.();
      });
    });

  for (let i = 0; i < count; i += OPEN_BATCH) await Promise.all(Array.from({ length: Math.min(OPEN_BATCH, count - i) }, openOne));

  // One tick every 20 ms writes to the slice of sockets due, so the bytes flow evenly.
  const TICK_MS = 20;
  let turn = 0;
  const ticker = setInterval(() => {
    const slices = Math.max(1, Math.round(byteEveryMs / TICK_MS));
    let i = 0;
    for (const entry of open) {
      if (i++ % slices !== turn % slices || entry.socket.destroyed) continue;
      entry.socket.write(PARTIAL_REQUEST[entry.sent % PARTIAL_REQUEST.length]!);
      entry.sent++;
    }
    turn++;
  }, TICK_MS);

  return {
    async stop(waitMs) {
      replacing = false;
      if (open.size > 0) {
        await new Promise<void>((resolve) => {
          allClosed = resolve;
          setTimeout(resolve, waitMs).unref();
        });
      }
      clearInterval(ticker);
      report.leftOpen = open.size;
      for (const entry of open) {
        entry.byTest = true;
        entry.socket.destroy();
      }
      return report;
    },
  };
}

/** A keep-alive socket to 127.0.0.1:`port` that has had one complete request answered (or the error that stopped it). */
export async function connectAndGet(port: number, pathname: string): Promise<{ socket: net.Socket; status: number }> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return { socket, status: await getOn(socket, pathname) };
}

/** Sends one GET on an open socket and resolves with the answer's status; rejects when the socket closes first. */
export function getOn(socket: net.Socket, pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = "";
    const onData = (chunk: Buffer) => {
      received += chunk.toString("latin1");
      // The answers asked for here are small: the whole answer is there once its headers end and the body is in.
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      cleanup();
      resolve(Number(received.slice(9, 12)));
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`socket closed before an answer${received ? ` (got ${JSON.stringify(received.slice(0, 40))})` : ""}`));
    };
    const onError = () => {};
    const cleanup = () => {
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", onError);
    };
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.on("error", onError);
    socket.write(`GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
  });
}
