import { createHash, randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export const API_KEY_PATTERN = /^sk_[0-9A-Za-z]{40}$/;

/** `sk_` + 40 base62 characters; shown once, stored only as its SHA-256. */
export function newApiKey(): string {
  let body = "";
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(62)];
  return `sk_${body}`;
}

export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");
