import { readFileSync } from "node:fs";
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

// Every public error code (Err.*, Wf.*), read from the one file that spells them out; code says
// `Err.InsufficientCredits`, never 30001. Read as text because this config runs before any build.
const ERROR_CODES = [...readFileSync(new URL("packages/errors/src/error-codes.ts", import.meta.url), "utf8").matchAll(/^\s+\w+: (\d{5}),$/gm)].map((m) => m[1]);
if (ERROR_CODES.length === 0) throw new Error("eslint.config.js: no error codes found in packages/errors/src/error-codes.ts");

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/generated/**", "**/dist/**", "var/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-imports": ["error", { patterns: [{ group: ["@gen/gateway", "**/apps/gateway/**"], message: "Shared code lives in packages/." }] }],
    },
  },
  {
    // The gateway itself, and end-to-end tests that drive the gateway and the worker together.
    files: ["apps/gateway/**", "test/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    // No bare public error code in product code (docs/development.md#vocabulary). Tests keep the
    // literal numbers: they assert the contract.
    files: ["apps/*/src/**/*.ts", "packages/*/src/**/*.ts"],
    ignores: ["packages/errors/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: `Literal[raw=/^(${ERROR_CODES.join("|")})$/]`,
          message: "A public error code by name: Err.X or Wf.X from @gen/errors (docs/development.md#vocabulary).",
        },
      ],
    },
  },
  {
    // Tests read JSON bodies whose shape is what they assert.
    files: ["**/test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
