export { hashPassword } from "./hash-password.ts";
export { needsRehash, verifyPassword } from "./verify-password.ts";
