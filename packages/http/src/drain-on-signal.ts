import type { Server } from "node:http";
import type { Logger } from "@gen/logger";

// Long enough for in-flight requests (the longest is a submission's database and Redis deadlines);
// past it the process exits anyway, so an orchestrator's stop never hangs on a stuck socket.
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * On SIGTERM or SIGINT: stop accepting, let in-flight requests finish, then `close` the stores and
 * exit 0 (1 if that takes longer than the grace period). One behaviour for every HTTP app.
 */
export function drainOnSignal(server: Server, name: string, logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  // A cluster child may get both a terminal's SIGINT and the primary's SIGTERM: drain once.
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${name} shutting down`, { signal });
    const force = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    server.close(async () => {
      await close();
      clearTimeout(force);
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}
