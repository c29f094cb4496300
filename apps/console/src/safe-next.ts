/** Where to go after sign-in: only a console path of ours, never another host (open redirect). */
export function safeNext(raw: unknown): string {
  if (typeof raw !== "string" || !raw.startsWith("/console") || raw.startsWith("/console/sign-")) return "/console";
  if (/[\\\r\n\t]/.test(raw) || raw.startsWith("//")) return "/console";
  return raw;
}
