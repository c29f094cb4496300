import type { DeliveryStatus, Endpoint, LastError, LedgerKind, ProviderKind, TaskStatus } from "@gen/domain";
import type * as G from "./generated/kysely-types.ts";

// The generated row types (prisma-kysely, from prisma/schema.prisma) say `string` for columns that
// PostgreSQL constrains to a fixed set (CHECK constraints, named in @gen/domain). Narrowing them
// here makes a query that writes or compares an unknown status fail to compile.
type Narrow<Row, Columns> = Omit<Row, keyof Columns> & Columns;

export type Tables = {
  api_keys: G.ApiKey;
  idempotency_keys: G.IdempotencyKey;
  ledger_entries: Narrow<G.LedgerEntry, { kind: LedgerKind }>;
  operators: G.Operator;
  tasks: Narrow<G.Task, { status: TaskStatus; endpoint: Endpoint; upstream_provider: ProviderKind | null }>;
  users: G.User;
  webhook_attempts: Narrow<G.WebhookAttempt, { outcome: LastError | "delivered" | null }>;
  webhook_deliveries: Narrow<G.WebhookDelivery, { status: DeliveryStatus; last_error: LastError | null }>;
};
