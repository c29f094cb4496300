import type { WireLastError } from "@gen/domain";

export type AttemptOutcome =
  | { ok: true; status: number }
  | {
      ok: false;
      /** Only the values produced on the wire: `render_*`, `stale_claim` and `attempt_lost` belong to the delivery worker. */
      lastError: WireLastError;
      /** The response status, only for `http_<status>`; null otherwise. */
      status: number | null;
      /** For operator logs only (error code and message, blocked address); never sent to callers. */
      detail?: string;
    };
