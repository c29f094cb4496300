import { PassThrough } from "node:stream";
import { AnswerTooLargeError, readCappedAnswer } from "@gen/capped-body";

// A got stream stands in as a PassThrough that emits "response" with the head before its body.
function answer(statusCode: number, headers: Record<string, string> = {}) {
  const stream = new PassThrough();
  const read = (maxBytes: number, wantsBody?: (head: { statusCode: number }) => boolean) => {
    const pending = readCappedAnswer(stream, maxBytes, wantsBody);
    stream.emit("response", { statusCode, headers });
    return pending;
  };
  return { stream, read };
}

test("reads a body up to the cap exactly, with the head", async () => {
  const { stream, read } = answer(200, { "content-type": "application/json" });
  const pending = read(6);
  stream.end("abcdef");
  await expect(pending).resolves.toEqual({ statusCode: 200, headers: { "content-type": "application/json" }, body: Buffer.from("abcdef") });
});

test("a body one byte over the cap is refused and the stream destroyed at once", async () => {
  const { stream, read } = answer(200);
  const pending = read(6);
  stream.write("abcd");
  stream.write("efg");
  await expect(pending).rejects.toEqual(new AnswerTooLargeError(6));
  expect(stream.destroyed).toBe(true);
});

test("a declared Content-Length over the cap is refused before any byte is read", async () => {
  const { stream, read } = answer(200, { "content-length": "734003200" });
  await expect(read(1024)).rejects.toMatchObject({ name: "AnswerTooLargeError", declared: 734003200, message: "Content-Length 734003200 exceeds 1024 bytes" });
  expect(stream.destroyed).toBe(true);
});

test("an answer whose body is declined ends after its head, whatever its size", async () => {
  const { stream, read } = answer(302, { location: "http://x.test/", "content-length": "734003200" });
  await expect(read(1024, (head) => head.statusCode === 200)).resolves.toMatchObject({ statusCode: 302, body: Buffer.alloc(0) });
  expect(stream.destroyed).toBe(true);
});

test("the stream's own error, or a close without an end, rejects: never a promise left pending", async () => {
  const failing = answer(200);
  const failed = failing.read(1024);
  failing.stream.destroy(new Error("socket hang up"));
  await expect(failed).rejects.toThrow("socket hang up");
  const closing = answer(200);
  const closed = closing.read(1024);
  closing.stream.destroy();
  await expect(closed).rejects.toThrow("the answer was closed before it ended");
});
