export { hashPassword } from "./hash-password.ts";
export { verifyPassword } from "./verify-password.ts";
