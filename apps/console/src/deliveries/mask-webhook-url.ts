/**
 * The webhook URL for an operator's eyes: the contract invites callers to put secrets in a query
 * parameter or a path segment, so every query value is replaced, the fragment dropped, and every
 * path segment cut to its first three characters; the host and the query names stay, since they
 * tell receivers apart. A URL that does not parse is not shown at all.
 */
export function maskWebhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "(not a valid URL)";
  }
  const names = [...url.searchParams.keys()];
  const query = names.length === 0 ? "" : `?${names.map((name) => `${encodeURIComponent(name)}=***`).join("&")}`;
  const path = url.pathname
    .split("/")
    .map((segment) => (segment.length > 3 ? `${segment.slice(0, 3)}***` : segment))
    .join("/");
  return `${url.protocol}//${url.host}${path}${query}`;
}
