import { disableOperator as disableOperatorRow, findOperatorByEmail, insertOperator, updateOperatorPassword, type Database } from "@gen/db";
import { newOperatorId } from "@gen/ids";
import { hashPassword } from "@gen/passwords";
import { UsageError } from "./parse-args.ts";
import { readStdin } from "./read-stdin.ts";

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const MIN_PASSWORD = 12;
// The sign-in form reads at most this many characters; a longer password could never be typed in.
const MAX_PASSWORD = 1024;

/** The password comes from OPERATOR_PASSWORD or stdin, never argv: argv is visible in `ps` and shell history. */
export async function readPassword(env: NodeJS.ProcessEnv, stdin: NodeJS.ReadStream): Promise<string> {
  let password = env.OPERATOR_PASSWORD;
  if (password === undefined && !stdin.isTTY) password = await readStdin(stdin);
  if (!password) throw new UsageError("set OPERATOR_PASSWORD or pipe the password on stdin");
  if (password.length < MIN_PASSWORD) throw new UsageError(`the password needs at least ${MIN_PASSWORD} characters`);
  if (password.length > MAX_PASSWORD) throw new UsageError(`the password may have at most ${MAX_PASSWORD} characters`);
  return password;
}

export async function createOperator(db: Database, email: string | undefined, password: string) {
  const normalized = normalizeEmail(email);
  if (await findOperatorByEmail(db, normalized)) throw new UsageError(`operator ${normalized} exists; use reset-operator-password`);
  const id = newOperatorId();
  await insertOperator(db, { id, email: normalized, passwordHash: await hashPassword(password) });
  return { operator_id: id, email: normalized };
}

export async function resetOperatorPassword(db: Database, email: string | undefined, password: string) {
  const normalized = normalizeEmail(email);
  if (!(await updateOperatorPassword(db, { email: normalized }, await hashPassword(password), true))) throw new UsageError(`no such operator: ${normalized}`);
  return { email: normalized, password_reset: true };
}

export async function disableOperator(db: Database, email: string | undefined) {
  const normalized = normalizeEmail(email);
  if (!(await disableOperatorRow(db, normalized))) throw new UsageError(`no such operator: ${normalized}`);
  return { email: normalized, disabled: true };
}

function normalizeEmail(email: string | undefined): string {
  const normalized = (email ?? "").trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new UsageError("--email must be an e-mail address");
  return normalized;
}
