export { readCappedAnswer, type CappedAnswer } from "./read-capped-answer.ts";
export { AnswerTooLargeError } from "./answer-too-large-error.ts";
