import { isDatabaseUnavailable } from "@gen/db";

// Shapes seen when PostgreSQL stops under load (test/faults/postgres-outage.test.ts): each must map
// to 70002, not to 60001.
test.each([
  ["pg, statement on a broken client", new Error("Client has encountered a connection error and is not queryable")],
  ["pg, statement on a closed client", new Error("Client was closed and is not queryable")],
  ["server shutting down", Object.assign(new Error("terminating connection due to administrator command"), { cause: { code: "57P01" } })],
  ["Prisma, unreachable", Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" })],
  ["Prisma, closed", Object.assign(new Error("Server has closed the connection."), { code: "P1017" })],
  [
    "Prisma raw query wrapping the driver's 57P01",
    Object.assign(new Error("Raw query failed."), {
      code: "P2010",
      meta: { driverAdapterError: { name: "DriverAdapterError", cause: { code: "57P01", kind: "postgres" } } },
    }),
  ],
  ["PgBouncer, server down", Object.assign(new Error("server login has been failing, try again later (server_login_retry)"), { code: "08P01" })],
  ["PgBouncer, server gone mid-transaction", Object.assign(new Error("server conn crashed?"), { code: "08P01" })],
  [
    "Prisma wrapping PgBouncer's refusal",
    Object.assign(new Error("Raw query failed."), {
      code: "P2010",
      meta: { driverAdapterError: { name: "DriverAdapterError", cause: { code: "08P01", kind: "postgres", message: "pgbouncer cannot connect to server" } } },
    }),
  ],
])("%s: unavailable", (_name, error) => {
  expect(isDatabaseUnavailable(error)).toBe(true);
});

test("a query error is not unavailability", () => {
  expect(isDatabaseUnavailable(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }))).toBe(false);
  expect(isDatabaseUnavailable(new Error("Client has encountered a mystery"))).toBe(false);
  expect(isDatabaseUnavailable(Object.assign(new Error("invalid message format"), { code: "08P01" }))).toBe(false);
});
