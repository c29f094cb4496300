-- Every statement filtering webhook_deliveries on status also fits ("status", "next_attempt_at"),
-- which leads with status (EXPLAIN of each: bench/README.md "Prepared statements"). One index
-- fewer to write at every delivery transition (insert, claim, finish: each changes status). The
-- drop holds the lock of the table for a moment only, nothing is rebuilt.

-- DropIndex
DROP INDEX "webhook_deliveries_status_idx";
