import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { AnswerTooLargeError } from "./answer-too-large-error.ts";

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
 * after decompression, so a compressed bomb stops at the cap too). A Content-Length above the cap
 * is refused before any byte is read, and the stream is destroyed as soon as what arrived passes
 * it, so an answer that is huge or never ends costs at most the cap. `wantsBody` may decline the
 * body of an answer (a redirect, an error status): the stream is closed after the head.
 * Rejects with AnswerTooLargeError, or with the stream's own error (time-out, network, abort).
 */
export function readCappedAnswer(stream: Readable, maxBytes: number, wantsBody: (head: AnswerHead) => boolean = () => true): Promise<CappedAnswer> {
  return new Promise<CappedAnswer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let head: AnswerHead | undefined;
    let settled = false;

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
    };
    const refuse = (error: Error): void =>
      settle(() => {
        stream.destroy();
        reject(error);
      });

    stream.on("response", (response: AnswerHead) => {
      head = { statusCode: response.statusCode, headers: response.headers };
      if (!wantsBody(head)) {
        const done = head;
        settle(() => {
          stream.destroy();
          resolve({ ...done, body: Buffer.alloc(0) });
        });
        return;
      }
      const declared = Number(response.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) refuse(new AnswerTooLargeError(maxBytes, declared));
    });
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > maxBytes) refuse(new AnswerTooLargeError(maxBytes));
      else chunks.push(chunk);
    });
    stream.on("end", () => {
      const done = head;
      if (!done) return refuse(new Error("the answer ended before its head"));
      settle(() => resolve({ ...done, body: Buffer.concat(chunks, received) }));
    });
    stream.on("error", (error: Error) => settle(() => reject(error)));
    // Destroyed without an error (by its owner, say): no "end" and no "error" will come.
    stream.on("close", () => settle(() => reject(new Error("the answer was closed before it ended"))));
  });
}
