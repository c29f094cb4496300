import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";

export interface Pgbouncer {
  port: number;
  /** Its process (CPU figures read /proc/<pid>). */
  pid: number;
  /** `databaseUrl` (a database on the server behind it) as reached through the pooler, with `pgbouncer=true`. */
  urlFor(databaseUrl: string): string;
  /** The pooler's last log lines, for a failure report. */
  tail(): string;
  stop(): Promise<void>;
}

export interface PgbouncerOptions {
  /** Any URL of the PostgreSQL server to pool (its host and port; every database on it is served). */
  serverUrl: string;
  /** Server connections per database and user. */
  poolSize?: number;
}

/**
 * Where Debian's package puts it (scripts/install-pgbouncer.sh installs it; CI runs that script), or
 * PGBOUNCER_PATH. Missing means a set-up step was skipped: the tests fail saying so, never skip.
 */
function pgbouncerBinary(): string {
  const candidates = [process.env.PGBOUNCER_PATH, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no pgbouncer at ${candidates.join(" or ")}: run scripts/install-pgbouncer.sh (or set PGBOUNCER_PATH)`);
  return found;
}

/**
 * The settings docs/operations/scaling.md gives for PgBouncer 1.18 in transaction mode: the statement
 * bounds the apps send in their start-up packet when they connect directly come from
 * connect_query here (the apps' defaults: 5 s query time-out, so 4 s per statement and 10 s idle in
 * a transaction), a server that went away is tried again every second, not every 15, and a query
 * that waited 1 s for a server connection is refused (as the apps' own pool waits at most 1 s for a
 * connection): without that bound, clients queued just as the server went away wait out their
 * 5 s query time-out.
 */
function ini(dir: string, port: number, server: URL, poolSize: number): string {
  const connectQuery = "SET statement_timeout = 4000; SET idle_in_transaction_session_timeout = 10000";
  return [
    "[databases]",
    `* = host=${server.hostname} port=${server.port || "5432"} connect_query='${connectQuery}'`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${path.join(dir, "userlist.txt")}`,
    "pool_mode = transaction",
    `default_pool_size = ${poolSize}`,
    "max_client_conn = 1000",
    "server_login_retry = 1",
    "server_connect_timeout = 2",
    "query_wait_timeout = 1",
    "",
  ].join("\n");
}

/**
 * A PgBouncer of the test's own in transaction mode on a spare loopback port, trusting the
 * loopback PostgreSQL's users as the server does. As root it runs as `postgres` (PgBouncer refuses
 * to run as root), so its files are readable by all.
 */
export async function startPgbouncer(options: PgbouncerOptions): Promise<Pgbouncer> {
  const binary = pgbouncerBinary();
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const dir = mkdtempSync(path.join(os.tmpdir(), "pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await closedPort();
  const config = path.join(dir, "pgbouncer.ini");
  writeFileSync(config, ini(dir, port, server, options.poolSize ?? 20), { mode: 0o644 });
  writeFileSync(path.join(dir, "userlist.txt"), `"${user}" ""\n`, { mode: 0o644 });

  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(binary, [...(asRoot ? ["-u", "postgres"] : []), config], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const tail = () => `pgbouncer:\n${output.split("\n").slice(-30).join("\n")}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await once(child, "exit");
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitForPort(port, child, 10_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${tail()}`, { cause: error });
  }
  return {
    port,
    pid: child.pid!,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      url.searchParams.set("pgbouncer", "true");
      return url.toString();
    },
    tail,
    stop,
  };
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The version line of the installed PgBouncer ("PgBouncer 1.18.0"), for reports. */
export function pgbouncerVersion(): string {
  return execFileSync(pgbouncerBinary(), ["--version"], { encoding: "utf8" }).split("\n")[0]!.trim();
}
