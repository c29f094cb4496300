-- ("user_id", "created_at", "id") serves every read the dropped index served: one index fewer to
-- write at every task insert. The drop holds the table's lock for a moment only.

-- DropIndex
DROP INDEX "tasks_user_id_created_at_idx";
