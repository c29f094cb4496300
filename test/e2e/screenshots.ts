import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";

/**
 * Where the browser tests keep their screenshots, as test artifacts a CI job can collect:
 * TEST_ARTIFACTS_DIR, else `test-artifacts/` at the repository root (git ignores it). Each run
 * overwrites the previous one's files.
 */
const ARTIFACTS_DIR = process.env.TEST_ARTIFACTS_DIR ?? path.join(import.meta.dirname, "..", "..", "test-artifacts");

/** A full-page screenshot under `<artifacts>/screenshots/<name>.png`; returns its path. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  const dir = path.join(ARTIFACTS_DIR, "screenshots");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
