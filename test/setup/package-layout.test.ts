import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// What `pnpm build`, the "@gen/source" condition and `pnpm deploy --prod` rely on, for every
// workspace package, present and future (docs/development.md "A new package or app").
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const packages = ["apps", "packages"].flatMap((parent) =>
  readdirSync(path.join(ROOT, parent))
    .map((name) => path.join(parent, name))
    .filter((dir) => existsSync(path.join(ROOT, dir, "package.json")) && existsSync(path.join(ROOT, dir, "src"))),
);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sources(full);
    return full.endsWith(".ts") ? [full] : [];
  });
}

/** Packages a file needs at run time: `import type` / `export type` are erased, nothing else is. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0]))
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const packageName = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

test("there are workspace packages to check", () => {
  expect(packages.length).toBeGreaterThan(15);
});

test.each(packages)("%s: exports src/ under @gen/source and dist/ by default, ships dist/", (dir) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, dir, "package.json"), "utf8"));
  expect(pkg.type).toBe("module");
  // An app that only runs (src/main.ts) and is imported by nobody exports nothing: no entry to a file that does not exist.
  if (pkg.scripts?.build) return; // built by its own script for users outside the workspace: the next test
  if (existsSync(path.join(ROOT, dir, "src/index.ts"))) expect(pkg.exports).toEqual({ ".": { "@gen/source": "./src/index.ts", default: "./dist/index.js" } });
  else expect(pkg.exports).toBeUndefined();
  expect(pkg.files).toContain("dist");
});

test("the SDK exports src/ under @gen/source, and its ES module and CommonJS builds, with their declarations, to everyone else", () => {
  const built = packages.filter((dir) => JSON.parse(readFileSync(path.join(ROOT, dir, "package.json"), "utf8")).scripts?.build);
  expect(built).toEqual(["packages/client"]);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "packages/client/package.json"), "utf8"));
  const dist = {
    import: { types: "./dist/esm/index.d.ts", default: "./dist/esm/index.js" },
    require: { types: "./dist/cjs/index.d.ts", default: "./dist/cjs/index.js" },
  };
  expect(pkg.exports["."]).toEqual({ "@gen/source": "./src/index.ts", ...dist });
  expect(pkg.publishConfig.exports["."]).toEqual(dist);
  expect(pkg.files).toEqual(expect.arrayContaining(["dist/esm", "dist/cjs"]));
  expect(pkg.private).toBeUndefined();
});

test.each(packages)("%s: every package its src/ imports at run time is a dependency, not a devDependency", (dir) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, dir, "package.json"), "utf8"));
  const declared = new Set([pkg.name, ...Object.keys(pkg.dependencies ?? {})]);
  const undeclared = new Set<string>();
  for (const file of sources(path.join(ROOT, dir, "src"))) {
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith(".") || specifier.startsWith("node:") || builtinModules.includes(packageName(specifier))) continue;
      if (!declared.has(packageName(specifier))) undeclared.add(`${packageName(specifier)} (${path.relative(ROOT, file)})`);
    }
  }
  expect([...undeclared]).toEqual([]);
});
