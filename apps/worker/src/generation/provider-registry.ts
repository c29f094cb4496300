import type { ModelEntry } from "@gen/catalog";
import { createHttpProvider, type HttpProviderOptions, type Provider } from "@gen/providers";
import { createSimulatedProvider } from "@gen/simulator";

export type ProviderRegistry = (model: ModelEntry) => Provider;

/** One provider instance per kind (and per upstream URL), chosen per model by the catalog. */
export function createProviderRegistry(defaultUpstreamUrl: string, http: Omit<HttpProviderOptions, "baseUrl">): ProviderRegistry {
  const simulated = createSimulatedProvider();
  const byUrl = new Map<string, Provider>();
  return (model) => {
    if (model.provider === "simulated") return simulated;
    const baseUrl = model.upstreamUrl ?? defaultUpstreamUrl;
    let provider = byUrl.get(baseUrl);
    if (!provider) {
      provider = createHttpProvider({ ...http, baseUrl });
      byUrl.set(baseUrl, provider);
    }
    return provider;
  };
}
