export { hashPassword } from "./hash-password.ts";
export { HashingAbandoned, HashingBusy, hashingQueue, type HashingOptions, type HashingStats } from "./hashing-queue.ts";
export { needsRehash, verifyPassword } from "./verify-password.ts";
