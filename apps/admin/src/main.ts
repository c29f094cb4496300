import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { addCredits, createKey, credits, ledgerCheck, listKeys, revokeKey, type KeyToRevoke } from "./admin-commands.ts";
import { findTaskCommand, showUser } from "./lookup-commands.ts";
import { createOperator, disableOperator, readPassword, resetOperatorPassword } from "./operator-commands.ts";
import { UsageError, parseArgs, type ParsedArgs } from "./parse-args.ts";
import { readStdin } from "./read-stdin.ts";

const USAGE = `usage:
  pnpm admin create-key --credits <n> [--user <user_id>]
  pnpm admin revoke-key              (the key on stdin: echo "$KEY" | pnpm admin revoke-key)
  pnpm admin revoke-key --key-id <key_id>
  pnpm admin list-keys --user <user_id>
  pnpm admin show-user --user <user_id>        (balance and keys)
  pnpm admin find-task --task <task_id>         (or --request <request_id>: the req_... a client quotes)
  pnpm admin add-credits --user <user_id> --credits <n>
  OPERATOR_PASSWORD=… pnpm admin create-operator --email <email>   (or the password on stdin)
  OPERATOR_PASSWORD=… pnpm admin reset-operator-password --email <email>
  pnpm admin disable-operator --email <email>
  pnpm admin ledger-check [--user <user_id>]   (one line per violation; exit 1 if any)`;

// Each command prints exactly one JSON line on stdout (ledger-check: one line per violation, exit code 1
// if any); errors go to stderr with exit code 1 (2 for usage).
async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const config = loadConfig();
  const db = createDatabase(config.databaseUrl, { max: 1 });
  try {
    let result: unknown;
    switch (args.command) {
      case "create-key":
        result = await createKey(db, credits(args.flags.credits, true), args.flags.user);
        break;
      case "revoke-key":
        result = await revokeKey(db, await keyToRevoke(args));
        break;
      case "list-keys":
        result = await listKeys(db, args.flags.user);
        break;
      case "show-user":
        result = await showUser(db, args.flags.user);
        break;
      case "find-task":
        result = await findTaskCommand(db, { task: args.flags.task, request: args.flags.request });
        break;
      case "add-credits":
        result = await addCredits(db, args.flags.user, credits(args.flags.credits, false));
        break;
      case "create-operator":
        result = await createOperator(db, args.flags.email, await readPassword(process.env, process.stdin));
        break;
      case "reset-operator-password":
        result = await resetOperatorPassword(db, args.flags.email, await readPassword(process.env, process.stdin));
        break;
      case "disable-operator":
        result = await disableOperator(db, args.flags.email);
        break;
      case "ledger-check": {
        const { violations } = await ledgerCheck(db, args.flags.user);
        for (const line of violations) process.stdout.write(`${line}\n`);
        if (violations.length > 0) process.exitCode = 1;
        else process.stderr.write("admin: ledger-check: no violations\n");
        return;
      }
      default:
        throw new UsageError(USAGE);
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await db.$disconnect();
  }
}

/**
 * `--key-id`, else the key on stdin; the key as an argument still works (the README's "Operator commands"
 * names that form) but lands in shell history and `ps`, so it is warned about.
 */
async function keyToRevoke(args: ParsedArgs): Promise<KeyToRevoke> {
  if (args.flags["key-id"] !== undefined) return { keyId: args.flags["key-id"] };
  const fromArgv = args.positional[0];
  if (fromArgv !== undefined) {
    process.stderr.write("admin: warning: a key on the command line is visible in shell history and ps; pipe it on stdin or use --key-id\n");
    return { apiKey: fromArgv };
  }
  if (process.stdin.isTTY) process.stderr.write("API key to revoke (then Ctrl-D): ");
  return { apiKey: (await readStdin(process.stdin)).trim() };
}

main().catch((error: unknown) => {
  process.stderr.write(`admin: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
