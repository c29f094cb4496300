import { readFileSync } from "node:fs";

/**
 * The `version` of a package.json, for `build_info`; "unknown" when unreadable. Callers name their
 * app's package.json relative to their own module, which holds for `src/` and the compiled `dist/` alike.
 */
export function packageVersion(packageJson: URL): string {
  try {
    const parsed: unknown = JSON.parse(readFileSync(packageJson, "utf8"));
    const version = (parsed as { version?: unknown }).version;
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}
