import type { ProviderJob } from "./provider.ts";

/** Our parameters that are never a provider's input: they steer this service, not the model. */
const OWN_PARAMETERS = new Set(["model", "content_filter"]);

/**
 * The provider's input for a job: each of our parameters under the provider's name for it (the
 * adapter's `defaults`, overridden by the catalog's `upstreamInputMap`; null drops a parameter; a
 * parameter named in neither keeps its own name), then the catalog's constant `upstreamInput`
 * laid over them. Values are passed as they are: an adapter converts the ones its API spells
 * differently (a size into an aspect ratio, say) before or after this.
 */
export function mapInput(
  job: Pick<ProviderJob, "params" | "inputMap" | "constantInput">,
  defaults: Record<string, string | null> = {},
): Record<string, unknown> {
  const names = { ...defaults, ...job.inputMap };
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(job.params)) {
    if (OWN_PARAMETERS.has(name) || value === undefined) continue;
    const target = Object.hasOwn(names, name) ? names[name] : name;
    if (target === null || target === undefined) continue;
    input[target] = value;
  }
  return { ...input, ...job.constantInput };
}
