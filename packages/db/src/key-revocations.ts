import pg from "pg";
import { behindPgbouncer } from "./create-database.ts";

// The channel the api_keys triggers send a key's hash on when it stops being valid (revoked, its
// hash changed, deleted): migration 20261127120000_api_key_revocation_notify. The message goes
// out at the commit of the revoking transaction, whoever revoked.
const CHANNEL = "api_key_revoked";

// A silently dead connection (a partition with no reset) delivers nothing and reports nothing: a
// round trip every HEARTBEAT_MS, answered within HEARTBEAT_TIMEOUT_MS, tells it from a quiet one.
const HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 2000;
const CONNECT_TIMEOUT_MS = 2000;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;

interface KeyRevocationEvents {
  /** LISTEN is in effect (at start or again): every revocation committed from now on is reported. Any before may have been missed. */
  listening(): void;
  /** The connection is not up (lost, or a connect failed): revocations may go unreported until `listening`. */
  lost(error: Error): void;
  /** A key that was valid is not any more (its SHA-256). */
  revoked(keyHash: string): void;
}

export interface KeyRevocationListener {
  /** True between `listening` and `lost`. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/**
 * One PostgreSQL connection of its own (not from the pool: LISTEN belongs to a session, and a
 * pooled connection is handed to other statements) that LISTENs for revoked API keys, reconnecting
 * with back-off (100 ms doubling to 5 s) for as long as the process runs. A URL with
 * `pgbouncer=true` names a transaction-mode pooler, which does not carry LISTEN: the listener
 * never connects and reports `lost` once.
 */
export function listenForKeyRevocations(url: string, events: KeyRevocationEvents, options: { applicationName?: string } = {}): KeyRevocationListener {
  let current: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (run: () => void, ms: number) => {
    clearTimeout(timer);
    // Never what keeps a process alive: the gateway's server does, and close() stops it.
    timer = closed ? undefined : setTimeout(run, ms).unref();
  };

  /** `client` is gone or unusable: report it once, then connect again after a pause. */
  const drop = (client: pg.Client, error: Error) => {
    if (client !== current) return;
    current = undefined;
    client.end().catch(() => undefined);
    const wasListening = listening;
    listening = false;
    if (wasListening || failures === 0) events.lost(error);
    if (closed) return;
    schedule(connect, Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures));
    failures++;
  };

  const heartbeat = (client: pg.Client) => {
    schedule(() => {
      const deadline = setTimeout(() => drop(client, new Error(`no answer to the heartbeat within ${HEARTBEAT_TIMEOUT_MS} ms`)), HEARTBEAT_TIMEOUT_MS).unref();
      client.query("SELECT 1").then(
        () => {
          clearTimeout(deadline);
          if (client === current) heartbeat(client);
        },
        (error: Error) => {
          clearTimeout(deadline);
          drop(client, error);
        },
      );
    }, HEARTBEAT_MS);
  };

  const connect = () => {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: options.applicationName ?? "key revocations",
    });
    current = client;
    client.on("error", (error) => drop(client, error));
    client.on("end", () => drop(client, new Error("connection closed")));
    client.on("notification", (message) => {
      if (message.channel === CHANNEL && message.payload) events.revoked(message.payload);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(
        () => {
          if (client !== current) return;
          failures = 0;
          listening = true;
          events.listening();
          heartbeat(client);
        },
        (error: Error) => drop(client, error),
      );
  };

  if (behindPgbouncer(url)) {
    events.lost(new Error("DATABASE_URL names a transaction-mode pooler (pgbouncer=true), which does not carry LISTEN"));
  } else {
    connect();
  }

  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const client = current;
      current = undefined;
      listening = false;
      await client?.end().catch(() => undefined);
    },
  };
}
