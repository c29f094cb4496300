import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// Same default as packages/config, so `pnpm db:migrate` and the apps agree without any setup.
process.env.DATABASE_URL ||= "postgresql://postgres@127.0.0.1:5432/gen";

// Offline-capable setup: JS schema engine and the pg driver adapter (docs/operations/deploy.md).
export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL! }),
});
