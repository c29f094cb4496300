import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures/log-then-exit.ts");
const LINES = 5000;

/** Runs the fixture with stdout on a pipe or a file; resolves with its exit code and stdout lines. */
async function run(mode: string, stdout: "pipe" | "file" | "late pipe"): Promise<{ code: number | null; lines: string[] }> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "logger-exit-")), "out.log");
  const fd = stdout === "file" ? openSync(file, "w") : undefined;
  const child = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", FIXTURE], {
    env: { ...process.env, NODE_OPTIONS: "", MODE: mode, LINES: String(LINES), GO: stdout === "late pipe" && mode !== "sigterm" ? "1" : "" },
    stdio: ["ignore", fd ?? "pipe", "ignore", "ipc"],
  });
  let text = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  // "late pipe": nothing is read for half a second from the burst's start, so the pipe's 64 KiB fill
  // (a log collector that lags, or a loaded machine) and the child's writes meet a full pipe.
  const late = stdout === "late pipe";
  if (late) child.stdout?.pause();
  child.once("message", () => {
    if (mode === "sigterm") child.kill("SIGTERM");
    else child.send("go");
    if (late) setTimeout(() => child.stdout?.resume(), 500);
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  if (fd !== undefined) {
    closeSync(fd);
    text = readFileSync(file, "utf8");
  }
  return { code, lines: text.split("\n").filter((line) => line !== "") };
}

describe("lines logged just before the process ends are written", () => {
  test.each([
    ["exit1", "pipe", 1],
    ["exit1", "late pipe", 1],
    ["sigterm", "late pipe", 0],
    ["exit1", "file", 1],
    ["throw", "pipe", 1],
    ["end", "file", 0],
    ["sigterm", "pipe", 0],
    ["sigterm", "file", 0],
  ] as const)(
    "%s with stdout on a %s",
    async (mode, stdout, expectedCode) => {
      const { code, lines } = await run(mode, stdout);
      expect(code).toBe(expectedCode);
      expect(lines).toHaveLength(LINES);
      // Whole JSON lines, in order.
      expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).toEqual(Array.from({ length: LINES }, (_, i) => i));
    },
    30_000,
  );
});
