import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { startPgbouncer, type Pgbouncer } from "../support/pgbouncer.ts";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { countRows } from "../support/db-rows.ts";

// The service through PgBouncer (Debian's 1.18) in transaction mode with `pgbouncer=true`: every
// statement unnamed, none of the start-up parameters PgBouncer refuses, the statement bounds set
// by the pooler. A submitted webhook_url may not name a port, so the receiver listens on :443 of a
// loopback address of its own (root, as in CI; webhook-chain.test.ts uses 127.0.0.1).
const HOST = "hooks.pooled.example";
const HOOK_ADDRESS = "127.0.0.7";
const canBind443 = process.getuid?.() === 0;

let bouncer: Pgbouncer | undefined;
let stack: Stack | undefined;
let receiver: Receiver | undefined;

beforeAll(async () => {
  bouncer = await startPgbouncer({ serverUrl: process.env.DATABASE_URL!, poolSize: 4 });
  const ca = canBind443 ? await createTestCa("pooled test CA") : undefined;
  if (ca) receiver = await startReceiver({ tls: await issueServerCert([HOST], { ca }), host: HOOK_ADDRESS, port: 443 });
  stack = await startStack({ WEBHOOK_ALLOWED_CIDRS: `${HOOK_ADDRESS}/32`, DATABASE_POOL_SIZE: "6" }, { databaseUrl: (direct) => bouncer!.urlFor(direct) });
  stack.startWorker();
  stack.startWorker();
  if (ca) {
    stack.startDeliveryWorker(
      createWebhookSender({ timeoutMs: 2000, allowedCidrs: [`${HOOK_ADDRESS}/32`], lookup: resolverFor(HOST, [HOOK_ADDRESS]), ca: ca.cert }),
    );
  }
}, 30_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  await bouncer?.stop();
});

test("the apps reach PostgreSQL through the pooler, with its statement bounds", async () => {
  expect(stack!.env.DATABASE_URL).toContain(`:${bouncer!.port}/`);
  const { rows } = await stack!.gateway.db.$sql.query<{ statement_timeout: string }>("SHOW statement_timeout");
  expect(rows[0]!.statement_timeout).toBe("4s");
});

test("submit → run → poll → deliver, many at once over 4 server connections, every statement unnamed", async () => {
  const user = await stack!.user();
  const url = `https://${HOST}/hooks?k=1`;
  const webhook = receiver ? { webhook_url: url } : {};
  // More concurrent requests than server connections: a named statement parsed on one server
  // connection and bound on another would fail with `prepared statement "gen_..." does not exist`.
  const submitted = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      i % 3 === 0
        ? stack!.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: `x ${i} [[sim:fail=80003]]`, ...webhook })
        : stack!.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: `text ${i}`, ...webhook }),
    ),
  );
  expect(submitted.map((s) => s.status)).toEqual(submitted.map(() => 202));
  const finished = await Promise.all(submitted.map((s) => stack!.waitTerminal(user.auth, s.body.id as string, 30_000)));
  expect(finished.filter((t) => t.status === "completed")).toHaveLength(16);
  expect(finished.filter((t) => t.status === "failed")).toHaveLength(8);
  const polls = await Promise.all(submitted.map((s) => stack!.get(user.auth, `/api/v1/tasks/${s.body.id as string}`)));
  expect(polls.map((p) => p.status)).toEqual(polls.map(() => 200));
  await ledgerHolds(stack!, user.userId);

  if (!receiver) return console.warn("pgbouncer: webhook deliveries not checked, binding :443 needs root");
  const deadline = Date.now() + 20_000;
  while (receiver.requests.length < 24 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(receiver.requests).toHaveLength(24);
  const delivered = await countRows(stack!.gateway.db, "webhook_deliveries", { status: "delivered" });
  expect(delivered).toBe(24);
}, 60_000);
