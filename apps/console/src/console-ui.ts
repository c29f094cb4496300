import path from "node:path";
import type { Response } from "express";
import { Eta } from "eta";

/** Set by the session check on every request it lets through. */
interface ConsoleOperator {
  id: string;
  email: string;
}

export interface ConsoleLocals {
  operator: ConsoleOperator;
  csrfToken: string;
}

/** What a console page needs from the shell: a template rendered into the layout. */
export interface ConsoleUi {
  /** Renders views/<view>.eta with `data` inside the layout (title, navigation, sign-out form). */
  page(res: Response, opts: { title: string; view: string; data?: object; status?: number }): void;
}

const NAV: [string, string][] = [
  ["/console", "Home"],
  ["/console/tasks", "Tasks"],
  ["/console/deliveries", "Deliveries"],
  ["/console/deliveries/failing", "Failing webhooks"],
  ["/console/queues", "Queues"],
];

/**
 * Eta escapes every `<%= %>` by default; the only raw outputs (`<%~ %>`) are included templates
 * and a rendered page placed in the layout, so caller-supplied text (task ids, URLs, e-mails,
 * error messages) cannot become markup by a forgotten call.
 */
export function createConsoleUi(): ConsoleUi {
  const eta = new Eta({ views: path.join(import.meta.dirname, "views"), autoEscape: true, cache: true });
  return {
    page(res, { title, view, data, status }) {
      const locals = res.locals as Partial<ConsoleLocals>;
      const csrfToken = locals.csrfToken ?? "";
      const body = eta.render(`./${view}`, { csrfToken, ...data });
      const html = eta.render("./layout", { title, body, operator: locals.operator, csrfToken, nav: NAV });
      res
        .status(status ?? res.statusCode)
        .type("html")
        .set("Cache-Control", "no-store")
        .send(html);
    },
  };
}
