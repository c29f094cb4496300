import type { FailingDeliveryFilter } from "@gen/db";
import { FIXED_LAST_ERRORS, HTTP_STATUS_ERROR_PATTERN, type LastError } from "@gen/domain";

/** The filter form's fields as typed (shown again in the form, and carried to the bulk confirmation). */
export interface FilterFields {
  state: string;
  user: string;
  host: string;
  last_error: string;
  from: string;
  to: string;
}

export type ReadFilter = { ok: true; filter: FailingDeliveryFilter; fields: FilterFields } | { ok: false; error: string; fields: FilterFields };

const STATES = ["any", "dead", "retrying"] as const;
const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;
// A DNS name or an IPv6 literal in brackets, as a webhook URL's host; compared without case.
const HOST = /^(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}\.?$|^\[[0-9A-Fa-f:.]{2,45}\]$/;
const HTTP_STATUS_ERROR = new RegExp(HTTP_STATUS_ERROR_PATTERN);
// An instant as <input type="datetime-local"> sends it (read as UTC), or ISO 8601 with a zone.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * Reads the failing-deliveries filter from a query string or a form (the bulk confirmation posts
 * the same fields). Every field is checked before anything is queried; a field that is not what
 * it should be is an error message naming it, never a query with it.
 */
export function readFailingFilter(source: Record<string, unknown>): ReadFilter {
  const text = (name: keyof FilterFields) => {
    const value = source[name];
    return typeof value === "string" ? value.trim().slice(0, 300) : "";
  };
  const fields: FilterFields = {
    state: text("state") || "any",
    user: text("user"),
    host: text("host"),
    last_error: text("last_error"),
    from: text("from"),
    to: text("to"),
  };
  const fail = (error: string): ReadFilter => ({ ok: false, error, fields });

  if (!(STATES as readonly string[]).includes(fields.state)) return fail("State must be any, dead or retrying.");
  const filter: FailingDeliveryFilter = { state: fields.state as FailingDeliveryFilter["state"] };
  if (fields.user !== "") {
    if (!USER_ID.test(fields.user)) return fail("Customer must be a user id: 1-64 of A-Z a-z 0-9 _ -.");
    filter.userId = fields.user;
  }
  if (fields.host !== "") {
    if (fields.host.length > 253 || !HOST.test(fields.host)) return fail("Host must be a host name or a bracketed IPv6 address, without port or path.");
    filter.host = fields.host.replace(/\.$/, "");
  }
  if (fields.last_error !== "") {
    const known = (FIXED_LAST_ERRORS as readonly string[]).includes(fields.last_error) || HTTP_STATUS_ERROR.test(fields.last_error);
    if (!known) return fail(`last_error must be http_<status> or one of ${FIXED_LAST_ERRORS.join(", ")}.`);
    filter.lastError = fields.last_error as LastError;
  }
  for (const name of ["from", "to"] as const) {
    if (fields[name] === "") continue;
    const at = readInstant(fields[name]);
    if (!at) return fail(`${name === "from" ? "From" : "To"} must be a date and time (YYYY-MM-DDTHH:MM, UTC).`);
    filter[name] = at;
  }
  if (filter.from && filter.to && filter.from >= filter.to) return fail("From must be before To.");
  return { ok: true, filter, fields };
}

/** A calendar date and time that exists (no 30 February, no 24:00), with its zone applied. */
function readInstant(value: string): Date | undefined {
  const match = INSTANT.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second = 0, ms = 0] = match.slice(1, 8).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const utc = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second, ms));
  const exists = utc.getUTCMonth() === month! - 1 && utc.getUTCDate() === day! && hour! < 24 && minute! < 60 && second < 60;
  if (!exists || year! < 1970) return undefined;
  const zone = match[8];
  if (zone === undefined || zone === "Z") return utc;
  const [zoneHours, zoneMinutes] = zone.slice(1).split(":").map(Number) as [number, number];
  if (zoneHours > 23 || zoneMinutes > 59) return undefined;
  const offsetMs = (zone.startsWith("-") ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000;
  return new Date(utc.getTime() - offsetMs);
}

/** The fields as a query string, for links that keep the filter. */
export function filterQuery(fields: FilterFields): string {
  const present = Object.entries(fields).filter(([, value]) => value !== "");
  return new URLSearchParams(present).toString();
}
