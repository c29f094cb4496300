import { urlParameters, type Catalog, type Endpoint, type ModelEntry } from "@gen/catalog";
import { ApiError, Err } from "@gen/errors";
import { validateWebhookUrl, type UrlTargetGuard } from "@gen/webhook-url";
import { unstorableField } from "./unstorable-text.ts";

export interface ValidSubmission {
  model: ModelEntry;
  params: Record<string, unknown>;
  webhookUrl: string | null;
  price: { reserve: number; method: "flat" | "tokens" };
}

/**
 * docs/api.md#submission-validation-order: 20002, 20004, values (20003/20005/20006/20007), webhook_url (20003), 30002;
 * then refuseInternalUrls, the one step that may wait.
 */
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

/**
 * The last step (20003): URL parameters the upstream would fetch (image_url) must not point at an
 * internal address, by literal or by what the name resolves to now. Most models have none, and then
 * nothing is resolved.
 */
export async function refuseInternalUrls(guard: UrlTargetGuard, submission: ValidSubmission): Promise<void> {
  const urls = urlParameters(submission.model, submission.params);
  if (urls.length === 0) return;
  const refusal = await guard.refusal(urls);
  if (refusal !== null) throw new ApiError(Err.ParameterInvalid, refusal);
}

function withoutWebhookUrl(body: Record<string, unknown>): Record<string, unknown> {
  const { webhook_url: _, ...rest } = body;
  return rest;
}
