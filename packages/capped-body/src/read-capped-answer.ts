import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { readCappedBody } from "./read-capped-body.ts";

export interface CappedAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** Empty when `wantsBody` declined it. */
  body: Buffer;
}

/** What a got stream hands its "response" listeners: the head, before any byte of the body. */
interface AnswerHead {
  statusCode: number;
  headers: IncomingHttpHeaders;
}

/**
 * Reads an HTTP answer from a got stream into memory, never more than `maxBytes` of body (counted
 * after decompression, so a compressed bomb stops at the cap too), by readCappedBody. `wantsBody`
 * may decline the body of an answer (a redirect, an error status): the stream is closed after the
 * head. Rejects with AnswerTooLargeError, or with the stream's own error (time-out, network, abort).
 */
export function readCappedAnswer(stream: Readable, maxBytes: number, wantsBody: (head: AnswerHead) => boolean = () => true): Promise<CappedAnswer> {
  return new Promise<CappedAnswer>((resolve, reject) => {
    let responded = false;
    // Until the head comes, the stream's end is the answer's; after it, readCappedBody's.
    const beforeHead = (error: Error): void => {
      if (responded) return;
      responded = true;
      stream.destroy();
      reject(error);
    };
    stream.on("error", beforeHead);
    stream.on("end", () => beforeHead(new Error("the answer ended before its head")));
    stream.on("close", () => beforeHead(new Error("the answer was closed before it ended")));
    stream.on("response", (response: AnswerHead) => {
      if (responded) return;
      responded = true;
      const head = { statusCode: response.statusCode, headers: response.headers };
      if (!wantsBody(head)) {
        stream.destroy();
        resolve({ ...head, body: Buffer.alloc(0) });
        return;
      }
      readCappedBody(stream, maxBytes, response.headers["content-length"]).then((body) => resolve({ ...head, body }), reject);
    });
  });
}
