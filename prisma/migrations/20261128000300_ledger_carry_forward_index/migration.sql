-- Retention keeps one carry_forward row per user: each removed batch replaces the user's earlier
-- carry-forward rows with one summing them and the removed entries (docs/operations.md#retention-and-archive).
-- This partial index finds a user's carry-forward rows without reading their other entries. It
-- holds only those rows (one per user), and CONCURRENTLY builds it without blocking the writes of
-- the ledger during the scan of the table. Prisma's schema language cannot express a partial index.
CREATE INDEX CONCURRENTLY "ledger_entries_carry_forward_idx" ON "ledger_entries" ("user_id") WHERE "kind" = 'carry_forward';
