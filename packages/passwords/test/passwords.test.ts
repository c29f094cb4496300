import { hashPassword, verifyPassword } from "@gen/passwords";

describe("operator passwords", () => {
  it("hashes with scrypt and a fresh salt, never storing the password", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
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
});
