-- The status, kind, endpoint, last_error and outcome columns hold only the names @gen/domain
-- defines (packages/domain/src). A value written outside that vocabulary now fails at the
-- database, not later in a client's parser. packages/db/test/vocabulary-checks.test.ts keeps
-- these lists equal to the domain ones.
--
-- NOT VALID: adding the constraint checks every new or updated row at once but does not scan the
-- rows already there, so the ACCESS EXCLUSIVE lock it takes lasts milliseconds even on tables of
-- millions of rows. The next migration validates the existing rows under a lock that lets reads
-- and writes go on (docs/operations.md#vocabulary-check-constraints). It is a separate migration
-- because one migration file runs as one transaction, which would hold this lock for the whole scan.

ALTER TABLE "tasks" ADD CONSTRAINT "tasks_status_check"
  CHECK ("status" IN ('queued', 'in_progress', 'completed', 'failed')) NOT VALID;

ALTER TABLE "tasks" ADD CONSTRAINT "tasks_endpoint_check"
  CHECK ("endpoint" IN ('images', 'videos', 'audio', 'detect', 'humanize', 'essay', 'moderations')) NOT VALID;

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_status_check"
  CHECK ("status" IN ('pending', 'in_progress', 'delivered', 'failed')) NOT VALID;

-- http_<status> for an answer outside 2xx (statuses are three digits), then the named failures.
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_last_error_check"
  CHECK ("last_error" ~ '^http_[0-9]{3}$' OR "last_error" IN (
    'timeout', 'connect_failed', 'dns_failed', 'tls_error', 'blocked_private_address', 'request_failed',
    'render_failed', 'render_timeout', 'stale_claim', 'attempt_lost'
  )) NOT VALID;

-- An attempt's outcome is delivered or the last_error it recorded. Null while it runs.
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_outcome_check"
  CHECK ("outcome" = 'delivered' OR "outcome" ~ '^http_[0-9]{3}$' OR "outcome" IN (
    'timeout', 'connect_failed', 'dns_failed', 'tls_error', 'blocked_private_address', 'request_failed',
    'render_failed', 'render_timeout', 'stale_claim', 'attempt_lost'
  )) NOT VALID;

ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_kind_check"
  CHECK ("kind" IN ('grant', 'reserve', 'charge', 'refund')) NOT VALID;
