import { PrismaPg } from "@prisma/adapter-pg";
import type { Database } from "@gen/db";
import { PrismaClient } from "./generated/prisma-client/client.ts";

const clients = new WeakMap<Database, PrismaClient>();

/**
 * Prisma's client on a `Database`'s own pool, for the test that holds the SQL reads of @gen/db to
 * Prisma's objects (packages/db/test/row-shapes.test.ts). The product never builds one, and test
 * fixtures set up and read rows with the @gen/db modules or test/support/db-rows.ts. One client
 * per Database; the pool stays the Database's (its `$disconnect` ends it).
 */
export function prismaOf(db: Database): PrismaClient {
  let client = clients.get(db);
  if (client === undefined) clients.set(db, (client = new PrismaClient({ adapter: new PrismaPg(db.$pool) })));
  return client;
}
