-- Whether a task's upstream job was created with the callback address (UPSTREAM_CALLBACK_URL), so
-- that the poll schedule (a slow safety net while a callback is expected) is a function of the
-- task's row and a worker resuming the task keeps it. A constant default: PostgreSQL stores it in
-- the catalog, and adding the column rewrites nothing. (No semicolons in these comments: the
-- migration runner cuts the script at every one.)

ALTER TABLE "tasks" ADD COLUMN "upstream_callback" BOOLEAN NOT NULL DEFAULT false;
