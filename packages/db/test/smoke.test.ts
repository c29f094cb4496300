import got from "got";
import { createDatabase } from "@gen/db";

test("database and got load under ESM jest", async () => {
  const db = createDatabase(process.env.DATABASE_URL!);
  const users = await db.user.count();
  expect(users).toBeGreaterThanOrEqual(0);
  expect(typeof got).toBe("function");
  await db.$disconnect();
});
