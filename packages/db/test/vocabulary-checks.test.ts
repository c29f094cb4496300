import pg from "pg";
import {
  DELIVERY_STATUSES,
  DeliveryStatus,
  ENDPOINTS,
  FIXED_LAST_ERRORS,
  HTTP_STATUS_ERROR_PATTERN,
  LEDGER_KINDS,
  TASK_STATUSES,
  httpStatusError,
} from "@gen/domain";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";

// The CHECK constraints of migration 20261125120000 repeat @gen/domain's lists in SQL. This file
// is what keeps the two equal: it reads each constraint back from pg_constraint and compares its
// literals with the domain list, then writes every domain value (accepted) and a few near misses
// (refused with check_violation). A value added to the domain without a migration fails here.

interface VocabularyCheck {
  constraint: string;
  table: string;
  column: string;
  values: readonly string[];
  /** Whether `http_<3 digits>` is allowed besides the listed values. */
  httpStatus: boolean;
  outside: readonly string[];
}

const CHECKS: readonly VocabularyCheck[] = [
  {
    constraint: "tasks_status_check",
    table: "tasks",
    column: "status",
    values: TASK_STATUSES,
    httpStatus: false,
    outside: ["canceled", "Queued", "pending", ""],
  },
  { constraint: "tasks_endpoint_check", table: "tasks", column: "endpoint", values: ENDPOINTS, httpStatus: false, outside: ["image", "chat", "images "] },
  {
    constraint: "webhook_deliveries_status_check",
    table: "webhook_deliveries",
    column: "status",
    values: DELIVERY_STATUSES,
    httpStatus: false,
    outside: ["in-progress", "queued", "lost"],
  },
  {
    constraint: "webhook_deliveries_last_error_check",
    table: "webhook_deliveries",
    column: "last_error",
    values: FIXED_LAST_ERRORS,
    httpStatus: true,
    outside: ["http_99", "http_5000", "http_abc", "http_", "TIMEOUT", "delivered", ""],
  },
  {
    constraint: "webhook_attempts_outcome_check",
    table: "webhook_attempts",
    column: "outcome",
    // An attempt's outcome is `delivered` (a 2xx) or the last_error it recorded.
    values: [DeliveryStatus.Delivered, ...FIXED_LAST_ERRORS],
    httpStatus: true,
    outside: ["http_1", "running", "failed", "ok"],
  },
  {
    constraint: "ledger_entries_kind_check",
    table: "ledger_entries",
    column: "kind",
    values: LEDGER_KINDS,
    httpStatus: false,
    outside: ["debit", "Grant", "refunds"],
  },
];

let scratch: ScratchDatabase;
let client: pg.Client;
beforeAll(async () => {
  scratch = await createScratchDatabase();
  client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  await client.query(`
    INSERT INTO tasks (id, user_id, endpoint, model, status, input, request_id, billing_method, reserved_credits)
      VALUES ('task_vocab', 'usr_vocab', 'images', 'm', 'queued', '{}', 'req_vocab', 'flat', 1);
    INSERT INTO webhook_deliveries (task_id, url, status) VALUES ('task_vocab', 'https://example.com/hook', 'pending');
    INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at) VALUES ('whd_vocab', 'task_vocab', 1, now());
    INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta) VALUES ('usr_vocab', 'task_vocab', 'reserve', 1, -1);
  `);
});
afterAll(async () => {
  await client.end();
  await scratch.drop();
});

/** The quoted literals of a constraint's definition as PostgreSQL prints it back. */
function literals(definition: string): string[] {
  return [...definition.matchAll(/'((?:[^']|'')*)'::text/g)].map((match) => match[1]!.replaceAll("''", "'"));
}

async function write(check: VocabularyCheck, value: string): Promise<void> {
  await client.query(`UPDATE ${check.table} SET ${check.column} = $1`, [value]);
}

describe.each(CHECKS)("$constraint", (check) => {
  test("lists exactly the @gen/domain values", async () => {
    const { rows } = await client.query<{ definition: string; validated: boolean }>(
      "SELECT pg_get_constraintdef(oid) AS definition, convalidated AS validated FROM pg_constraint WHERE contype = 'c' AND conname = $1 AND conrelid = $2::regclass",
      [check.constraint, check.table],
    );
    expect(rows).toHaveLength(1);
    // NOT VALID in one migration, validated in the next: a constraint left unvalidated would let
    // old rows outside the vocabulary stand.
    expect(rows[0]!.validated).toBe(true);
    const found = literals(rows[0]!.definition);
    expect(found.filter((literal) => literal !== HTTP_STATUS_ERROR_PATTERN).sort()).toEqual([...check.values].sort());
    expect(found.includes(HTTP_STATUS_ERROR_PATTERN)).toBe(check.httpStatus);
  });

  test("accepts every domain value and refuses the rest with check_violation", async () => {
    const accepted = [...check.values, ...(check.httpStatus ? [httpStatusError(100), httpStatusError(404), httpStatusError(599)] : [])];
    for (const value of accepted) await expect(write(check, value)).resolves.toBeUndefined();
    for (const value of check.outside) {
      await expect(write(check, value)).rejects.toMatchObject({ code: "23514", constraint: check.constraint });
    }
  });
});
