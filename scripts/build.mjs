// `pnpm build`: compiles every workspace package (apps/* and packages/*) from src/ to dist/ with
// TypeScript's own compiler, file by file. Type checking is `pnpm typecheck` (one program over the
// whole repo, on sources); the root tsconfig's isolatedModules + verbatimModuleSyntax guarantee
// that each file compiles on its own, so this needs no project references and takes seconds.
// Relative `./x.ts` imports become `./x.js`; files in src/ that are not TypeScript (console
// assets) are copied as they are. `--if-stale` rebuilds only packages whose src/ changed since.
// A package needs nothing here: its package.json exports dist/ to Node and src/ under the
// "@gen/source" condition (docs/development.md). A package with a `build` script of its own (the
// published SDK, @gen/client) is built by that script instead.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT, STAMP, stalePackages, workspacePackages } from "./build-state.mjs";

const onlyStale = process.argv.includes("--if-stale");
const packages = onlyStale ? stalePackages() : workspacePackages();
if (packages.length === 0) process.exit(0);

const { default: ts } = await import("typescript");

function compilerOptions() {
  const file = path.join(ROOT, "tsconfig.json");
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT, file);
  return { ...options, noEmit: false, declaration: false, sourceMap: false, allowImportingTsExtensions: false, rewriteRelativeImportExtensions: true };
}

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else yield full;
  }
}

const options = compilerOptions();
const started = Date.now();
let compiled = 0;
let failed = false;
for (const pkg of packages) {
  const src = path.join(pkg, "src");
  const dist = path.join(pkg, "dist");
  if (JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).scripts?.build) {
    try {
      execFileSync("pnpm", ["run", "--silent", "build"], { cwd: pkg, stdio: "inherit" });
      writeFileSync(path.join(dist, STAMP), "");
    } catch {
      failed = true;
      console.error(`build: ${path.relative(ROOT, pkg)}: its build script failed`);
    }
    continue;
  }
  rmSync(dist, { recursive: true, force: true });
  for (const file of files(src)) {
    if (file.endsWith(".d.ts")) continue;
    const out = path.join(dist, path.relative(src, file));
    mkdirSync(path.dirname(out), { recursive: true });
    if (!file.endsWith(".ts")) {
      cpSync(file, out);
      continue;
    }
    const result = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: options, fileName: file, reportDiagnostics: true });
    for (const diagnostic of result.diagnostics ?? []) {
      failed = true;
      const line = diagnostic.file && diagnostic.start !== undefined ? `:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}` : "";
      console.error(`build: ${path.relative(ROOT, file)}${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
    }
    writeFileSync(out.replace(/\.ts$/, ".js"), result.outputText);
    compiled++;
  }
  if (!failed) writeFileSync(path.join(dist, STAMP), "");
}
if (failed) process.exit(1);
console.log(`build: ${packages.length} packages, ${compiled} files compiled to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
