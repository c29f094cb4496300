/** An HTTP answer whose body passed the cap it was read with; `declared` when Content-Length said so first. */
export class AnswerTooLargeError extends Error {
  constructor(
    readonly maxBytes: number,
    readonly declared?: number,
  ) {
    super(declared === undefined ? `body exceeds ${maxBytes} bytes` : `Content-Length ${declared} exceeds ${maxBytes} bytes`);
    this.name = "AnswerTooLargeError";
  }
}
