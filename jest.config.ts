/** @jest-config-loader esbuild-register */
import type { Config } from "jest";

// ESM throughout (got is ESM-only): swc strips types and keeps `import`, Node runs the modules.
const config: Config = {
  testEnvironment: "node",
  // Workspace packages resolve to their TypeScript sources (src/), not to the compiled dist/.
  testEnvironmentOptions: { customExportConditions: ["@gen/source", "node", "node-addons"] },
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } }],
  },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testMatch: ["<rootDir>/apps/*/test/**/*.test.ts", "<rootDir>/packages/*/test/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  // The fault and cluster suites stop and kill services; they run on their own (`pnpm test:faults`, `pnpm test:cluster`).
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/faults/", "<rootDir>/test/cluster/"],
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  testTimeout: 30000,
  maxWorkers: 2,
};

export default config;
