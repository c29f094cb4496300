import { escapeHtml } from "./escape-html.ts";

export function signInPage(opts: { csrfToken: string; next: string; email?: string; error?: string }): string {
  const error = opts.error ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(opts.error)}</p>` : "";
  return `${error}<form method="post" action="/console/sign-in" id="sign-in" class="card narrow">
<input type="hidden" name="_csrf" value="${escapeHtml(opts.csrfToken)}">
<input type="hidden" name="next" value="${escapeHtml(opts.next)}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? "")}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`;
}
