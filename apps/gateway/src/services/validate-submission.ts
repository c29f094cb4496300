import { urlParameters, type Catalog, type Endpoint, type ModelEntry } from "@gen/catalog";
import { ApiError, Err } from "@gen/errors";
import { validateWebhookUrl, type UrlTargetGuard } from "@gen/webhook-url";
import { unstorableField } from "./unstorable-text.ts";

/** A submission whose values and webhook_url passed (docs/api.md#submission-validation-order, up to the URL check). */
export interface CheckedSubmission {
  model: ModelEntry;
  params: Record<string, unknown>;
  webhookUrl: string | null;
}

export interface ValidSubmission extends CheckedSubmission {
  price: { reserve: number; method: "flat" | "tokens" };
}

/**
 * docs/api.md#submission-validation-order: 20002, 20004, values (20003/20005/20006/20007),
 * webhook_url (20003); then refuseInternalUrls (20003, the one step that may wait), then
 * priceSubmission (30002).
 */
export function validateSubmission(catalog: Catalog, endpoint: Endpoint, body: Record<string, unknown>): CheckedSubmission {
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
  return { model, params, webhookUrl: url };
}

/** The step after every parameter check: 30002 when the model's pricing cannot price these params. */
export function priceSubmission(catalog: Catalog, checked: CheckedSubmission): ValidSubmission {
  return { ...checked, price: catalog.price(checked.model, checked.params) };
}

/**
 * The last parameter check (20003), before pricing: URL parameters the upstream would fetch
 * (image_url) must not point at an internal address, by literal or by what the name resolves to
 * now. Most models have none, and then nothing is resolved.
 */
export async function refuseInternalUrls(guard: UrlTargetGuard, submission: CheckedSubmission): Promise<void> {
  const urls = urlParameters(submission.model, submission.params);
  if (urls.length === 0) return;
  const refusal = await guard.refusal(urls);
  if (refusal !== null) throw new ApiError(Err.ParameterInvalid, refusal);
}

function withoutWebhookUrl(body: Record<string, unknown>): Record<string, unknown> {
  const { webhook_url: _, ...rest } = body;
  return rest;
}
