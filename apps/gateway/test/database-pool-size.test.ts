import { createTestGateway } from "./support/test-gateway.ts";

// DATABASE_POOL_SIZE reaches the gateway's pool: statements beyond it wait for a connection
// rather than opening one more backend.
test("a gateway with DATABASE_POOL_SIZE=3 runs 5 concurrent statements on 3 backends", async () => {
  const gateway = await createTestGateway({ DATABASE_POOL_SIZE: "3" });
  try {
    const rows = await Promise.all(Array.from({ length: 5 }, () => gateway.deps.db.$sql.rows<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.2)`));
    expect(new Set(rows.map(([row]) => row!.pid)).size).toBe(3);
  } finally {
    await gateway.close();
  }
});
