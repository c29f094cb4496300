-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "next_attempt_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_finished_at_started_at_idx" ON "webhook_attempts"("finished_at", "started_at");
