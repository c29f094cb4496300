import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startReceiver } from "./helpers/receiver.ts";
import { createTracker, HOST } from "./helpers/senders.ts";
import { createTestCa, issueServerCert } from "./helpers/test-pki.ts";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const track = createTracker();
afterEach(() => track.closeAll());

// Production passes no `ca`: Node's default store applies, which includes NODE_EXTRA_CA_CERTS.
it("trusts a CA from NODE_EXTRA_CA_CERTS when no ca option is given", async () => {
  const ca = await createTestCa("Operator CA");
  const receiver = track.receiver(await startReceiver({ tls: await issueServerCert([HOST], { ca }) }));
  const dir = await mkdtemp(path.join(tmpdir(), "webhook-sender-"));
  try {
    const caFile = path.join(dir, "ca.pem");
    await writeFile(caFile, ca.cert);
    const url = `https://${HOST}:${receiver.port}/`;
    const send = (env: NodeJS.ProcessEnv) =>
      run(process.execPath, ["--conditions=@gen/source", "--import", "tsx", path.join(here, "helpers", "send-once.ts"), url], {
        env: { ...env, NODE_OPTIONS: "" },
        timeout: 20_000,
      });
    const { NODE_EXTRA_CA_CERTS: _ignored, ...baseEnv } = process.env;

    const trusted = await send({ ...baseEnv, NODE_EXTRA_CA_CERTS: caFile });
    expect(JSON.parse(trusted.stdout)).toEqual({ ok: true, status: 200 });

    const untrusted = await send(baseEnv);
    expect(JSON.parse(untrusted.stdout)).toMatchObject({ ok: false, lastError: "tls_error" });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
