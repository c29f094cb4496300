export interface SendTarget {
  /** Parsed form: its hostname (ASCII) is what gets resolved, and the SNI/certificate name. */
  url: URL;
  /** Path and query exactly as written, for the request line. */
  requestTarget: string;
}

const RAW_HTTPS = /^https:\/\/([^/?#]+)(.*)$/is;

/**
 * Splits a webhook URL for sending. The request line is cut from the raw string because WHATWG
 * `URL` resolves dot segments and re-encodes the path (docs/api.md#webhook-url-rules: path and
 * query are sent verbatim). Unlike @gen/webhook-url's `webhookRequestTarget` this accepts any port, so tests
 * can use ephemeral ones; everything else that submission refuses and that would make the raw
 * and the parsed form disagree (backslashes, userinfo, a non-https scheme) is refused here too.
 */
export function parseSendTarget(raw: string): SendTarget | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || url.username !== "" || url.password !== "") return null;
  const match = RAW_HTTPS.exec(raw);
  const authority = match?.[1];
  if (!match || authority === undefined || authority.includes("@") || raw.includes("\\")) return null;
  const tail = (match[2] ?? "").split("#", 1)[0] ?? "";
  return { url, requestTarget: tail.startsWith("/") ? tail : `/${tail}` };
}
