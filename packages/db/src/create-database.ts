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
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const adapter = new PrismaPg({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 1000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
  });
  return new PrismaClient({ adapter });
}
