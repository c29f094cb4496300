-- Every gateway process keeps API keys it found valid in memory and LISTENs on "api_key_revoked"
-- (packages/db/src/key-revocations.ts): the hash of a key is sent there when it stops being valid
-- (revoked, its hash changed, or the row deleted). A second revoke of a revoked key sends nothing.
-- A trigger rather than a NOTIFY in the statement of the admin CLI, so that every way of revoking
-- is covered (the CLI, a console page, an UPDATE or DELETE by hand). NOTIFY is transactional: the
-- message goes out at the commit of the revoking transaction, and not at all if it rolls back.
-- Prisma cannot express triggers, schema.prisma says so on the table.
--
-- The conditions are in the body, not in a WHEN clause or an UPDATE OF list: those would tie the
-- trigger to the columns, and a later migration could no longer change their types.
--
-- The migration runner (the pg adapter of Prisma) cuts a script at every semicolon, even inside
-- a quoted function body, so the semicolons of this one are written \073 in an escaped string.

CREATE FUNCTION notify_api_key_revoked() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF OLD.revoked_at IS NULL AND (TG_OP = ''DELETE'' OR NEW.revoked_at IS NOT NULL OR NEW.key_hash IS DISTINCT FROM OLD.key_hash) THEN
    PERFORM pg_notify(''api_key_revoked'', OLD.key_hash)\073
  END IF\073
  RETURN NULL\073
END';

CREATE TRIGGER api_keys_revoked AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION notify_api_key_revoked();
