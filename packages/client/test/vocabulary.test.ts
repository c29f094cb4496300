import {
  DELIVERY_STATUSES,
  FIXED_LAST_ERRORS,
  TASK_STATUSES as DOMAIN_TASK_STATUSES,
  isTerminalTask,
  type LastError,
  type DeliveryStatus,
  type TaskStatus as DomainTaskStatus,
} from "@gen/domain";
import { ERROR_CATALOG } from "@gen/errors";
import { isRetryableStatus } from "../src/gen-errors.ts";
import type { TaskStatus, TerminalStatus, WebhookDeliveryStatus, WebhookLastError } from "../src/types.ts";
import { TASK_STATUSES, TERMINAL_STATUSES, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_LAST_ERRORS, isTerminalStatus } from "../src/vocabulary.ts";

// The SDK carries its own copy of the API's values (it is installed without the service's
// packages). These checks fail when the service's lists change and the SDK's copy does not; the
// type assertions fail `pnpm typecheck` the same way.

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [Same<TaskStatus, DomainTaskStatus>, Same<WebhookDeliveryStatus, DeliveryStatus>, Same<WebhookLastError, LastError>] = [true, true, true];

test("the types are the service's types", () => {
  expect(sameTypes).toEqual([true, true, true]);
});

test("task statuses and the terminal ones are the service's", () => {
  expect(TASK_STATUSES).toEqual(DOMAIN_TASK_STATUSES);
  expect(TERMINAL_STATUSES).toEqual(DOMAIN_TASK_STATUSES.filter((status) => isTerminalTask(status)));
  for (const status of DOMAIN_TASK_STATUSES) expect(isTerminalStatus(status)).toBe(isTerminalTask(status));
  const terminal: readonly TerminalStatus[] = TERMINAL_STATUSES;
  expect(terminal).toHaveLength(2);
});

test("webhook delivery statuses and last_error values are the service's", () => {
  expect(WEBHOOK_DELIVERY_STATUSES).toEqual(DELIVERY_STATUSES);
  expect([...WEBHOOK_LAST_ERRORS].sort()).toEqual([...FIXED_LAST_ERRORS].sort());
});

test("every HTTP status of the error catalog gets the documented retry advice", () => {
  // docs/api.md#retry-guidance: 429 and 5xx may be retried; every 4xx needs a fixed request.
  const statuses = new Set(Object.values(ERROR_CATALOG).map((entry) => entry.status));
  for (const status of statuses) expect([status, isRetryableStatus(status)]).toEqual([status, status === 429 || status >= 500]);
});
