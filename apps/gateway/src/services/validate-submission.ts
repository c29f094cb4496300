import type { Catalog, Endpoint, ModelEntry } from "@gen/catalog";
import { ApiError, Err } from "@gen/errors";
import { validateWebhookUrl } from "@gen/webhook-url";
import { unstorableField } from "./unstorable-text.ts";

export interface ValidSubmission {
  model: ModelEntry;
  params: Record<string, unknown>;
  webhookUrl: string | null;
  price: { reserve: number; method: "flat" | "tokens" };
}

/** docs/api.md#submission-validation-order: 20002, 20004, values (20003/20005/20006/20007), webhook_url (20003), 30002. */
export function validateSubmission(catalog: Catalog, endpoint: Endpoint, body: Record<string, unknown>): ValidSubmission {
  // Copied only when there is something to take out: a refused body may hold 2,000 fields.
  const webhookUrl = Object.hasOwn(body, "webhook_url") ? body.webhook_url : undefined;
  const rest = webhookUrl === undefined ? body : withoutWebhookUrl(body);
  const { model, params } = catalog.validate(endpoint, rest);
  const unstorable = unstorableField(params);
  if (unstorable !== null) throw new ApiError(Err.ParameterInvalid, `${unstorable} must be Unicode text without NUL characters or unpaired surrogates`);
  let url: string | null = null;
  if (webhookUrl !== undefined) {
    const checked = validateWebhookUrl(webhookUrl);
    if (!checked.ok) throw new ApiError(Err.ParameterInvalid, checked.reason);
    url = checked.url;
  }
  const price = catalog.price(model, params);
  return { model, params, webhookUrl: url, price };
}

function withoutWebhookUrl(body: Record<string, unknown>): Record<string, unknown> {
  const { webhook_url: _, ...rest } = body;
  return rest;
}
