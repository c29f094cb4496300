// Errors that mean "PostgreSQL cannot be reached right now" as opposed to "this query is wrong".
// The pg driver surfaces them as Node socket errors or pool time-outs; Prisma wraps them with
// its own codes (P1001 can't reach, P1017 closed, P2024 pool time-out) or as a driver adapter error.
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
// PostgreSQL SQLSTATEs for a server that is shutting down or refusing connections, or that gave up
// on a statement (57014: statement_timeout, 25P03: idle_in_transaction_session_timeout), which
// rolled it back: "not done, retry" is exactly 70002.
const SQLSTATES = new Set(["57014", "25P03", "57P01", "57P02", "57P03", "53300", "08000", "08001", "08003", "08004", "08006"]);
const MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /can't reach database server/i,
  /server closed the connection/i,
  /Connection terminated unexpectedly/i,
  /Query read timeout/i,
  /the database system is (shutting down|starting up)/i,
  // pg, for a statement on a client whose connection already broke (the rollback of an
  // interactive transaction cut by a server shutdown): 60001 otherwise, seen in the fault suite.
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  // PgBouncer, in front of a server that is down or restarting (its SQLSTATE, 08P01, also means
  // a real protocol violation, so the messages are matched, not the code).
  /server login has been failing, try again later/i,
  /pgbouncer cannot connect to server/i,
  /server conn crashed\?/i,
  /query_wait_timeout/i,
  /no more connections allowed \(max_client_conn\)/i,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth++) {
    if (typeof current !== "object") return false;
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (NETWORK_CODES.has(code) || PRISMA_CODES.has(code) || SQLSTATES.has(code))) return true;
    if (typeof message === "string" && MESSAGES.some((pattern) => pattern.test(message))) return true;
    const original = (current as { meta?: { driverAdapterError?: unknown } }).meta?.driverAdapterError;
    current = cause ?? original;
  }
  return false;
}
