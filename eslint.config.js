import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

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
    // Tests read JSON bodies whose shape is what they assert.
    files: ["**/test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
