import { sql } from "kysely";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { createDatabase, listenForKeyRevocations, type KeyRevocationListener } from "@gen/db";
import { until } from "../../../test/support/until.ts";

// The api_keys trigger (migration 20261127120000) and the listener every gateway process runs.
const url = process.env.DATABASE_URL!;
const db = createDatabase(url);
const listeners: KeyRevocationListener[] = [];
afterAll(async () => {
  await Promise.all(listeners.map((listener) => listener.close()));
  await db.$disconnect();
});

interface Heard {
  notices: Array<{ hash: string; at: number }>;
  events: string[];
  listener: KeyRevocationListener;
}

async function listen(target = url): Promise<Heard> {
  const heard: Heard = { notices: [], events: [], listener: undefined! };
  heard.listener = listenForKeyRevocations(target, {
    listening: () => heard.events.push("listening"),
    lost: (error) => heard.events.push(`lost: ${error.message}`),
    revoked: (hash) => heard.notices.push({ hash, at: performance.now() }),
  });
  listeners.push(heard.listener);
  return heard;
}

/** Keys of a user of their own (the run's database is shared with other test files). */
async function keys(count: number): Promise<string[]> {
  const user = `u_${randomBytes(6).toString("hex")}`;
  const hashes = Array.from({ length: count }, () => randomBytes(32).toString("hex"));
  await db.$sql.query("INSERT INTO users (id) VALUES ($1)", [user]);
  await db.$sql.query("INSERT INTO api_keys (id, user_id, key_hash) SELECT 'key_' || h, $1, h FROM unnest($2::text[]) h", [user, hashes]);
  return hashes;
}

test("a key that stops being valid is sent at the commit, whatever revoked it; a rollback or a second revoke sends nothing", async () => {
  const heard = await listen();
  await until(() => heard.listener.listening, "listening");
  const [revoked, rehashed, deleted, rolledBack, last] = await keys(5);
  await db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [revoked]);
  await db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [revoked]);
  await db.$sql.query("UPDATE api_keys SET key_hash = $2 WHERE key_hash = $1", [rehashed, `${rehashed}x`]);
  await db.$sql.query("DELETE FROM api_keys WHERE key_hash = $1", [deleted]);
  await db.$sql.query("DELETE FROM api_keys WHERE key_hash = $1", [revoked]);
  await db.$kysely
    .transaction()
    .execute(async (tx) => {
      await sql`UPDATE api_keys SET revoked_at = now() WHERE key_hash = ${rolledBack}`.execute(tx);
      await sql`SELECT 1 / 0`.execute(tx);
    })
    .catch(() => undefined);
  await db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [last]);
  const mine = new Set([revoked, rehashed, deleted, rolledBack, last]);
  await until(() => heard.notices.some((n) => n.hash === last), "the last notice");
  // Notices arrive in commit order, so nothing else is on its way.
  expect(heard.notices.filter((n) => mine.has(n.hash)).map((n) => n.hash)).toEqual([revoked, rehashed, deleted, last]);
});

test("the notice's latency after the revoking commit (printed): every one arrives", async () => {
  const heard = await listen();
  await until(() => heard.listener.listening, "listening");
  const hashes = await keys(200);
  const sent = new Map<string, { before: number; acked: number }>();
  for (const hash of hashes) {
    const before = performance.now();
    await db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [hash]);
    sent.set(hash, { before, acked: performance.now() });
  }
  await until(() => hashes.every((hash) => heard.notices.some((n) => n.hash === hash)), "every notice");
  const afterAck = heard.notices.filter((n) => sent.has(n.hash)).map((n) => n.at - sent.get(n.hash)!.acked);
  const afterSend = heard.notices.filter((n) => sent.has(n.hash)).map((n) => n.at - sent.get(n.hash)!.before);
  const pct = (values: number[], p: number) =>
    [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!.toFixed(2);
  process.stdout.write(
    `revocation notice, 200 commits: after the commit's answer to the revoker p50 ${pct(afterAck, 50)} ms, p99 ${pct(afterAck, 99)} ms, max ${pct(afterAck, 100)} ms ` +
      `(negative: before it); after the UPDATE was sent p50 ${pct(afterSend, 50)} ms, p99 ${pct(afterSend, 99)} ms, max ${pct(afterSend, 100)} ms\n`,
  );
  expect(afterAck).toHaveLength(200);
});

test("a connection that goes silent (no reset, nothing delivered) is reported lost by the heartbeat, and the listener connects again", async () => {
  // A loopback relay to PostgreSQL whose open connections can be frozen: bytes stop both ways, no FIN, no RST.
  const pg = new URL(url);
  const pairs: Array<[net.Socket, net.Socket]> = [];
  const relay = net.createServer((client) => {
    const server = net.connect(Number(pg.port || 5432), pg.hostname);
    client.pipe(server).pipe(client);
    client.on("error", () => server.destroy());
    server.on("error", () => client.destroy());
    pairs.push([client, server]);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const through = new URL(url);
  through.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  try {
    const heard = await listen(through.toString());
    await until(() => heard.listener.listening, "listening");
    const frozenAt = performance.now();
    for (const [client, server] of pairs) {
      client.unpipe(server);
      server.unpipe(client);
      client.pause();
      server.pause();
    }
    await until(() => !heard.listener.listening, "reported lost", 20_000);
    const noticedMs = performance.now() - frozenAt;
    await until(() => heard.listener.listening, "listening again");
    process.stdout.write(`silent listener connection: reported lost ${noticedMs.toFixed(0)} ms after it froze (heartbeat every 5 s, 2 s to answer)\n`);
    expect(heard.events).toEqual(["listening", expect.stringMatching(/^lost: no answer to the heartbeat/), "listening"]);
  } finally {
    for (const pair of pairs) for (const socket of pair) socket.destroy();
    relay.close();
  }
}, 40_000);

test("a URL for a transaction-mode pooler (pgbouncer=true) never LISTENs: reported lost once", async () => {
  const pooled = new URL(url);
  pooled.searchParams.set("pgbouncer", "true");
  const heard = await listen(pooled.toString());
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(heard.listener.listening).toBe(false);
  expect(heard.events).toEqual([expect.stringMatching(/^lost: .*pgbouncer=true.*does not carry LISTEN/)]);
});
