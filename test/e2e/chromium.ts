import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Debian's Chromium (installed by scripts/install-chromium.sh, run by .ci/run and setup.sh), driven
 * by Playwright. Playwright gives it a fresh profile; the flags keep it off the network it would
 * call at start-up.
 */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/install-chromium.sh (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
