import type { NextFunction, Request, Response as ExpressResponse } from "express";

/** Sets `name[key]` form fields as `{name: {key}}`, as the SDK flattens objects into a form. */
function unflatten(entries: Iterable<[string, unknown]>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of entries) {
    const nested = /^([^[\]]+)\[([^[\]]+)\]$/.exec(name);
    if (!nested) {
      body[name] = value;
      continue;
    }
    const [, outer = "", inner = ""] = nested;
    const holder = typeof body[outer] === "object" && body[outer] !== null ? (body[outer] as Record<string, unknown>) : {};
    holder[inner] = value;
    body[outer] = holder;
  }
  return body;
}

/**
 * Reads a multipart/form-data body (the SDK sends Videos requests so) into `req.body`, text
 * fields as strings and files as their byte count, with the platform's own form parser.
 */
export async function readMultipart(req: Request, _res: ExpressResponse, next: NextFunction): Promise<void> {
  if (!req.is("multipart/form-data") || !Buffer.isBuffer(req.body)) return next();
  try {
    const form = await new Response(req.body, { headers: { "content-type": req.get("content-type") ?? "" } }).formData();
    req.body = unflatten([...form.entries()].map(([name, value]): [string, unknown] => [name, typeof value === "string" ? value : { bytes: value.size }]));
    next();
  } catch (error) {
    next(Object.assign(error instanceof Error ? error : new Error(String(error)), { status: 400 }));
  }
}
