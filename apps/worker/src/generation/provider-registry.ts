import type { ModelEntry } from "@gen/catalog";
import { createHttpProvider, type Provider } from "@gen/providers";
import { createSimulatedProvider } from "@gen/simulator";

export type ProviderRegistry = (model: ModelEntry) => Provider;

/** One provider instance per kind (and per upstream URL), chosen per model by the catalog. */
export function createProviderRegistry(defaultUpstreamUrl: string): ProviderRegistry {
  const simulated = createSimulatedProvider();
  const http = new Map<string, Provider>();
  return (model) => {
    if (model.provider === "simulated") return simulated;
    const baseUrl = model.upstreamUrl ?? defaultUpstreamUrl;
    let provider = http.get(baseUrl);
    if (!provider) {
      provider = createHttpProvider({ baseUrl });
      http.set(baseUrl, provider);
    }
    return provider;
  };
}
