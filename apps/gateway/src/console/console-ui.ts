import type { Response } from "express";
import { escapeHtml } from "./escape-html.ts";

export { escapeHtml };

/** What a console page needs from the shell: the layout and the CSRF field of the session. */
export interface ConsoleUi {
  page(res: Response, opts: { title: string; body: string; status?: number }): void;
  csrfField(res: Response): string;
}

/** Set by the session check on every request it lets through. */
export interface ConsoleOperator {
  id: string;
  email: string;
}

export interface ConsoleLocals {
  operator: ConsoleOperator;
  csrfToken: string;
}

const NAV: [string, string][] = [
  ["/console", "Home"],
  ["/console/deliveries", "Deliveries"],
  ["/console/queues", "Queues"],
];

export function createConsoleUi(): ConsoleUi {
  return {
    page(res, { title, body, status }) {
      const locals = res.locals as Partial<ConsoleLocals>;
      res.status(status ?? res.statusCode).type("html").set("Cache-Control", "no-store").send(layout(title, body, locals));
    },
    csrfField(res) {
      return `<input type="hidden" name="_csrf" value="${escapeHtml((res.locals as Partial<ConsoleLocals>).csrfToken ?? "")}">`;
    },
  };
}

function layout(title: string, body: string, locals: Partial<ConsoleLocals>): string {
  const nav = locals.operator
    ? `<nav aria-label="Console"><ul>${NAV.map(([href, label]) => `<li><a href="${href}">${label}</a></li>`).join("")}</ul>
<form method="post" action="/console/sign-out" class="sign-out"><span id="operator-email">${escapeHtml(locals.operator.email)}</span>
<input type="hidden" name="_csrf" value="${escapeHtml(locals.csrfToken ?? "")}"><button type="submit" id="sign-out">Sign out</button></form></nav>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Operations console</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/console/assets/console.css"></head>
<body><header><a class="brand" href="/console">Operations console</a>${nav}</header>
<main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}
