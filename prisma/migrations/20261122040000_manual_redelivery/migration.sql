-- Manual redelivery from the operations console: the operator who asked for the attempt the
-- delivery waits for (cleared once it is recorded), and on each attempt who asked for it (null for
-- the scheduled attempts 1-3). The console's per-minute chart is served by the existing
-- webhook_attempts_finished_at_started_at_idx (range on finished_at), so no index is added.

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "redelivery_requested_by" TEXT;

-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "requested_by" TEXT;
