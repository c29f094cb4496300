import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// Same default as packages/config, so `pnpm db:migrate` and the apps agree without any setup.
process.env.DATABASE_URL ||= "postgresql://postgres@127.0.0.1:5432/gen";

// Offline-capable setup: JS schema engine and the pg driver adapter (docs/operations/deploy.md).
// No Prisma client is generated, and without a generator that says `engineType = "client"` the CLI
// would fetch a native query engine from Prisma's host at every command; this says it instead.
process.env.PRISMA_CLIENT_ENGINE_TYPE ||= "client";
export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL! }),
});
