import { randomBytes, scryptSync } from "node:crypto";
import { hashPassword, needsRehash, verifyPassword } from "@gen/passwords";

/** A hash as the first release stored it (N = 2^15), before the parameters were raised. */
function legacyHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password.normalize("NFC"), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return ["scrypt", 2 ** 15, 8, 1, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

describe("operator passwords", () => {
  it("hashes with scrypt and a fresh salt, never storing the password", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("horse");
  });

  it("verifies the right password only", async () => {
    const stored = await hashPassword("s3cret-Pass");
    await expect(verifyPassword("s3cret-Pass", stored)).resolves.toBe(true);
    await expect(verifyPassword("s3cret-pass", stored)).resolves.toBe(false);
    await expect(verifyPassword("", stored)).resolves.toBe(false);
  });

  it("answers false for a missing or malformed hash", async () => {
    await expect(verifyPassword("x", null)).resolves.toBe(false);
    await expect(verifyPassword("x", "plain-text")).resolves.toBe(false);
    await expect(verifyPassword("x", "scrypt$99999999$8$1$AA$AA")).resolves.toBe(false);
  });

  it("still verifies hashes made with the older parameters, and says they need a rehash", async () => {
    const old = legacyHash("an older long password");
    await expect(verifyPassword("an older long password", old)).resolves.toBe(true);
    await expect(verifyPassword("an older long password!", old)).resolves.toBe(false);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash(await hashPassword("an older long password"))).toBe(false);
  });

  it("refuses parameters that would need more memory than allowed, without throwing", async () => {
    await expect(verifyPassword("x", "scrypt$1073741824$8$1$AAAA$AAAA")).resolves.toBe(false);
    await expect(verifyPassword("x", "scrypt$131072$64$1$AAAA$AAAA")).resolves.toBe(false);
  });

  it("answers many concurrent checks correctly (they queue for hashing slots)", async () => {
    const stored = await hashPassword("queue for it please");
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => verifyPassword(i % 2 === 0 ? "queue for it please" : "wrong", stored)));
    expect(results).toEqual([true, false, true, false, true, false]);
  });
});
