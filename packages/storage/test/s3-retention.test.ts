import { createS3Storage, StorageError, type Storage } from "../src/index.ts";
import { readBody, startLoopbackServer, type LoopbackServer } from "./helpers/loopback-server.ts";

// deletePrefix and putArchive on the S3 backend, against a loopback bucket that knows PutObject,
// ListObjectsV2 (two keys a page, so the continuation is exercised) and DeleteObjects.
const PAGE = 2;
let bucket: Map<string, Buffer>;
let requests: string[];
let failDelete: boolean;
let fake: LoopbackServer;

const xmlEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");

beforeAll(async () => {
  fake = await startLoopbackServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const key = decodeURIComponent(url.pathname.replace(/^\/media-bucket\/?/, ""));
      requests.push(`${req.method} ${url.searchParams.has("delete") ? "delete" : url.searchParams.has("list-type") ? "list" : key}`);
      if (req.method === "PUT") {
        bucket.set(key, body);
        res.writeHead(200, { etag: '"0123"' }).end();
      } else if (req.method === "GET" && url.searchParams.get("list-type") === "2") {
        const prefix = url.searchParams.get("prefix") ?? "";
        const after = url.searchParams.get("continuation-token") ?? "";
        const keys = [...bucket.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
        const page = keys.slice(0, PAGE);
        const truncated = keys.length > PAGE;
        res
          .writeHead(200, { "content-type": "application/xml" })
          .end(
            `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>media-bucket</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount>` +
              `<IsTruncated>${truncated}</IsTruncated>${truncated ? `<NextContinuationToken>${xmlEscape(page[page.length - 1]!)}</NextContinuationToken>` : ""}` +
              page.map((k) => `<Contents><Key>${xmlEscape(k)}</Key><Size>${bucket.get(k)!.length}</Size></Contents>`).join("") +
              `</ListBucketResult>`,
          );
      } else if (req.method === "POST" && url.searchParams.has("delete")) {
        const keys = [...body.toString("utf8").matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
        if (failDelete) {
          res
            .writeHead(200, { "content-type": "application/xml" })
            .end(`<?xml version="1.0"?><DeleteResult><Error><Key>${keys[0]}</Key><Code>AccessDenied</Code><Message>denied</Message></Error></DeleteResult>`);
          return;
        }
        for (const k of keys) bucket.delete(k);
        res.writeHead(200, { "content-type": "application/xml" }).end(`<?xml version="1.0"?><DeleteResult></DeleteResult>`);
      } else {
        res.writeHead(400).end();
      }
    });
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  bucket = new Map();
  requests = [];
  failDelete = false;
});

function s3(): Storage {
  return createS3Storage({
    bucket: "media-bucket",
    cdnUrl: "https://cdn.example.test",
    endpoint: fake.url,
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret-for-tests" },
    maxAttempts: 1,
  });
}

test("deletePrefix lists the prefix page by page and deletes what it found, nothing else", async () => {
  const storage = s3();
  for (const key of ["tasks/task_a/0.png", "tasks/task_a/1.png", "tasks/task_a/2.png", "tasks/task_ab/0.png"]) {
    await storage.put(key, Buffer.from("x"), "image/png");
  }
  requests = [];
  await storage.deletePrefix("tasks/task_a/");
  expect([...bucket.keys()]).toEqual(["tasks/task_ab/0.png"]);
  expect(requests).toEqual(["GET list", "POST delete", "GET list", "POST delete"]);
  // Nothing left under it: one listing, no delete, no error.
  requests = [];
  await storage.deletePrefix("tasks/task_a/");
  expect(requests).toEqual(["GET list"]);
});

test("a key the bucket refused to delete is a StorageError", async () => {
  const storage = s3();
  await storage.put("tasks/task_a/0.png", Buffer.from("x"), "image/png");
  failDelete = true;
  await expect(storage.deletePrefix("tasks/task_a/")).rejects.toThrow(StorageError);
  expect(bucket.size).toBe(1);
});

test("a bad prefix is refused before any request", async () => {
  await expect(s3().deletePrefix("tasks/task_a")).rejects.toThrow(StorageError);
  await expect(s3().deletePrefix("../")).rejects.toThrow(StorageError);
  expect(requests).toEqual([]);
});

test("putArchive stores JSON lines under archive/ only", async () => {
  await s3().putArchive("archive/tasks/2026-11-27/run-task_a.jsonl", Buffer.from('{"id":"task_a"}\n'));
  expect(bucket.get("archive/tasks/2026-11-27/run-task_a.jsonl")?.toString()).toBe('{"id":"task_a"}\n');
  await expect(s3().putArchive("tasks/task_a/0.jsonl", Buffer.from("{}"))).rejects.toThrow(StorageError);
});
