import { PrismaPg } from "@prisma/adapter-pg";
import type { Database } from "@gen/db";
import { PrismaClient } from "./generated/prisma-client/client.ts";

export type { WebhookAttempt, WebhookDelivery } from "./generated/prisma-client/client.ts";

const clients = new WeakMap<Database, PrismaClient>();

/**
 * Prisma's client on a `Database`'s own pool, for test fixtures and benchmarks that set up or
 * inspect rows with it. The product never builds one: new fixtures use the @gen/db modules or
 * `db.$kysely`. One client per Database; the pool stays the Database's (its `$disconnect` ends it).
 */
export function prismaOf(db: Database): PrismaClient {
  let client = clients.get(db);
  if (client === undefined) clients.set(db, (client = new PrismaClient({ adapter: new PrismaPg(db.$pool) })));
  return client;
}
