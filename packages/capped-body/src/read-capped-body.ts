import type { Readable } from "node:stream";
import { AnswerTooLargeError } from "./answer-too-large-error.ts";

/**
 * Reads a body into memory, never more than `maxBytes`: a declared length (Content-Length) above
 * the cap is refused before any byte is read, and the stream is destroyed as soon as what arrived
 * passes it, so a body that is huge or never ends costs at most the cap. Rejects with
 * AnswerTooLargeError, the stream's own error, or an Error when it closes before its end.
 */
export function readCappedBody(body: Readable, maxBytes: number, declaredLength?: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
    };
    const refuse = (error: Error): void =>
      settle(() => {
        body.destroy();
        reject(error);
      });

    const declared = Number(declaredLength);
    if (declaredLength !== undefined && Number.isFinite(declared) && declared > maxBytes) return refuse(new AnswerTooLargeError(maxBytes, declared));
    body.on("data", (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > maxBytes) refuse(new AnswerTooLargeError(maxBytes));
      else chunks.push(chunk);
    });
    body.on("end", () => settle(() => resolve(Buffer.concat(chunks, received))));
    body.on("error", (error: Error) => settle(() => reject(error)));
    // Destroyed without an error (by its owner, say): no "end" and no "error" will come.
    body.on("close", () => settle(() => reject(new Error("the answer was closed before it ended"))));
  });
}
