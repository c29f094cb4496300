import { createHmac, timingSafeEqual } from "node:crypto";
import { TASK_ID_PATTERN } from "./ids.ts";

// Stateless: the token is the task id and its HMAC under UPSTREAM_CALLBACK_SECRET, so any gateway
// process checks it without a lookup, and nothing is stored or purged. The label keeps a MAC of
// this kind from ever matching one the same secret might sign for another purpose.
const LABEL = "upstream-callback\0";
const SEPARATOR = ".";
// base64url of a SHA-256 digest: 256 bits, unguessable.
const MAC_LENGTH = 43;

const macOf = (secret: string, taskId: string): string => createHmac("sha256", secret).update(LABEL).update(taskId).digest("base64url");

/** The token in a task's callback address: `<task id>.<HMAC>`, URL-safe. */
export function callbackToken(secret: string, taskId: string): string {
  return `${taskId}${SEPARATOR}${macOf(secret, taskId)}`;
}

/** The task a callback token names, or undefined when it is malformed or forged (compared in constant time). */
export function taskOfCallbackToken(secret: string, token: string): string | undefined {
  const dot = token.indexOf(SEPARATOR);
  if (dot === -1) return undefined;
  const taskId = token.slice(0, dot);
  const mac = token.slice(dot + 1);
  if (!TASK_ID_PATTERN.test(taskId) || mac.length !== MAC_LENGTH) return undefined;
  const expected = Buffer.from(macOf(secret, taskId));
  const given = Buffer.from(mac);
  // Equal lengths in characters may still differ in bytes (non-ASCII): timingSafeEqual would throw.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return taskId;
}
