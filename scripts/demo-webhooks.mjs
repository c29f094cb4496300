// `pnpm demo:webhooks`: a webhook on this machine in a minute (docs/webhooks-local.md). An HTTPS
// receiver on a loopback address at :443 with a certificate from a CA of its own (made with openssl
// in DEMO_STATE_DIR, var/demo-webhooks by default), the gateway and worker started as `pnpm start`
// starts them plus the settings that let them reach it, one task submitted with a webhook_url
// naming it, and every webhook that arrives printed and verified as a receiver should: by reading
// the task with the API key (deliveries are not signed). `--receiver-only` starts the receiver
// alone and prints the settings for a service started by other means.
//
// Nothing here loosens a rule of the service: webhook_url is still https on :443 with a public-looking
// host name, and the loopback address is reachable only because the printed WEBHOOK_ALLOWED_CIDRS
// lists it. The host name resolves to it only inside the processes this script starts
// (demo-webhooks-dns.mjs), never on the machine.
import { execFile, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import { isIP } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { ROOT } from "./build-state.mjs";

const run = promisify(execFile);
const HOST = "receiver.webhooks-demo.example";
const HOOK_PATH = "/hooks";
const MAX_BODY_BYTES = 1024 * 1024;
const receiverOnly = process.argv.includes("--receiver-only");
const stateDir = path.resolve(process.env.DEMO_STATE_DIR || path.join(ROOT, "var", "demo-webhooks"));
const port = process.env.PORT || "8080";
const baseUrl = (process.env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, "");
const webhookUrl = `https://${HOST}${HOOK_PATH}`;

function fail(message) {
  console.error(`demo:webhooks: ${message}`);
  process.exit(1);
}

const wantedAddress = process.env.DEMO_WEBHOOK_ADDRESS;
if (wantedAddress !== undefined && (isIP(wantedAddress) !== 4 || !wantedAddress.startsWith("127."))) {
  fail(`DEMO_WEBHOOK_ADDRESS must be an IPv4 loopback address (127.0.0.0/8), got ${JSON.stringify(wantedAddress)}`);
}

const pki = await ensurePki();
const { server, address } = await listenOn443(pki);
const dnsPreload = pathToFileURL(path.join(ROOT, "scripts", "demo-webhooks-dns.mjs")).href;
const settings = {
  WEBHOOK_ALLOWED_CIDRS: [process.env.WEBHOOK_ALLOWED_CIDRS, `${address}/32`].filter(Boolean).join(","),
  NODE_EXTRA_CA_CERTS: pki.caFile,
  DEMO_WEBHOOK_HOSTS: `${HOST}=${address}`,
  NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${dnsPreload}`].filter(Boolean).join(" "),
};

console.log(`receiver: ${webhookUrl} on ${address}:443 (its CA: ${pki.caFile})`);
console.log("settings the gateway and worker need to deliver to it:");
for (const [name, value] of Object.entries(settings)) console.log(`  ${name}=${quote(value)}`);

let service;
let stopping = false;
let apiKey = process.env.DEMO_API_KEY || "";
// Ids already printed (a repeat is acknowledged and ignored), the oldest forgotten past a bound.
const handled = new Set();
const HANDLED_MAX = 10_000;
let verifications = Promise.resolve();
server.on("request", receive);
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

if (receiverOnly) {
  console.log("receiver only: start the service with the settings above, submit a task with");
  console.log(`  "webhook_url":"${webhookUrl}", and set DEMO_API_KEY to its key to have each webhook verified.`);
} else {
  service = startService();
  await waitForService();
  if (!apiKey) apiKey = await createKey();
  const task = await submitSample();
  console.log(`submitted ${task.id} with webhook_url ${webhookUrl}; its webhook follows. More:`);
  console.log(
    `  curl -s -X POST ${baseUrl}/api/v1/detect -H "Authorization: Bearer ${apiKey}" -H 'Content-Type: application/json' ` +
      `-d '{"model":"sim-detect-1","text":"Is this written by a model?","webhook_url":"${webhookUrl}"}'`,
  );
  console.log("Ctrl-C stops the receiver and the service.");
}

/** The CA is made once and kept (trust it elsewhere if you like); the server certificate each run. */
async function ensurePki() {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = (name) => path.join(stateDir, name);
  const config = file("openssl.cnf");
  writeFileSync(
    config,
    [
      "[req]",
      "distinguished_name = dn",
      "prompt = no",
      "[dn]",
      "[ca]",
      "basicConstraints = critical, CA:TRUE",
      "keyUsage = critical, keyCertSign, cRLSign",
      "[leaf]",
      "basicConstraints = CA:FALSE",
      "keyUsage = digitalSignature",
      "extendedKeyUsage = serverAuth",
      `subjectAltName = DNS:${HOST}`,
      "",
    ].join("\n"),
  );
  const openssl = (args) =>
    run("openssl", args, { cwd: stateDir }).catch((error) => {
      fail(
        error.code === "ENOENT"
          ? "openssl is needed to make the receiver's certificates; install it"
          : `openssl ${args[0]} failed: ${error.stderr || error.message}`,
      );
    });
  if (!existsSync(file("ca.pem")) || !existsSync(file("ca-key.pem")) || !(await validForADay(file("ca.pem")))) {
    await openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca-key.pem"]);
    await openssl([
      "req",
      "-x509",
      "-new",
      "-key",
      "ca-key.pem",
      "-sha256",
      "-days",
      "365",
      "-subj",
      "/CN=gen webhooks demo CA",
      "-config",
      config,
      "-extensions",
      "ca",
      "-out",
      "ca.pem",
    ]);
  }
  await openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server-key.pem"]);
  await openssl(["req", "-new", "-key", "server-key.pem", "-subj", `/CN=${HOST}`, "-config", config, "-out", "server.csr"]);
  await openssl([
    ...["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-set_serial", String(randomInt(1, 2 ** 47))],
    ...["-days", "30", "-sha256", "-extfile", config, "-extensions", "leaf", "-out", "server.pem"],
  ]);
  return { caFile: file("ca.pem"), key: readFileSync(file("server-key.pem")), cert: readFileSync(file("server.pem")) };
}

async function validForADay(certFile) {
  return run("openssl", ["x509", "-checkend", "86400", "-noout", "-in", certFile]).then(
    () => true,
    () => false,
  );
}

/**
 * A webhook_url cannot name a port, so :443, on a 127/8 address of its own (or DEMO_WEBHOOK_ADDRESS)
 * so that other listeners on :443 are left alone; 127.0.0.1 where the system has no other loopback
 * address (macOS configures only that one).
 */
async function listenOn443({ key, cert }) {
  let onlyLocalhost = false;
  for (let tries = 0; ; tries++) {
    const address = wantedAddress ?? (onlyLocalhost ? "127.0.0.1" : `127.${randomInt(16, 250)}.${randomInt(0, 256)}.${randomInt(1, 255)}`);
    const server = https.createServer({ key, cert });
    const error = await new Promise((resolve) => {
      server.once("error", resolve);
      server.listen(443, address, () => resolve(null));
    });
    if (!error) return { server, address };
    if (error.code === "EACCES") {
      fail(
        "listening on :443 needs privileges here: run as root, or allow unprivileged ports once with " +
          "`sudo sysctl net.ipv4.ip_unprivileged_port_start=443` (Linux; macOS 10.14 and later needs nothing)",
      );
    }
    if (error.code === "EADDRNOTAVAIL" && wantedAddress === undefined && !onlyLocalhost) {
      onlyLocalhost = true;
      continue;
    }
    if (error.code !== "EADDRINUSE" || wantedAddress !== undefined || onlyLocalhost || tries >= 10) fail(`cannot listen on ${address}:443: ${error.message}`);
  }
}

function startService() {
  const env = { ...process.env, ...settings, LOG_LEVEL: process.env.LOG_LEVEL || "warn" };
  const child = spawn(process.execPath, [path.join(ROOT, "scripts", "start.mjs"), "all"], { env, stdio: ["ignore", "inherit", "inherit"] });
  child.on("exit", (code) => {
    if (!stopping) {
      console.error(`demo:webhooks: the service stopped (exit ${code}); see its output above`);
      void stop(code || 1);
    }
  });
  return child;
}

async function waitForService() {
  for (let i = 0; i < 600; i++) {
    const ready = await fetch(`${baseUrl}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  fail(`the service did not answer ${baseUrl}/readyz within a minute`);
}

async function createKey() {
  const admin = path.join(ROOT, "apps", "admin", "dist", "main.js");
  const { stdout } = await run(process.execPath, [admin, "create-key", "--credits", "100"], { env: { ...process.env, NODE_OPTIONS: "" } }).catch((error) =>
    fail(`could not create an API key: ${error.stderr || error.message}`),
  );
  const { api_key: key, user_id: user } = JSON.parse(stdout);
  console.log(`API key for the demo (user ${user}, 100 credits): ${key}`);
  return key;
}

async function submitSample() {
  const res = await fetch(`${baseUrl}/api/v1/detect`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "sim-detect-1", text: "Was this sentence written by a model?", webhook_url: webhookUrl }),
  });
  const body = await res.json().catch(() => ({}));
  if (res.status !== 202) fail(`submitting the sample task answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Acknowledge at once, then print and verify: the receiver pattern of docs/api.md#receiving-webhooks. */
function receive(req, res) {
  if (req.method !== "POST" || req.url?.split("?")[0] !== HOOK_PATH) {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413).end();
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = undefined;
    }
    const id = typeof body?.id === "string" && /^task_[0-9a-f]{32}$/.test(body.id) ? body.id : undefined;
    res.writeHead(id ? 200 : 400, { "content-type": "text/plain" }).end(id ? "ok" : "not a task body");
    const from = `${req.headers["user-agent"] ?? "no User-Agent"}`;
    if (!id) {
      console.log(`webhook refused: not a task body (${size} bytes from ${from})`);
      return;
    }
    const again = handled.has(id);
    handled.add(id);
    if (handled.size > HANDLED_MAX) handled.delete(handled.values().next().value);
    console.log(`webhook: ${id} ${body.status}${again ? " (again: already handled, acknowledged and ignored)" : ""} from ${from}`);
    if (again) return;
    console.log(indent(JSON.stringify(body, null, 2)));
    verifications = verifications.then(() => verify(id, body));
  });
}

async function verify(id, body) {
  if (!apiKey) {
    console.log(`  not verified: set DEMO_API_KEY to the key that submitted ${id}`);
    return;
  }
  const res = await fetch(`${baseUrl}/api/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } }).catch((error) => error);
  if (res instanceof Error) {
    console.log(`  not verified: GET /api/v1/tasks/${id} failed (${res.message})`);
    return;
  }
  const polled = await res.json().catch(() => null);
  if (res.status === 404) {
    console.log(`  not verified: this key has no task ${id} (a console test webhook, another key's task, or a forged call): a receiver ignores it`);
  } else if (res.status !== 200) {
    console.log(`  not verified yet: GET /api/v1/tasks/${id} answered ${res.status}; poll again later`);
  } else if (sameTask(polled, body)) {
    console.log(`  verified: GET /api/v1/tasks/${id} with your key shows the same ${polled.status} task`);
  } else {
    console.log(`  not verified: the API shows ${id} ${polled?.status}, not the body above: trust the API`);
  }
}

/** The webhook body is the polled task, except that a failed task's error names the attempt (`whd_`). */
function sameTask(polled, body) {
  const strip = (task) => ({ ...task, error: task?.error ? { ...task.error, request_id: undefined } : task?.error });
  return JSON.stringify(strip(polled)) === JSON.stringify(strip(body));
}

function indent(text) {
  const shown = text.length > 2000 ? `${text.slice(0, 2000)}\n…` : text;
  return shown.replace(/^/gm, "  ");
}

function quote(value) {
  return /^[\w./:,=@+-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

async function stop(code) {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections?.();
  if (service && service.exitCode === null) {
    service.kill("SIGTERM");
    await new Promise((resolve) => service.once("exit", resolve));
  }
  process.exit(code);
}
