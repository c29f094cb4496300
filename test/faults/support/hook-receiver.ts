import { randomBytes, randomInt } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startReceiver, type Handler, type Receiver } from "../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert, type KeyPair } from "../../../packages/webhook-sender/test/helpers/test-pki.ts";

/** What the receiver does with the `nth` POST (0-based) it got for a task; `path` is the request-target. */
export type HookBehaviour = (post: { taskId: string; nth: number; path: string }) => { status: number; delayMs?: number };

interface HookPost {
  at: number;
  /** The status the receiver meant to answer (the sender may be gone before it is written). */
  status: number;
  /** The request's header names, lower case. */
  headerNames: string[];
}

export interface HookReceiver {
  /** The webhook_url to submit: a public-looking name that only the app processes map to loopback. */
  url: string;
  /**
   * Started with `{ wildcard: true }`: the webhook_url under host name `<label>.<the receiver's
   * domain>` (any label: a customer's wildcard DNS record, one host name per task, all of one
   * registrable domain). Started with `{ sites }`: the one of the site named `label` (one of them).
   */
  urlFor(label: string): string;
  /** `url` and one more per alias: the same receiver under other host names of its domain. */
  urls: string[];
  /** Its certificate authority, to share with a second receiver of the same scenario. */
  ca: KeyPair;
  /** Environment for app processes: name mapping, allow list, and trust in the test CA. */
  childEnv: Record<string, string>;
  /** POSTs per task id, in arrival order. */
  posts: Map<string, HookPost[]>;
  /** POSTs received and not answered yet. */
  inFlight(): number;
  total(): number;
  setBehaviour(behaviour: HookBehaviour): void;
  close(): Promise<void>;
}

// A submitted webhook_url may not name a port, so the receiver needs :443 (root, as in CI). It
// takes a random 127/8 address so that other tests on :443 do not collide with it.
export const canBind443 = process.getuid?.() === 0;

/** `describe` for scenarios that need the receiver: skipped, with a warning, when not root. */
export function describeWithReceiver(title: string, body: () => void): void {
  if (!canBind443) console.warn(`${title}: skipped, the webhook receiver needs :443 (root)`);
  (canBind443 ? describe : describe.skip)(title, body);
}

/**
 * More host names for one receiver. `wildcard`: every name one label below its domain (a
 * customer's wildcard DNS record: one registrable domain). `sites`: one registrable domain per
 * label (`hooks.<label>-<id>.example`), as a hosting platform's customers are, each one label under
 * the platform's private public suffix: a run of timeouts on one of them counts for no other.
 */
export type MoreNames = { wildcard: true } | { sites: string[] };

/**
 * An HTTPS receiver for the fault scenarios: counts POSTs per task id (from the body's `id`), and
 * answers as the behaviour says, possibly after a delay (a delivery "in flight").
 */
export async function startHookReceiver(
  behaviour: HookBehaviour = () => ({ status: 200 }),
  sharedCa?: KeyPair,
  aliases = 0,
  more?: MoreNames,
): Promise<HookReceiver> {
  const id = randomBytes(4).toString("hex");
  // Each receiver a registrable domain of its own, as two customers' sites are: a receiver's
  // timeouts also count for every host of its domain.
  const site = `f${id}.example`;
  // The per-host cap counts per host name, so aliases are receivers of their own to the worker.
  const names = [`hooks.${site}`, ...Array.from({ length: aliases }, (_, n) => `hooks-${n + 1}.${site}`)];
  // A wildcard name may not stand for a whole label under a public suffix (`*.example`), so each
  // site is a name of its own in the certificate and in the loopback mapping.
  const sites = new Map<string, string>(more && "sites" in more ? more.sites.map((label) => [label, `hooks.${label}-f${id}.example`]) : []);
  if (more && "wildcard" in more) names.push(`*.${site}`);
  names.push(...sites.values());
  // Receivers of one scenario share a CA: NODE_EXTRA_CA_CERTS takes one file, and two CAs of one
  // name in it would not verify.
  const ca = sharedCa ?? (await createTestCa("fault suite CA"));
  const tls = await issueServerCert(names, { ca });
  const dir = mkdtempSync(path.join(os.tmpdir(), "faults-ca-"));
  const caFile = path.join(dir, "ca.pem");
  writeFileSync(caFile, ca.cert);

  const posts = new Map<string, HookPost[]>();
  let current = behaviour;
  let waiting = 0;
  const timers = new Set<NodeJS.Timeout>();
  const handler: Handler = (request, response, body) => {
    const taskId = taskIdOf(body);
    const list = posts.get(taskId) ?? [];
    posts.set(taskId, list);
    const { status, delayMs = 0 } = current({ taskId, nth: list.length, path: request.url ?? "" });
    list.push({ at: Date.now(), status, headerNames: Object.keys(request.headers) });
    waiting++;
    let answered = false;
    const done = () => {
      if (answered) return;
      answered = true;
      waiting--;
    };
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!response.destroyed) response.writeHead(status, { "content-type": "text/plain" }).end("ok");
      done();
    }, delayMs);
    timers.add(timer);
    response.once("close", done);
  };
  let address = "";
  let receiver: Receiver | undefined;
  for (let tries = 0; receiver === undefined; tries++) {
    address = `127.${randomInt(16, 250)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    receiver = await startReceiver({ tls, host: address, port: 443, handler }).catch((error: unknown) => {
      if (tries >= 10) throw error;
      return undefined;
    });
  }
  const server = receiver;

  return {
    url: `https://${names[0]}/hooks/faults?secret=f4ult`,
    urls: names.slice(0, 1 + aliases).map((name) => `https://${name}/hooks/faults?secret=f4ult`),
    urlFor(label) {
      const name = more && "wildcard" in more ? `${label}.${site}` : sites.get(label);
      if (name === undefined) throw new Error(`urlFor: the receiver was not started with a wildcard name nor with site ${label}`);
      return `https://${name}/hooks/faults?secret=f4ult`;
    },
    ca,
    childEnv: { FAULT_HOSTS: names.map((name) => `${name}=${address}`).join(","), WEBHOOK_ALLOWED_CIDRS: `${address}/32`, NODE_EXTRA_CA_CERTS: caFile },
    posts,
    inFlight: () => waiting,
    total: () => [...posts.values()].reduce((sum, list) => sum + list.length, 0),
    setBehaviour(next) {
      current = next;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function taskIdOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { id?: unknown };
    return typeof parsed.id === "string" ? parsed.id : "(no id)";
  } catch {
    return "(not json)";
  }
}
