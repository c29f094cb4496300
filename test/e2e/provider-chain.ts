import { randomInt } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { createUpstreamSim } from "../../apps/upstream-sim/src/create-upstream-sim.ts";
import { startStack, type Stack, type StackOptions } from "./stack.ts";

/** The host name a task's webhook_url names; it resolves to the receiver's loopback address. */
export const HOOK_HOST = "hooks.provider.example";

export interface ProviderChain {
  stack: Stack;
  receiver: Receiver;
  /** Base URL of the upstream simulator (with the provider simulators under their prefixes). */
  simUrl: string;
  close(): Promise<void>;
}

/**
 * The whole chain for a real provider's adapter: a catalog with the shipped models plus `models`
 * (whose upstreamUrl may say `{sim}` for the simulator's base), the provider simulators on
 * loopback, the stack with its generation and delivery workers, and an HTTPS webhook receiver on
 * port 443 (a webhook_url may not name a port) of a loopback address of its own, so parallel
 * suites do not fight over 127.0.0.1:443.
 */
export async function startProviderChain(models: Record<string, unknown>[], env: Record<string, string>, options: StackOptions = {}): Promise<ProviderChain> {
  const simServer = http.createServer();
  simServer.listen(0, "127.0.0.1");
  await once(simServer, "listening");
  const simUrl = `http://127.0.0.1:${(simServer.address() as AddressInfo).port}`;
  simServer.on("request", createUpstreamSim({ publicUrl: simUrl }));

  const shipped = JSON.parse(readFileSync(new URL("../../packages/catalog/models.json", import.meta.url), "utf8")) as { models: unknown[] };
  const catalogFile = path.join(mkdtempSync(path.join(os.tmpdir(), "gen-catalog-")), "models.json");
  const added = JSON.parse(JSON.stringify(models).replaceAll("{sim}", simUrl)) as unknown[];
  writeFileSync(catalogFile, JSON.stringify({ ...shipped, models: [...shipped.models, ...added] }));

  const hookAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const ca = await createTestCa("provider e2e CA");
  const receiver = await startReceiver({ tls: await issueServerCert([HOOK_HOST], { ca }), host: hookAddress, port: 443 });
  const stack = await startStack({ MODEL_CATALOG: catalogFile, WEBHOOK_ALLOWED_CIDRS: `${hookAddress}/32`, ...env }, options);
  stack.startWorker();
  stack.startDeliveryWorker(
    createWebhookSender({ timeoutMs: 2000, allowedCidrs: [`${hookAddress}/32`], lookup: resolverFor(HOOK_HOST, [hookAddress]), ca: ca.cert }),
  );

  return {
    stack,
    receiver,
    simUrl,
    async close() {
      await stack.close();
      await receiver.close();
      simServer.closeAllConnections();
      await new Promise((resolve) => simServer.close(resolve));
    },
  };
}

/** The webhook body received for a task, once it arrived. */
export async function webhookFor(receiver: Receiver, taskId: string, limitMs = 15_000): Promise<Record<string, any>> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const found = receiver.requests.map((request) => request.body.toString("utf8")).find((body) => body.includes(taskId));
    if (found) return JSON.parse(found) as Record<string, any>;
    if (Date.now() > deadline) throw new Error(`no webhook for ${taskId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
