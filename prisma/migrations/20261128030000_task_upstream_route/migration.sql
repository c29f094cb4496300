-- Which upstream route served a task (a model may fall back from its primary provider to others),
-- so that a worker resuming the task after a crash polls the job where it was created. And the
-- operator-side cause of a failure (the provider's status, text, request id, or a network error's
-- code), shown by the console and never by the public API. Nullable columns without defaults:
-- adding them rewrites nothing and holds the table's lock for milliseconds. (No semicolons in
-- these comments: the migration runner cuts the script at every one.)

ALTER TABLE "tasks" ADD COLUMN "upstream_provider" TEXT;
ALTER TABLE "tasks" ADD COLUMN "upstream_model" TEXT;
ALTER TABLE "tasks" ADD COLUMN "failure_cause" JSONB;
