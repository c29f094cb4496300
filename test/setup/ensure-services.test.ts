import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// scripts/ensure-services.sh decides what a machine needs; here every command it could run that
// probes or changes the machine (id, pg_isready, redis-cli, apt-get, pg_ctlcluster, redis-server,
// runuser, psql, sleep) is a stub on a PATH of its own that logs its call, so each decision is
// checked without installing, starting or stopping anything.
const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../scripts/ensure-services.sh");
const TOOLS = ["ls", "sort", "tail", "sed", "grep", "mkdir"];

interface Machine {
  root: boolean;
  /** Packages already installed. */
  installed: ("postgresql" | "redis-server")[];
  /** Services already answering. */
  running: ("postgresql" | "redis-server")[];
  /** A start that never gets the server to answer. */
  brokenStart?: boolean;
  /** What redis-cli ping prints when the server is down (default: nothing, exit 1). */
  redisReply?: string;
  env?: Record<string, string>;
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The stubbed commands run, one line each: name and arguments. */
  calls: string[];
  hba: string;
  /** The machine's temporary directory (its REDIS_DIR is redis/ in it). */
  dir: string;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function runOn(machine: Machine): Outcome {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ensure-services-"));
  dirs.push(dir);
  const bin = path.join(dir, "bin");
  const templates = path.join(dir, "templates");
  const state = path.join(dir, "state");
  const log = path.join(dir, "calls.log");
  for (const d of [bin, templates, state]) mkdirSync(d);
  for (const tool of TOOLS)
    symlinkSync(
      spawnSync("bash", ["-c", `command -v ${tool}`])
        .stdout.toString()
        .trim(),
      path.join(bin, tool),
    );
  const hba = path.join(dir, "etc/15/main/pg_hba.conf");
  mkdirSync(path.dirname(hba), { recursive: true });
  writeFileSync(hba, "local all postgres peer\n");

  const stub = (where: string, name: string, body: string) => {
    const file = path.join(where, name);
    writeFileSync(file, `#!/bin/bash\necho "${name} $*" >> ${log}\n${body}\n`);
    chmodSync(file, 0o755);
  };
  const starts = machine.brokenStart ? ":" : `: > ${state}/pg-up`;
  const packages: Record<string, [string, string][]> = {
    postgresql: [
      ["pg_isready", `[ -e ${state}/pg-up ]`],
      ["pg_ctlcluster", `[ "$4" = start ] && ${starts}; exit 0`],
      ["psql", "exit 0"],
    ],
    "redis-server": [
      ["redis-cli", `[ -e ${state}/redis-up ] && echo PONG || ${machine.redisReply ? `echo "${machine.redisReply}"` : "exit 1"}`],
      ["redis-server", machine.brokenStart ? "exit 0" : `: > ${state}/redis-up`],
    ],
  };
  for (const [pkg, commands] of Object.entries(packages)) {
    for (const [name, body] of commands) stub(machine.installed.includes(pkg as never) ? bin : templates, name, body);
  }
  if (machine.running.includes("postgresql")) writeFileSync(path.join(state, "pg-up"), "");
  if (machine.running.includes("redis-server")) writeFileSync(path.join(state, "redis-up"), "");
  stub(bin, "id", `echo ${machine.root ? 0 : 1000}`);
  stub(bin, "sleep", "exit 0");
  stub(bin, "runuser", 'shift 3; exec "$@"');
  stub(
    bin,
    "apt-get",
    `[ "$1" = install ] && for p in "$@"; do case "$p" in postgresql) /bin/cp ${templates}/pg_isready ${templates}/pg_ctlcluster ${templates}/psql ${bin}/;; redis-server) /bin/cp ${templates}/redis-* ${bin}/;; esac; done; exit 0`,
  );

  const result = spawnSync("/bin/bash", [SCRIPT], {
    env: { PATH: bin, PG_CONF_DIR: path.join(dir, "etc"), REDIS_DIR: path.join(dir, "redis"), SERVICES_WAIT_SECONDS: "3", ...machine.env },
    encoding: "utf8",
    timeout: 20_000,
  });
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    calls: existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : [],
    hba: readFileSync(hba, "utf8"),
    dir,
  };
}

const changes = (calls: string[]) => calls.filter((call) => !/^(pg_isready|redis-cli|id|sleep) /.test(`${call} `));

test("both answering: two probes, nothing else (the quick path of every set-up)", () => {
  const out = runOn({ root: true, installed: ["postgresql", "redis-server"], running: ["postgresql", "redis-server"] });
  expect(out).toMatchObject({ code: 0, stdout: "", stderr: "" });
  expect(out.calls).toEqual(["pg_isready -q -h 127.0.0.1 -p 5432", "redis-cli -h 127.0.0.1 -p 6379 ping"]);
});

test("fresh machine as root: installs both with apt-get, trusts loopback, starts both", () => {
  const out = runOn({ root: true, installed: [], running: [] });
  expect(out.code).toBe(0);
  const redisDir = path.join(out.dir, "redis");
  expect(changes(out.calls)).toEqual([
    "apt-get update -q",
    "apt-get install -y -q postgresql redis-server",
    "pg_ctlcluster --skip-systemctl-redirect 15 main start",
    `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --dir ${redisDir} --logfile ${redisDir}/redis-server.log`,
  ]);
  expect(out.hba).toBe("host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all postgres peer\n");
  expect(out.stderr).toContain("installing postgresql redis-server with apt-get");
});

test("fresh machine, not root: prints the one command to run and changes nothing", () => {
  const out = runOn({ root: false, installed: [], running: [] });
  expect(out.code).toBe(1);
  expect(out.stdout).toBe("sudo bash scripts/ensure-services.sh\n");
  expect(out.stderr).toBe(
    "ensure-services: PostgreSQL at 127.0.0.1:5432 and Redis at 127.0.0.1:6379 not answering (not installed: postgresql redis-server). Run once, then set-up again:\n",
  );
  expect(changes(out.calls)).toEqual([]);
});

test("installed but stopped, as root: starts them, no apt-get, pg_hba.conf untouched", () => {
  const out = runOn({ root: true, installed: ["postgresql", "redis-server"], running: [] });
  expect(out.code).toBe(0);
  expect(changes(out.calls).map((call) => call.split(" ").slice(0, 3).join(" "))).toEqual([
    "pg_ctlcluster --skip-systemctl-redirect 15",
    "redis-server --daemonize yes",
  ]);
  expect(out.hba).toBe("local all postgres peer\n");
});

test("only Redis missing, not root: names Redis alone; the command keeps a REDIS_URL set", () => {
  const out = runOn({ root: false, installed: ["postgresql"], running: ["postgresql"], env: { REDIS_URL: "redis://localhost:6390" } });
  expect(out.code).toBe(1);
  expect(out.stderr).toMatch(/^ensure-services: Redis at localhost:6390 not answering \(not installed: redis-server\)/);
  expect(out.stdout).toBe("sudo --preserve-env=REDIS_URL bash scripts/ensure-services.sh\n");
});

test("a Redis that wants a password is running: not started again", () => {
  const out = runOn({
    root: true,
    installed: ["postgresql", "redis-server"],
    running: ["postgresql"],
    env: { REDIS_URL: "redis://:pw@127.0.0.1:6379" },
    redisReply: "NOAUTH Authentication required.",
  });
  expect(out).toMatchObject({ code: 0, stderr: "" });
  expect(changes(out.calls)).toEqual([]);
});

test("DATABASE_URL names another role: created after the install; ports come from the URLs", () => {
  const out = runOn({
    root: true,
    installed: [],
    running: [],
    env: { DATABASE_URL: "postgresql://gen:secret@localhost:5432/gen", REDIS_URL: "redis://[::1]:6380/0" },
  });
  expect(out.code).toBe(0);
  expect(out.calls).toContain('psql -q -p 5432 -c CREATE ROLE "gen" LOGIN CREATEDB');
  expect(out.calls).toContain("redis-cli -h ::1 -p 6380 ping");
  expect(out.calls.some((call) => call.startsWith("redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6380 "))).toBe(true);
});

test("servers on another host are their operator's: nothing probed or installed", () => {
  const out = runOn({
    root: true,
    installed: [],
    running: [],
    env: { DATABASE_URL: "postgresql://postgres@db.example.invalid:5432/gen", REDIS_URL: "redis://cache.example.invalid:6379" },
  });
  expect(out).toMatchObject({ code: 0, calls: [] });
});

test("a start that never answers fails with one line after the wait", () => {
  const out = runOn({ root: true, installed: ["postgresql", "redis-server"], running: ["redis-server"], brokenStart: true });
  expect(out.code).toBe(1);
  expect(out.stderr).toContain("ensure-services: PostgreSQL at 127.0.0.1:5432 did not answer within 3 s");
});
