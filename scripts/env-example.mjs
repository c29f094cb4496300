// Writes .env.example from docs/configuration.md, the one list of the apps' variables: every
// variable in the order documented, `NAME=default` when the default is a plain value, commented out
// (`# NAME=`) when there is none or it is derived from another variable. `--check` writes nothing
// and exits 1 when the file differs (test/setup/env-example.test.ts also loads the file through
// the config parser and expects exactly the defaults).
//   node scripts/env-example.mjs [--check]
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./build-state.mjs";

const DOC = path.join(ROOT, "docs", "configuration.md");
const TARGET = path.join(ROOT, ".env.example");

/** [name, default or null] per documented variable, from the table rows of docs/configuration.md. */
export function documentedVariables(markdown) {
  const variables = [];
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const [names, defaults] = line.split(" | ");
    const list = [...names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]);
    // "`20`, `40`" gives one default per name; "unset" or one value alone stands for all of them.
    const parts = defaults.split(/,\s+(?=`|unset|empty)/).map((part) => part.trim());
    list.forEach((name, i) => variables.push([name, plainDefault(parts.length === list.length ? parts[i] : parts[0])]));
  }
  return variables;
}

/** `value` alone (a unit in brackets may follow); anything else (unset, empty, derived) is null. */
function plainDefault(cell) {
  const match = /^`([^`$<>]*)`(\s*\([^)]*\))?$/.exec(cell ?? "");
  return match ? match[1] : null;
}

// Set at all, these act differently from their default, so the default is shown commented out:
// UPSTREAM_URL set makes `pnpm start` run no upstream simulator for the catalog's `http` routes;
// MODEL_CATALOG set is a path from the working directory, where unset finds the shipped catalog
// from wherever the app runs (an image's /app, say).
const PRESENCE_MATTERS = new Set(["UPSTREAM_URL", "MODEL_CATALOG"]);

export function envExample(markdown) {
  const lines = [
    "# Every variable the apps read, with its default (generated from docs/configuration.md by",
    "# scripts/env-example.mjs; the meaning of each is there). Commented out: no default, one derived",
    "# from another variable, or a default that acts differently once set (UPSTREAM_URL: `pnpm start`",
    "# runs no upstream simulator; MODEL_CATALOG: a path from the working directory). Copy to .env",
    "# (or set the variables) and change what you need.",
  ];
  for (const [name, value] of documentedVariables(markdown)) {
    lines.push(value === null ? `# ${name}=` : PRESENCE_MATTERS.has(name) ? `# ${name}=${value}` : `${name}=${value}`);
  }
  return `${lines.join("\n")}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const wanted = envExample(readFileSync(DOC, "utf8"));
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(TARGET, "utf8");
    } catch {
      // missing: differs
    }
    if (current !== wanted) {
      console.error(".env.example is not what docs/configuration.md gives: run `node scripts/env-example.mjs`");
      process.exit(1);
    }
  } else {
    writeFileSync(TARGET, wanted);
  }
}
