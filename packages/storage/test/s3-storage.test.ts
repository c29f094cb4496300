import type { IncomingHttpHeaders } from "node:http";
import { createS3Storage, createStorage, StorageError, type Storage } from "../src/index.ts";
import { readBody, startLoopbackServer, type LoopbackServer } from "./helpers/loopback-server.ts";

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const CDN = "https://cdn.example.test/media";
const CREDENTIALS = { accessKeyId: "AKIDTEST", secretAccessKey: "secret-for-tests" };

let fake: LoopbackServer;
let requests: RecordedRequest[];
let answer: { status: number; body: string };

// Just enough of S3 for PutObject, path-style: PUT /<bucket>/<key>.
beforeAll(async () => {
  fake = await startLoopbackServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      requests.push({ method: req.method ?? "", path: decodeURIComponent(url.pathname), headers: req.headers, body });
      res.writeHead(answer.status, answer.status === 200 ? { etag: '"0123456789abcdef"' } : { "content-type": "application/xml" });
      res.end(answer.body);
    });
  });
});

afterAll(() => fake.close());

beforeEach(() => {
  requests = [];
  answer = { status: 200, body: "" };
});

function s3(): Storage {
  return createS3Storage({
    bucket: "media-bucket",
    cdnUrl: CDN,
    region: "eu-west-1",
    endpoint: fake.url,
    forcePathStyle: true,
    credentials: CREDENTIALS,
    maxAttempts: 1,
  });
}

describe("S3 storage", () => {
  it("puts the object under the key with its bytes and content type, and returns the CDN URL", async () => {
    const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 7]);
    const stored = await s3().put("tasks/task_1/0.png", data, "image/png");
    expect(stored).toEqual({ key: "tasks/task_1/0.png", url: `${CDN}/tasks/task_1/0.png`, bytes: 7 });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe("PUT");
    expect(request?.path).toBe("/media-bucket/tasks/task_1/0.png");
    expect(request?.body.equals(data)).toBe(true);
    expect(request?.headers["content-type"]).toBe("image/png");
    expect(request?.headers["content-length"]).toBe("7");
    expect(request?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/s3\/aws4_request/);
  });

  it("stores one content type per extension, whatever spelling the caller used", async () => {
    await s3().put("tasks/t/0.wav", Buffer.from("RIFF"), "audio/x-wav");
    await s3().put("tasks/t/1.txt", Buffer.from("hello"), "text/plain");
    expect(requests.map((request) => request.headers["content-type"])).toEqual(["audio/wav", "text/plain; charset=utf-8"]);
  });

  it("is idempotent: the same key again is the same PUT and the same result", async () => {
    const storage = s3();
    const first = await storage.put("tasks/t/0.json", Buffer.from("{}"), "application/json");
    const again = await storage.put("tasks/t/0.json", Buffer.from("{}"), "application/json");
    expect(again).toEqual(first);
    expect(requests.map((request) => request.path)).toEqual(["/media-bucket/tasks/t/0.json", "/media-bucket/tasks/t/0.json"]);
  });

  it("turns a 500 into StorageError", async () => {
    answer = { status: 500, body: '<?xml version="1.0"?><Error><Code>InternalError</Code><Message>boom</Message></Error>' };
    const put = s3().put("tasks/t/0.png", Buffer.from("x"), "image/png");
    await expect(put).rejects.toThrow(StorageError);
    await expect(put).rejects.toThrow(/HTTP 500/);
    expect(requests).toHaveLength(1);
  });

  it("turns a refused connection into StorageError", async () => {
    const closed = await startLoopbackServer(() => {});
    const url = closed.url;
    await closed.close();
    const storage = createS3Storage({ bucket: "b", cdnUrl: CDN, endpoint: url, forcePathStyle: true, credentials: CREDENTIALS, maxAttempts: 1 });
    await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
  });

  it("gives up on a server that never answers after timeoutMs", async () => {
    const silent = await startLoopbackServer(() => {});
    try {
      const storage = createS3Storage({
        bucket: "b",
        cdnUrl: CDN,
        endpoint: silent.url,
        forcePathStyle: true,
        credentials: CREDENTIALS,
        maxAttempts: 1,
        timeoutMs: 300,
      });
      await expect(storage.put("tasks/t/0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    } finally {
      await silent.close();
    }
  });

  it("refuses bad keys and the storage-fault file before sending anything", async () => {
    await expect(s3().put("tasks/t/0.fail-storage", Buffer.from("x"), "application/octet-stream")).rejects.toThrow(StorageError);
    await expect(s3().put("../0.png", Buffer.from("x"), "image/png")).rejects.toThrow(StorageError);
    expect(requests).toEqual([]);
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
        cdnUrl: CDN,
        storage: { backend: "s3", dir: "unused", s3Bucket: "cfg-bucket", s3Region: "us-east-2", s3Endpoint: fake.url, s3ForcePathStyle: true },
      });
      const stored = await storage.put("tasks/t/0.gif", Buffer.from("GIF89a"), "image/gif");
      expect(stored.url).toBe(`${CDN}/tasks/t/0.gif`);
      expect(requests[0]?.path).toBe("/cfg-bucket/tasks/t/0.gif");
    } finally {
      restore("AWS_ACCESS_KEY_ID", previous.id);
      restore("AWS_SECRET_ACCESS_KEY", previous.secret);
    }
  });

  it("refuses the S3 backend without a bucket", () => {
    expect(() => createStorage({ cdnUrl: CDN, storage: { backend: "s3", dir: "unused" } })).toThrow(StorageError);
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
