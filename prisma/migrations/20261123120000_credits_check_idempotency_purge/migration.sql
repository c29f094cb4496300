-- A balance below zero would mean a charge the ledger cannot back. Every debit is already
-- conditional (credits >= price), so this only turns a future bug into an error instead of debt.
-- Prisma's schema language has no CHECK constraints, so this one lives in the migration alone.
ALTER TABLE "users" ADD CONSTRAINT "users_credits_nonnegative" CHECK ("credits" >= 0);

-- CreateIndex: the worker purges idempotency keys past their 24 h window in created_at order.
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");
