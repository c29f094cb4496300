/** Fault injection of the upstream simulator, written into any string of the submitted input. */
export interface UpDirectives {
  submit500: boolean;
  /** A provider's quota: the first N submits of one `reference` answer 429 with Retry-After: 1. */
  submit429?: number;
  reject: boolean;
  policyInput: boolean;
  policyOutput: boolean;
  fail: boolean;
  noUrls: boolean;
  hang: boolean;
  delayMs?: number;
  /** Status the output files answer with instead of their content. */
  badFile?: 404 | 500;
  /** A hostile upstream: the output URL it hands out instead of its own file URLs. */
  outputUrl?: string;
  /** A hostile upstream: its file URLs redirect here. */
  redirectFile?: string;
  /** A hostile upstream: files keep their Content-Type but the bytes are an HTML page. */
  mislabel: boolean;
  /** A hostile upstream: files are served with this Content-Type instead of their own. */
  fileType?: string;
  /** A broken upstream: the submit answer (a job id) padded to 700 MB. */
  hugeSubmit: boolean;
  /** A broken upstream: every poll answer (still running) padded to 700 MB, or never ending. */
  pollAnswer?: "huge" | "endless";
  /** A broken upstream: the submit answer never ends (for APIs that answer with the result). */
  endlessSubmit: boolean;
  /** The job fails upstream as invalid input (a provider that validates while running). */
  failInput: boolean;
  /** The first N polls of the job answer 429, with Retry-After (`retryAfterSeconds`). */
  pollRateLimit?: number;
  /** The first N polls of the job answer 500. */
  poll500?: number;
  /** Retry-After of a provider simulator's 429 (`submit_429`, `poll_429`), in seconds (default 1). */
  retryAfterSeconds?: number;
  /** The webhook of a provider that sends one goes this long after the job finished. */
  callbackDelayMs?: number;
  /** The webhook is never sent. */
  callbackLost: boolean;
}

const UP_DIRECTIVE = /\[\[up:([a-z_0-9]+)(?:=([^\]]*))?\]\]/g;

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}

export function parseUpDirectives(input: unknown): UpDirectives {
  const found: UpDirectives = {
    submit500: false,
    reject: false,
    policyInput: false,
    policyOutput: false,
    fail: false,
    noUrls: false,
    hang: false,
    mislabel: false,
    hugeSubmit: false,
    endlessSubmit: false,
    failInput: false,
    callbackLost: false,
  };
  const count = (text: string) => (/^\d{1,9}$/.test(text) ? Number(text) : undefined);
  for (const text of stringsIn(input)) {
    for (const [, name, value = ""] of text.matchAll(UP_DIRECTIVE)) {
      if (name === "submit_500") found.submit500 = true;
      else if (name === "submit_429" && found.submit429 === undefined && /^\d{1,3}$/.test(value)) found.submit429 = Number(value);
      else if (name === "reject") found.reject = true;
      else if (name === "policy_input") found.policyInput = true;
      else if (name === "policy_output") found.policyOutput = true;
      else if (name === "fail") found.fail = true;
      else if (name === "no_urls") found.noUrls = true;
      else if (name === "hang") found.hang = true;
      else if (name === "delay_ms" && found.delayMs === undefined && /^\d{1,9}$/.test(value)) found.delayMs = Number(value);
      else if (name === "bad_file" && found.badFile === undefined) found.badFile = value === "500" ? 500 : 404;
      else if (name === "output_url" && found.outputUrl === undefined && value !== "") found.outputUrl = value;
      else if (name === "redirect_file" && found.redirectFile === undefined && value !== "") found.redirectFile = value;
      else if (name === "mislabel") found.mislabel = true;
      else if (name === "file_type" && found.fileType === undefined && value !== "") found.fileType = value;
      else if (name === "huge_submit") found.hugeSubmit = true;
      else if (name === "huge_poll") found.pollAnswer ??= "huge";
      else if (name === "endless_poll") found.pollAnswer ??= "endless";
      else if (name === "endless_submit") found.endlessSubmit = true;
      else if (name === "fail_input") found.failInput = true;
      else if (name === "poll_429") found.pollRateLimit ??= count(value);
      else if (name === "poll_500") found.poll500 ??= count(value);
      else if (name === "retry_after") found.retryAfterSeconds ??= count(value);
      else if (name === "callback_delay_ms") found.callbackDelayMs ??= count(value);
      else if (name === "callback_lost") found.callbackLost = true;
    }
  }
  return found;
}
