// The SDK as published: ES modules (dist/esm) and CommonJS (dist/cjs), each with its .d.ts, so
// `import` and `require` both get code and types. TypeScript's own compiler twice (one pass per
// module format) rather than a bundler: the files map one to one onto src/, nothing to bundle, and
// no tool beyond the compiler the repo already has. The API types are generated first, from the
// OpenAPI document (generate-api-types.ts).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
// Run by `pnpm run build`: the package's own node_modules/.bin is on PATH.
const run = (command, args) => execFileSync(command, args, { cwd: root, stdio: "inherit" });

run("tsx", ["--conditions=@gen/source", "scripts/generate-api-types.ts"]);
rmSync(path.join(root, "dist"), { recursive: true, force: true });
run("tsc", ["-p", "tsconfig.build.json", "--outDir", "dist/esm"]);
run("tsc", ["-p", "tsconfig.build.json", "--outDir", "dist/cjs", "--module", "commonjs", "--moduleResolution", "node10"]);
// Node (and TypeScript) read a file's module format from the nearest package.json.
writeFileSync(path.join(root, "dist", "cjs", "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);

// The compiler rewrites `./x.ts` imports to `./x.js` in code but keeps them in declarations;
// a consumer's compiler resolves `./x.js` to the `./x.d.ts` beside it.
for (const format of ["esm", "cjs"]) {
  for (const file of walk(path.join(root, "dist", format))) {
    if (!file.endsWith(".d.ts")) continue;
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/(from\s+|import\()"(\.{1,2}\/[^"]+)\.ts"/g, '$1"$2.js"'));
  }
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
