/** @jest-config-loader esbuild-register */
import type { Config } from "jest";
import base from "./jest.config.ts";

// Fault scenarios kill processes and stop services: one file at a time, with room for slow recovery.
const config: Config = {
  ...base,
  testMatch: ["<rootDir>/test/faults/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/"],
  testTimeout: 300000,
  maxWorkers: 1,
};

export default config;
