-- Checks the rows written before 20261128000000_ledger_carry_forward, under SHARE UPDATE EXCLUSIVE
-- (reads and writes go on during the scan).
ALTER TABLE "ledger_entries" VALIDATE CONSTRAINT "ledger_entries_kind_check";
