/**
 * Why a download failed: `too_large` (over maxBytes, declared or counted), `timeout` (the whole
 * download, redirects included, took longer than timeoutMs), `http_<status>` (a non-2xx final
 * answer, including a redirect to something other than http/https), `too_many_redirects` (more
 * than 3), `invalid_url` (not an absolute http/https URL), `blocked_address` (a hop's host is or
 * resolves to an address UPSTREAM_ALLOWED_CIDRS does not open; nothing was connected),
 * `network` (anything else: refused connection, DNS, reset, truncated body, TLS).
 */
export type DownloadFailure = "too_large" | "timeout" | `http_${number}` | "too_many_redirects" | "invalid_url" | "blocked_address" | "network";

export class DownloadError extends Error {
  readonly reason: DownloadFailure;

  constructor(reason: DownloadFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DownloadError";
    this.reason = reason;
  }
}
