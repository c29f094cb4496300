/** @jest-config-loader esbuild-register */
import type { Config } from "jest";
import base from "./jest.config.ts";

// Redis Cluster and Sentinel topologies of the suite's own (redis-server on loopback), failed over
// under load: one file at a time, with room for slow elections on a busy machine.
const config: Config = {
  ...base,
  testMatch: ["<rootDir>/test/cluster/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/"],
  testTimeout: 600000,
  maxWorkers: 1,
};

export default config;
