import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLocalStorage, StorageError } from "../src/index.ts";

const CDN = "http://127.0.0.1:8080/cdn";
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gen-storage-test-"));
});

afterEach(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe("local storage", () => {
  it("writes the bytes under the key, creating directories, and returns the CDN URL", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const stored = await storage.put("tasks/task_abc/0.png", data, "image/png");
    expect(stored).toEqual({ key: "tasks/task_abc/0.png", url: `${CDN}/tasks/task_abc/0.png`, bytes: 7 });
    expect(readFileSync(path.join(dir, "tasks/task_abc/0.png")).equals(data)).toBe(true);
    expect(listFiles(dir)).toEqual(["tasks/task_abc/0.png"]);
  });

  it("joins the CDN URL without a doubled slash", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: `${CDN}/` });
    expect((await storage.put("a/1.txt", Buffer.from("hi"), "text/plain; charset=utf-8")).url).toBe(`${CDN}/a/1.txt`);
  });

  it("is idempotent: the same key again gives the same result and the latest bytes", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    const first = await storage.put("tasks/t/0.wav", Buffer.from("one"), "audio/wav");
    const again = await storage.put("tasks/t/0.wav", Buffer.from("one"), "audio/wav");
    expect(again).toEqual(first);
    await storage.put("tasks/t/0.wav", Buffer.from("two!"), "audio/x-wav");
    expect(readFileSync(path.join(dir, "tasks/t/0.wav"), "utf8")).toBe("two!");
    expect(listFiles(dir)).toEqual(["tasks/t/0.wav"]);
  });

  it("replaces a file by rename: an open or linked old file keeps its bytes, no temp file is left", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    const target = path.join(dir, "tasks/t/0.mp4");
    await storage.put("tasks/t/0.mp4", Buffer.alloc(4096, 1), "video/mp4");
    // A hard link keeps the old inode: an in-place write would change it, a rename cannot.
    linkSync(target, path.join(dir, "old-inode"));
    await storage.put("tasks/t/0.mp4", Buffer.alloc(8192, 2), "video/mp4");
    expect(readFileSync(path.join(dir, "old-inode")).equals(Buffer.alloc(4096, 1))).toBe(true);
    expect(readFileSync(target).equals(Buffer.alloc(8192, 2))).toBe(true);
    expect(listFiles(dir)).toEqual(["old-inode", "tasks/t/0.mp4"]);
  });

  it("never leaves a mix of two concurrent writes to one key", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    const versions = Array.from({ length: 12 }, (_, index) => Buffer.alloc(256 * 1024 + index, index + 1));
    await Promise.all(versions.map((data) => storage.put("tasks/t/race.webp", data, "image/webp")));
    const final = readFileSync(path.join(dir, "tasks/t/race.webp"));
    expect(versions.some((data) => data.equals(final))).toBe(true);
    expect(listFiles(dir)).toEqual(["tasks/t/race.webp"]);
  });

  it.each([
    ["a parent segment", "tasks/../../etc/passwd.txt"],
    ["a leading parent segment", "../outside.png"],
    ["a dot segment", "tasks/./0.png"],
    ["a hidden segment", "tasks/.hidden/0.png"],
    ["a hidden file", "tasks/t/.0.png"],
    ["an absolute path", "/etc/0.png"],
    ["a backslash", "tasks\\t\\0.png"],
    ["a space", "tasks/t/0 1.png"],
    ["a percent sign", "tasks/t/%2e%2e.png"],
    ["a non-ASCII letter", "tasks/t/é.png"],
    ["a NUL byte", "tasks/t/0.png\u0000.txt"],
    ["an empty segment", "tasks//0.png"],
    ["a trailing slash", "tasks/t/"],
    ["an empty key", ""],
    ["no extension", "tasks/t/0"],
    ["the storage-fault extension", "tasks/t/0.fail-storage"],
    ["an extension outside the list", "tasks/t/0.bin"],
    ["an HTML extension", "tasks/t/0.html"],
    ["an upper-case extension", "tasks/t/0.PNG"],
  ])("refuses a key with %s", async (_what, key) => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await expect(storage.put(key, Buffer.from("x"), "image/png")).rejects.toBeInstanceOf(StorageError);
    expect(listFiles(dir)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses what the simulated provider sends to ask for 80005", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    const put = storage.put("tasks/t/0.fail-storage", Buffer.from("simulated storage failure\n"), "application/octet-stream");
    await expect(put).rejects.toThrow(StorageError);
    await expect(put).rejects.toThrow(/fail-storage/);
  });

  it("refuses a content type that does not match the extension", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await expect(storage.put("tasks/t/0.png", Buffer.from("<script>"), "text/html")).rejects.toThrow(StorageError);
    await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/jpeg")).rejects.toThrow(StorageError);
    expect(listFiles(dir)).toEqual([]);
  });

  it("throws StorageError when the directory cannot be created", async () => {
    const blocker = path.join(dir, "not-a-dir");
    writeFileSync(blocker, "a file where a directory should be");
    const storage = createLocalStorage({ dir: blocker, cdnUrl: CDN });
    const put = storage.put("tasks/t/0.png", Buffer.from("x"), "image/png");
    await expect(put).rejects.toThrow(StorageError);
    await expect(put).rejects.toHaveProperty("cause.code", "ENOTDIR");
  });

  it("throws StorageError when the target is a directory, and cleans up its temp file", async () => {
    mkdirSync(path.join(dir, "tasks/t/0.png"), { recursive: true });
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    expect(readdirSync(path.join(dir, "tasks/t"))).toEqual(["0.png"]);
  });

  // chmod does not stop root, so that case only runs for other users.
  const asNonRoot = process.getuid?.() === 0 ? it.skip : it;
  asNonRoot("throws StorageError when the directory is read-only", async () => {
    mkdirSync(path.join(dir, "tasks"));
    chmodSync(dir, 0o555);
    chmodSync(path.join(dir, "tasks"), 0o555);
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    chmodSync(path.join(dir, "tasks"), 0o755);
    expect(existsSync(path.join(dir, "tasks/t"))).toBe(false);
  });
  it("deletes the given files and their emptied task directories; a missing key is no error", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await storage.put("tasks/gone/0.png", Buffer.from("a"), "image/png");
    await storage.put("tasks/gone/1.png", Buffer.from("b"), "image/png");
    await storage.put("tasks/half/0.png", Buffer.from("c"), "image/png");
    await storage.put("tasks/half/1.png", Buffer.from("d"), "image/png");
    await storage.delete(["tasks/gone/0.png", "tasks/gone/1.png", "tasks/half/0.png", "tasks/never/0.png"]);
    expect(listFiles(dir)).toEqual(["tasks/half/1.png"]);
    expect(existsSync(path.join(dir, "tasks/gone"))).toBe(false);
    expect(existsSync(dir)).toBe(true);
    await expect(storage.delete(["tasks/gone/0.png"])).resolves.toBeUndefined();
  });

  it("refuses a bad key in a delete before removing anything", async () => {
    const storage = createLocalStorage({ dir, cdnUrl: CDN });
    await storage.put("tasks/t/0.png", Buffer.from("a"), "image/png");
    await expect(storage.delete(["tasks/t/0.png", "../outside.png"])).rejects.toBeInstanceOf(StorageError);
    expect(listFiles(dir)).toEqual(["tasks/t/0.png"]);
  });
});
