import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createStorage, extensionFor } from "../src/index.ts";

describe("extensionFor", () => {
  it.each([
    ["image/png", "png"],
    ["image/jpeg", "jpg"],
    ["IMAGE/JPEG", "jpg"],
    ["image/webp", "webp"],
    ["image/gif", "gif"],
    ["video/mp4", "mp4"],
    ["video/webm", "webm"],
    ["audio/wav", "wav"],
    ["audio/x-wav", "wav"],
    ["audio/mpeg", "mp3"],
    ["audio/ogg", "ogg"],
    ["application/json; charset=utf-8", "json"],
    [" text/plain ;charset=UTF-8", "txt"],
  ])("maps %s to %s", (type, extension) => {
    expect(extensionFor(type)).toBe(extension);
  });

  it.each(["application/octet-stream", "text/html", "image/svg+xml", "application/x-sh", "", "png", "constructor", "__proto__"])(
    "has no extension for %j",
    (type) => {
      expect(extensionFor(type)).toBeUndefined();
    },
  );
});

describe("createStorage with the local backend", () => {
  it("stores under the configured directory and answers with CDN URLs", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gen-storage-test-"));
    try {
      const storage = createStorage({ cdnUrl: "http://127.0.0.1:9/cdn", storage: { backend: "local", dir, s3ForcePathStyle: false } });
      const stored = await storage.put("tasks/t/0.mp3", Buffer.from("ID3"), "audio/mpeg");
      expect(stored.url).toBe("http://127.0.0.1:9/cdn/tasks/t/0.mp3");
      expect(readFileSync(path.join(dir, "tasks/t/0.mp3"), "utf8")).toBe("ID3");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
