-- Operators find a task by the request id a client quotes (the console's search, `pnpm admin
-- find-task --request`). CONCURRENTLY builds it without blocking the inserts of tasks meanwhile.
CREATE INDEX CONCURRENTLY "tasks_request_id_idx" ON "tasks" ("request_id");
