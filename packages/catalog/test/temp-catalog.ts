import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const dirs: string[] = [];

/** Writes `content` (JSON unless already a string) to a fresh temp file and returns its path. */
export function writeTempCatalog(content: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gen-catalog-"));
  dirs.push(dir);
  const file = path.join(dir, "models.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

export function removeTempCatalogs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A minimal valid entry; override what the test is about. */
export function entry(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "test-image",
    endpoint: "images",
    provider: "simulated",
    moderationRefund: { output: 0 },
    pricing: { method: "flat", credits: 1 },
    ...overrides,
  };
}
