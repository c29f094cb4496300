-- Task retention removes a finished task's ledger rows with it and keeps one `carry_forward` row
-- per user, whose delta is the sum of every removed row's delta, so a balance
-- still equals SUM(delta) (docs/operations.md#retention-and-archive). The kind list grows by that
-- value. The constraint is replaced NOT VALID (a moment's ACCESS EXCLUSIVE lock, no scan). The next
-- migration validates the existing rows under a lock that lets reads and writes go on.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_kind_check";
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_kind_check"
  CHECK ("kind" IN ('grant', 'reserve', 'charge', 'refund', 'carry_forward')) NOT VALID;
