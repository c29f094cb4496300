import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { addCredits, createKey, credits, revokeKey } from "./admin-commands.ts";
import { createOperator, disableOperator, readPassword, resetOperatorPassword } from "./operator-commands.ts";
import { UsageError, parseArgs } from "./parse-args.ts";

const USAGE = `usage:
  pnpm admin create-key --credits <n> [--user <user_id>]
  pnpm admin revoke-key <api_key>
  pnpm admin add-credits --user <user_id> --credits <n>
  OPERATOR_PASSWORD=… pnpm admin create-operator --email <email>   (or the password on stdin)
  OPERATOR_PASSWORD=… pnpm admin reset-operator-password --email <email>
  pnpm admin disable-operator --email <email>`;

// Each command prints exactly one JSON line on stdout; errors go to stderr with exit code 1 (2 for usage).
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
        result = await revokeKey(db, args.positional[0]);
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
      default:
        throw new UsageError(USAGE);
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`admin: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
