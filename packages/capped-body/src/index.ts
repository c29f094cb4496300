export { readCappedAnswer, type CappedAnswer } from "./read-capped-answer.ts";
export { readCappedBody } from "./read-capped-body.ts";
export { AnswerTooLargeError } from "./answer-too-large-error.ts";
