// Names that never denote a public receiver: RFC 6761 (localhost), RFC 6762 (local),
// RFC 8375 (home.arpa) and ICANN's private-use `internal`. The send-time guard would block most
// of them after resolution; refusing them at submission gives the caller an immediate answer.
const SPECIAL_USE_SUFFIXES = ["localhost", "local", "internal", "home.arpa"];

/** `hostname` is lowercase ASCII without a trailing dot (as the URL parser leaves it). */
export function isSpecialUseDomain(hostname: string): boolean {
  return SPECIAL_USE_SUFFIXES.some((suffix) => hostname === suffix || hostname.endsWith(`.${suffix}`));
}
