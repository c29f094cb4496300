import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { hashApiKey, newRequestId, newTaskId } from "@gen/ids";
import { createDatabase, listenForKeyRevocations, findKeyByHash, readCredits } from "@gen/db";

const run = promisify(execFile);
const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

/** Runs the operator command exactly as documented: `pnpm admin ...` from the repository root. */
async function admin(...args: string[]) {
  return adminWithStdin("", ...args);
}

/** The same, with `input` piped on stdin (and stdin closed, so nothing waits for more). */
async function adminWithStdin(input: string, ...args: string[]) {
  return runWithEnv({}, input, ...args);
}

async function runWithEnv(env: Record<string, string>, input: string, ...args: string[]) {
  try {
    const pending = run("pnpm", ["admin", ...args], { env: { ...process.env, ...env } });
    pending.child.stdin!.end(input);
    const { stdout, stderr } = await pending;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test("create-key prints exactly one JSON line and grants the credits through the ledger", async () => {
  const { code, stdout } = await admin("create-key", "--credits", "250");
  expect(code).toBe(0);
  expect(stdout.endsWith("\n")).toBe(true);
  expect(stdout.trimEnd().split("\n")).toHaveLength(1);
  const out = JSON.parse(stdout);
  expect(Object.keys(out)).toEqual(["user_id", "api_key", "key_id"]);
  expect(out.api_key).toMatch(/^sk_[0-9A-Za-z]{40}$/);
  expect(out.key_id).toMatch(/^key_[0-9a-f]{24}$/);
  expect(await readCredits(db, out.user_id)).toBe(250);
  const key = (await findKeyByHash(db, hashApiKey(out.api_key)))!;
  expect(key.userId).toBe(out.user_id);
  const named = await db.$kysely.selectFrom("api_keys").select("key_hash").where("id", "=", out.key_id).executeTakeFirstOrThrow();
  expect(named.key_hash).toBe(key.keyHash);
  // Only the hash is stored.
  const rows = await db.$sql.query(`SELECT 1 FROM api_keys WHERE key_hash = $1 OR id = $1`, [out.api_key]).then((result) => result.rows);
  expect(rows).toHaveLength(0);
}, 60_000);

test("create-key --user adds a second key to an existing user; add-credits and revoke-key", async () => {
  const first = JSON.parse((await admin("create-key", "--credits", "10")).stdout);
  const second = JSON.parse((await admin("create-key", "--credits", "0", "--user", first.user_id)).stdout);
  expect(second.user_id).toBe(first.user_id);
  expect(second.api_key).not.toBe(first.api_key);

  const added = await admin("add-credits", "--user", first.user_id, "--credits", "40");
  expect(JSON.parse(added.stdout)).toEqual({ user_id: first.user_id, credits: 50 });
  const sum = await db.$kysely
    .selectFrom("ledger_entries")
    .select((eb) => eb.fn.sum<string>("delta").as("delta"))
    .where("user_id", "=", first.user_id)
    .executeTakeFirstOrThrow();
  expect(Number(sum.delta)).toBe(50);

  // The key on stdin, never in argv.
  const revoked = await adminWithStdin(`${second.api_key}\n`, "revoke-key");
  expect({ code: revoked.code, stdout: revoked.stdout, stderr: revoked.stderr }).toEqual({ code: 0, stdout: '{"revoked":true}\n', stderr: "" });
  const key = (await findKeyByHash(db, hashApiKey(second.api_key)))!;
  expect(key.revokedAt).not.toBeNull();
}, 60_000);

test("list-keys shows ids, never keys; revoke-key --key-id revokes without the key", async () => {
  const first = JSON.parse((await admin("create-key", "--credits", "0")).stdout);
  const second = JSON.parse((await admin("create-key", "--credits", "0", "--user", first.user_id)).stdout);
  const listed = await admin("list-keys", "--user", first.user_id);
  expect(listed.code).toBe(0);
  expect(listed.stdout).not.toContain("sk_");
  const { keys } = JSON.parse(listed.stdout);
  expect(keys).toHaveLength(2);
  expect(keys.every((k: { key_id: string; revoked_at: null }) => /^key_[0-9a-f]{24}$/.test(k.key_id) && k.revoked_at === null)).toBe(true);

  const secondId = (await db.$kysely.selectFrom("api_keys").select("id").where("key_hash", "=", hashApiKey(second.api_key)).executeTakeFirstOrThrow()).id;
  expect((await admin("revoke-key", "--key-id", secondId)).code).toBe(0);
  const after = JSON.parse((await admin("list-keys", "--user", first.user_id)).stdout).keys;
  expect(after.find((k: { key_id: string }) => k.key_id === secondId).revoked_at).not.toBeNull();
  expect((await findKeyByHash(db, hashApiKey(first.api_key)))!.revokedAt).toBeNull();
}, 60_000);

test("the key as an argument still works (the documented form) but warns that argv is visible", async () => {
  const made = JSON.parse((await admin("create-key", "--credits", "0")).stdout);
  const result = await admin("revoke-key", made.api_key);
  expect(result.code).toBe(0);
  expect(result.stderr).toMatch(/warning: a key on the command line is visible in shell history and ps/);
  expect((await findKeyByHash(db, hashApiKey(made.api_key)))!.revokedAt).not.toBeNull();
}, 60_000);

test("revoke-key needs no Redis: its commit is the gateways' notice; revoking twice is fine and notifies nothing more", async () => {
  const notices: string[] = [];
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const listener = listenForKeyRevocations(process.env.DATABASE_URL!, { listening, lost: () => {}, revoked: (hash) => notices.push(hash) });
  try {
    await ready;
    const [made, later] = [JSON.parse((await admin("create-key", "--credits", "0")).stdout), JSON.parse((await admin("create-key", "--credits", "0")).stdout)];
    const redisAway = { REDIS_URL: "redis://127.0.0.1:1" };
    for (const key of [made.api_key, made.api_key, later.api_key]) {
      const revoked = await runWithEnv(redisAway, `${key}\n`, "revoke-key");
      expect({ code: revoked.code, stdout: revoked.stdout, stderr: revoked.stderr }).toEqual({ code: 0, stdout: '{"revoked":true}\n', stderr: "" });
    }
    // Notices arrive in commit order: the second revoke of the first key sent none.
    const expected = [hashApiKey(made.api_key), hashApiKey(later.api_key)];
    for (let waited = 0; notices.filter((hash) => expected.includes(hash)).length < 2 && waited < 10_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(notices.filter((hash) => expected.includes(hash))).toEqual(expected);
  } finally {
    await listener.close();
  }
}, 60_000);

test("ledger-check passes on a consistent ledger; a planted violation makes it print one line and exit 1", async () => {
  const made = JSON.parse((await admin("create-key", "--credits", "30")).stdout);
  const clean = await admin("ledger-check", "--user", made.user_id);
  expect({ code: clean.code, stdout: clean.stdout }).toEqual({ code: 0, stdout: "" });

  // Credits changed behind the ledger's back.
  await db.$kysely.updateTable("users").set({ credits: 31 }).where("id", "=", made.user_id).execute();
  const broken = await admin("ledger-check", "--user", made.user_id);
  expect({ code: broken.code, stdout: broken.stdout }).toEqual({ code: 1, stdout: `user ${made.user_id}: credits 31 != ledger sum 30\n` });
  expect((await admin("ledger-check", "--user", "no spaces")).code).toBe(2);
}, 60_000);

test("bad usage exits 2 with a message on stderr and nothing on stdout", async () => {
  for (const args of [["create-key"], ["create-key", "--credits", "-5"], ["add-credits", "--credits", "5"], ["frobnicate"]]) {
    const result = await admin(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/admin:/);
  }
  const unknown = await admin("revoke-key", "sk_doesnotexist");
  expect(unknown.code).toBe(2);
  for (const [input, args] of [
    ["sk_doesnotexist\n", ["revoke-key"]],
    ["", ["revoke-key"]],
    ["", ["revoke-key", "--key-id", "key_nothex"]],
    ["", ["revoke-key", "--key-id", "key_000000000000000000000000"]],
    ["", ["list-keys"]],
  ] as const) {
    const result = await adminWithStdin(input, ...args);
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
  }
  // Ten `pnpm admin` runs, each starting pnpm and tsx: 1-2 s apiece on an idle machine, up to 15 s
  // on a loaded one (this case timed out at 60 s under a load average of 5).
}, 180_000);

test("show-user prints the balance and the keys; find-task finds a task by id or request id, with its cause", async () => {
  const created = JSON.parse((await admin("create-key", "--credits", "30")).stdout);
  const shown = await admin("show-user", "--user", created.user_id);
  expect(JSON.parse(shown.stdout)).toEqual({
    user_id: created.user_id,
    credits: 30,
    keys: [{ key_id: created.key_id, created_at: expect.any(String), revoked_at: null }],
  });

  const taskId = newTaskId();
  const requestId = newRequestId();
  const cause = { step: "submit", provider: "fal", upstreamModel: "fal-ai/flux", message: "connect ECONNREFUSED", code: "ECONNREFUSED" };
  await db.$kysely
    .insertInto("tasks")
    .values({
      id: taskId,
      user_id: created.user_id,
      endpoint: "images",
      model: "sim-image-1",
      status: "failed",
      input: "{}",
      error_code: 80001,
      request_id: requestId,
      billing_method: "flat",
      reserved_credits: 1,
      failure_cause: JSON.stringify(cause),
    })
    .execute();
  const byId = JSON.parse((await admin("find-task", "--task", taskId)).stdout);
  const byRequest = JSON.parse((await admin("find-task", "--request", requestId)).stdout);
  expect(byRequest).toEqual(byId);
  expect(byId.tasks).toEqual([
    expect.objectContaining({ id: taskId, user_id: created.user_id, request_id: requestId, status: "failed", error_code: 80001, failure_cause: cause }),
  ]);

  // Unknown and malformed input: a message and a failing exit code, never a stack trace or a query with it.
  for (const args of [
    ["show-user", "--user", "usr_nobody"],
    ["show-user", "--user", "x'; drop table users; --"],
    ["show-user"],
    ["find-task", "--task", newTaskId()],
    ["find-task", "--request", "req_' OR 1=1"],
    ["find-task", "--task", taskId, "--request", requestId],
    ["find-task"],
  ]) {
    const failed = await admin(...args);
    expect({ args, code: failed.code, stdout: failed.stdout }).toEqual({ args, code: 2, stdout: "" });
    expect(failed.stderr).not.toMatch(/\n\s+at /);
  }
}, 60_000);
