import { httpStatusError } from "@gen/domain";
import type { AttemptOutcome } from "./attempt-outcome.ts";

/** Any 2xx is delivered; everything else, 3xx included (never followed), is `http_<status>`. */
export function statusOutcome(status: number): AttemptOutcome {
  if (status >= 200 && status <= 299) return { ok: true, status };
  return { ok: false, lastError: httpStatusError(status), status };
}
