-- Checks the rows that existed before 20261125120000_vocabulary_checks. VALIDATE CONSTRAINT scans
-- the table under SHARE UPDATE EXCLUSIVE, which lets the gateway and the worker read and write
-- throughout, so a long scan on a large table costs time and I/O but no outage. A row outside the
-- vocabulary fails this migration and names the constraint: docs/operations.md tells how to find it.
ALTER TABLE "tasks" VALIDATE CONSTRAINT "tasks_status_check";
ALTER TABLE "tasks" VALIDATE CONSTRAINT "tasks_endpoint_check";
ALTER TABLE "webhook_deliveries" VALIDATE CONSTRAINT "webhook_deliveries_status_check";
ALTER TABLE "webhook_deliveries" VALIDATE CONSTRAINT "webhook_deliveries_last_error_check";
ALTER TABLE "webhook_attempts" VALIDATE CONSTRAINT "webhook_attempts_outcome_check";
ALTER TABLE "ledger_entries" VALIDATE CONSTRAINT "ledger_entries_kind_check";
