import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export type Database = PrismaClient;

export interface DatabaseOptions {
  /** Pool size per process. */
  max?: number;
  /** A request must learn quickly that PostgreSQL is gone (70002), so connecting never waits long. */
  connectTimeoutMs?: number;
  /** Upper bound for one query, so a stalled server cannot hang a request or a job. */
  queryTimeoutMs?: number;
  /** Called with every SQL statement sent (tests use it to count round trips). */
  onQuery?: (sql: string) => void;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const adapter = new PrismaPg({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 1000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
  });
  if (!options.onQuery) return new PrismaClient({ adapter });
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
  const onQuery = options.onQuery;
  client.$on("query", (event) => onQuery(event.query));
  return client;
}
