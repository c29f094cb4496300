import type { DeliveryStatus } from "./delivery-status.ts";
import type { LastError } from "./last-error.ts";

// The `outcome` column of `webhook_attempts` and the label of the attempts metric: `delivered` for
// a 2xx, otherwise the `last_error` the attempt recorded. PostgreSQL checks the same values.
export type AttemptOutcome = typeof DeliveryStatus.Delivered | LastError;
