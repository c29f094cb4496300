import cluster from "node:cluster";
import { listenForKeyRevocations, type KeyRevocationListener } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { KeyCache } from "./key-cache.ts";

/**
 * This process's key cache follows its revocation listener (@gen/db key-revocations.ts): on while
 * it LISTENs, emptied at every (re)connect, off while it is not connected, and each notice drops
 * its key. A revocation committed anywhere reaches every process this way, whatever else is down.
 */
export function watchKeyRevocations(databaseUrl: string, keyCache: KeyCache, logger: Logger): KeyRevocationListener {
  let lostAt: number | undefined;
  return listenForKeyRevocations(
    databaseUrl,
    {
      listening() {
        keyCache.resume();
        if (lostAt !== undefined) logger.info("key revocation listener connected again: API key cache on", { off_ms: Date.now() - lostAt });
        lostAt = undefined;
      },
      lost(error) {
        keyCache.suspend();
        lostAt = Date.now();
        logger.warn("key revocation listener not connected: API keys are read from PostgreSQL on every request until it is", { error: error.message });
      },
      revoked: (keyHash) => keyCache.revoke(keyHash),
    },
    // Names the connection in pg_stat_activity, one per gateway process.
    { applicationName: `gateway key revocations${cluster.isWorker ? ` (pid ${process.pid})` : ""}` },
  );
}
