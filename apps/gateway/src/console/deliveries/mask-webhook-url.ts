/**
 * The webhook URL for an operator's eyes: callers put secrets in the query string (the contract
 * suggests it), so every query value is replaced and the fragment dropped; names stay, since they
 * help tell receivers apart. A URL that does not parse is not shown at all.
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
  return `${url.protocol}//${url.host}${url.pathname}${query}`;
}
