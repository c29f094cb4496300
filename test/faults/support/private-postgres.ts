import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { closedPort } from "../../../packages/webhook-sender/test/helpers/receiver.ts";

const run = promisify(execFile);
// Debian's layout (/usr/lib/postgresql/<major>/bin, newest first); PG_BIN_DIR overrides it.
const DEBIAN_ROOT = "/usr/lib/postgresql";
const BIN =
  process.env.PG_BIN_DIR ??
  (existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT)
        .filter((major) => existsSync(path.join(DEBIAN_ROOT, major, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
        .map((major) => path.join(DEBIAN_ROOT, major, "bin"))[0]
    : undefined) ??
  "";

export interface PrivatePostgres {
  /** Superuser URL of the `postgres` database (trust authentication, loopback only). */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL cluster of the test's own (initdb in a temp dir, a spare loopback port): the
 * machine's server (5432) is shared with other tests and must never be stopped. As root the
 * binaries run as the `postgres` user, since PostgreSQL refuses to run as root.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "faults-pg-"));
  const asRoot = process.getuid?.() === 0;
  const pgUser = asRoot ? await uidOf("postgres") : undefined;
  if (pgUser) chownSync(dir, pgUser.uid, pgUser.gid);
  const data = path.join(dir, "data");
  const port = await closedPort();
  const pg = (tool: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", path.join(BIN, tool), ...args]) : run(path.join(BIN, tool), args);

  await pg("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-N"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = async () => {
    await pg("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "server.log"), "-w", "start"]);
  };
  const stop = async () => {
    await pg("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function uidOf(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run("id", ["-u", user]), run("id", ["-g", user])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
