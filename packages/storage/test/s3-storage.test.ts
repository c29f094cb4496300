import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import S3rver from "s3rver";
import { createS3Storage, createStorage, StorageError, type S3StorageOptions, type Storage } from "../src/index.ts";
import { readBody, startLoopbackServer, type LoopbackServer } from "./helpers/loopback-server.ts";

// The S3 backend against a real S3-compatible server (s3rver, in this process on 127.0.0.1 and a
// free port, objects in a temp dir): it parses the SDK's requests, stores, serves and deletes as
// S3 does, and answers S3's own errors (a missing bucket, an unknown access key; it does not check
// V4 signatures, so a wrong secret passes). The CDN URL is the
// bucket's own path-style address, so "served" is a plain GET of the URL a put returns.
const BUCKET = "media-bucket";
// s3rver's built-in account.
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

let dir: string;
let server: S3rver;
let endpoint: string;
let cdn: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gen-s3-test-"));
  server = new S3rver({ address: "127.0.0.1", port: 0, directory: dir, silent: true, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const address: AddressInfo = await server.run();
  endpoint = `http://127.0.0.1:${address.port}`;
  cdn = `${endpoint}/${BUCKET}`;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function s3(overrides: Partial<S3StorageOptions> = {}): Storage {
  return createS3Storage({ bucket: BUCKET, cdnUrl: cdn, endpoint, forcePathStyle: true, credentials: CREDENTIALS, maxAttempts: 1, ...overrides });
}

async function served(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
}

describe("S3 storage on an S3-compatible server", () => {
  it("stores the bytes under the key with the key's content type, served at the URL it returns", async () => {
    const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 7]);
    const stored = await s3().put("tasks/task_1/0.png", data, "image/png");
    expect(stored).toEqual({ key: "tasks/task_1/0.png", url: `${cdn}/tasks/task_1/0.png`, bytes: 7 });
    const got = await served(stored.url);
    expect(got.status).toBe(200);
    expect(got.type).toBe("image/png");
    expect(got.body.equals(data)).toBe(true);
  });

  it("stores one content type per extension, whatever spelling the caller used", async () => {
    const wav = await s3().put("tasks/t/0.wav", Buffer.from("RIFF"), "audio/x-wav");
    const txt = await s3().put("tasks/t/1.txt", Buffer.from("hello"), "text/plain");
    expect([(await served(wav.url)).type, (await served(txt.url)).type]).toEqual(["audio/wav", "text/plain; charset=utf-8"]);
  });

  it("is idempotent: the same key again gives the same result, and the latest bytes are served", async () => {
    const storage = s3();
    const first = await storage.put("tasks/t/0.json", Buffer.from('{"a":1}'), "application/json");
    const again = await storage.put("tasks/t/0.json", Buffer.from('{"a":2}'), "application/json");
    expect(again).toEqual({ ...first, bytes: 7 });
    expect((await served(again.url)).body.toString()).toBe('{"a":2}');
  });

  // One object per task directory: s3rver removes the objects of one DeleteObjects request in
  // parallel and then their emptied directories, and two in one directory race there (HTTP 500);
  // S3 has no directories. Paged listings and a failing DeleteObjects are in s3-retention.test.ts.
  it("deletes everything under a task's prefix only; nothing there is no error, and a second delete is a no-op", async () => {
    const storage = s3();
    const kept = await storage.put("tasks/keep/0.png", Buffer.from("k"), "image/png");
    const gone = await storage.put("tasks/gone/0.png", Buffer.from("g"), "image/png");
    await storage.deletePrefix("tasks/gone/");
    expect((await served(gone.url)).status).toBe(404);
    expect((await served(kept.url)).status).toBe(200);
    await expect(storage.deletePrefix("tasks/gone/")).resolves.toBeUndefined();
    await expect(storage.deletePrefix("tasks/never/")).resolves.toBeUndefined();
  });

  it("refuses bad keys before sending anything, for a put or a delete by prefix", async () => {
    const kept = await s3().put("tasks/bad/0.png", Buffer.from("x"), "image/png");
    await expect(s3().put("tasks/t/0.fail-storage", Buffer.from("x"), "application/octet-stream")).rejects.toThrow(StorageError);
    await expect(s3().put("../0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    await expect(s3().deletePrefix("../")).rejects.toThrow(StorageError);
    expect((await served(kept.url)).status).toBe(200);
  });

  it("turns the server's own refusals into StorageError: a missing bucket, an unknown access key", async () => {
    const noBucket = s3({ bucket: "no-such-bucket" });
    await expect(noBucket.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(/could not store .*NoSuchBucket.*HTTP 404/);
    await expect(noBucket.deletePrefix("tasks/t/")).rejects.toThrow(/NoSuchBucket.*HTTP 404/);
    const stranger = s3({ credentials: { accessKeyId: "NOT-AN-ACCOUNT", secretAccessKey: "whatever" } });
    await expect(stranger.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(/InvalidAccessKeyId.*HTTP 403/);
    await expect(stranger.deletePrefix("tasks/t/")).rejects.toThrow(/InvalidAccessKeyId.*HTTP 403/);
  });

  it("turns a refused connection into StorageError", async () => {
    const closed = await startLoopbackServer(() => {});
    const url = closed.url;
    await closed.close();
    const storage = s3({ endpoint: url });
    await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    await expect(storage.deletePrefix("tasks/t/")).rejects.toThrow(StorageError);
  });
});

// Faults a real server cannot be made to show: an S3 that answers 500 (InternalError), and one
// that accepts the connection and never answers. A server of our own stands in for those two.
describe("S3 storage against a failing server", () => {
  let fake: LoopbackServer;
  let requests: number;
  beforeAll(async () => {
    fake = await startLoopbackServer((req, res) => {
      void readBody(req).then(() => {
        requests++;
        res.writeHead(500, { "content-type": "application/xml" });
        res.end('<?xml version="1.0"?><Error><Code>InternalError</Code><Message>boom</Message></Error>');
      });
    });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    requests = 0;
  });

  it("turns a 500 into StorageError, for a put and a delete", async () => {
    const storage = s3({ endpoint: fake.url });
    const put = storage.put("tasks/t/0.png", Buffer.from("x"), "image/png");
    await expect(put).rejects.toThrow(StorageError);
    await expect(put).rejects.toThrow(/HTTP 500/);
    await expect(storage.deletePrefix("tasks/t/")).rejects.toThrow(/could not delete .*HTTP 500/);
    expect(requests).toBe(2);
  });

  it("gives up on a server that never answers after timeoutMs", async () => {
    const silent = await startLoopbackServer(() => {});
    try {
      const storage = s3({ endpoint: silent.url, timeoutMs: 300 });
      await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
      await expect(storage.deletePrefix("tasks/t/")).rejects.toThrow(StorageError);
    } finally {
      await silent.close();
    }
  });
});

describe("createStorage", () => {
  it("builds the S3 backend from the config's storage settings", async () => {
    const previous = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    // The SDK's default chain reads these; without them it would go looking for an instance role.
    process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey;
    try {
      const storage = createStorage({
        cdnUrl: cdn,
        storage: { backend: "s3", dir: "unused", s3Bucket: BUCKET, s3Region: "us-east-2", s3Endpoint: endpoint, s3ForcePathStyle: true },
      });
      const stored = await storage.put("tasks/cfg/0.gif", Buffer.from("GIF89a"), "image/gif");
      expect(stored.url).toBe(`${cdn}/tasks/cfg/0.gif`);
      expect((await served(stored.url)).body.toString()).toBe("GIF89a");
    } finally {
      restore("AWS_ACCESS_KEY_ID", previous.id);
      restore("AWS_SECRET_ACCESS_KEY", previous.secret);
    }
  });

  it("refuses the S3 backend without a bucket", () => {
    expect(() => createStorage({ cdnUrl: cdn, storage: { backend: "s3", dir: "unused" } })).toThrow(StorageError);
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
