import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { loadConfig } from "@gen/config";

// .env.example lists every variable of docs/configuration.md with its default; it is generated from
// there (scripts/env-example.mjs), and the config parser must read it as exactly its defaults.
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const example = readFileSync(path.join(ROOT, ".env.example"), "utf8");
const documented = [...readFileSync(path.join(ROOT, "docs/configuration.md"), "utf8").matchAll(/^\| (`[A-Z][^|]*)\|/gm)].flatMap((row) =>
  [...row[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!),
);

/** NAME=value lines, and the names of every line, commented out or not. */
function parseExample(text: string): { active: Record<string, string>; names: string[] } {
  const active: Record<string, string> = {};
  const names: string[] = [];
  for (const line of text.split("\n")) {
    const match = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    names.push(match[2]!);
    if (!match[1]) active[match[2]!] = match[3]!;
  }
  return { active, names };
}

test("it is what scripts/env-example.mjs makes of docs/configuration.md", async () => {
  await expect(run(process.execPath, [path.join(ROOT, "scripts/env-example.mjs"), "--check"])).resolves.toBeDefined();
});

test("every documented variable, once, in the documented order", () => {
  const { names } = parseExample(example);
  expect(names).toEqual(documented);
  expect(new Set(names).size).toBe(names.length);
});

test("the config parser reads the listed values as exactly its defaults", () => {
  const { active } = parseExample(example);
  expect(Object.keys(active).length).toBeGreaterThan(40);
  expect(loadConfig(active)).toEqual(loadConfig({}));
});

test("every variable the config parser reads is listed", () => {
  const { names } = parseExample(example);
  const read = new Set<string>();
  const recording = (env: Record<string, string>) =>
    new Proxy(env, {
      get(target, key) {
        if (typeof key === "string") read.add(key);
        return target[key as string];
      },
    });
  // The defaults, and the branches that read more: another Redis topology, S3 storage, callbacks, retention.
  loadConfig(recording({}));
  loadConfig(recording({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_SENTINEL_NAME: "gen" }));
  loadConfig(recording({ REDIS_CLUSTER_NODES: "127.0.0.1:7000", QUEUE_PREFIX: "{gen}" }));
  loadConfig(recording({ STORAGE_BACKEND: "s3", S3_BUCKET: "media", S3_REGION: "eu-west-1" }));
  loadConfig(recording({ UPSTREAM_CALLBACK_URL: "https://gen.example.com", UPSTREAM_CALLBACK_SECRET: "x".repeat(32) }));
  loadConfig(recording({ TASK_RETENTION_DAYS: "30", MEDIA_RETENTION_DAYS: "7" }));
  expect([...read].filter((name) => !names.includes(name))).toEqual([]);
});
