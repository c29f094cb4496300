// Which workspace packages' dist/ is missing or older than their src/. Shared by `pnpm build
// --if-stale` (the test run's global setup), and `pnpm start` (warns: it runs dist/, not src/).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Written last by the build into each dist/: its time is the build's. */
export const STAMP = ".built";

/** Every workspace package with a src/ directory (apps/*, packages/*, as pnpm-workspace.yaml lists). */
export function workspacePackages() {
  const globs = readFileSync(path.join(ROOT, "pnpm-workspace.yaml"), "utf8")
    .split("\n")
    .map((line) => /^\s*-\s*["']?([^"'#]+?)["']?\s*$/.exec(line)?.[1])
    .filter(Boolean);
  const dirs = [];
  for (const glob of globs) {
    if (!glob.endsWith("/*")) throw new Error(`build: unsupported workspace pattern ${glob} (only "dir/*")`);
    const parent = path.join(ROOT, glob.slice(0, -2));
    if (!existsSync(parent)) continue;
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      const dir = path.join(parent, entry.name);
      if (entry.isDirectory() && existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "src"))) dirs.push(dir);
    }
  }
  return dirs.sort();
}

// Directories count too: deleting or renaming a file changes its directory's time.
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

export function isStale(pkg) {
  const stamp = path.join(pkg, "dist", STAMP);
  if (!existsSync(stamp)) return true;
  return newest(path.join(pkg, "src")) > statSync(stamp).mtimeMs;
}

export function stalePackages() {
  return workspacePackages().filter(isStale);
}
