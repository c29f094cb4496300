-- GET /api/v1/tasks lists a user's tasks newest first and resumes after the last one shown, by
-- (created_at, id): with id in the index the whole position is an index condition, so a page reads
-- only the entries it returns (plus those its filters skip), however many tasks the table holds.
-- It supersedes ("user_id", "created_at"), dropped in the next migration. CONCURRENTLY builds it
-- without blocking task inserts during the scan of the table. It must be alone in its migration
-- (PostgreSQL refuses it inside the transaction a multi-statement script runs in).
CREATE INDEX CONCURRENTLY "tasks_user_id_created_at_id_idx" ON "tasks" ("user_id", "created_at", "id");
