import type { Catalog, Route } from "@gen/catalog";
import { PROVIDER_CREDENTIAL_VARIABLES, type Config, type CredentialedProvider } from "@gen/config";
import type { ProviderKind } from "@gen/domain";
import { createHttpProvider, createOpenAIProvider, createReplicateProvider, createRunwayProvider, type Provider, type ProviderOptions } from "@gen/providers";
import { createSimulatedProvider } from "@gen/simulator";

/** The provider serving one upstream route of a model. */
export type ProviderRegistry = (route: Route) => Provider;

type AdapterFactory = (options: ProviderOptions) => Provider;

/** A kind whose adapter is not part of this build: a catalog naming it stops start-up. */
function notBuilt(kind: ProviderKind): AdapterFactory {
  return () => {
    throw new Error(`the "${kind}" provider adapter is not built into this worker`);
  };
}

/**
 * The adapter factory of each catalog `provider`; every one takes ProviderOptions. The HTTP
 * provider's base is UPSTREAM_URL unless the route names its own.
 */
function adapters(config: Config): Record<ProviderKind, AdapterFactory> {
  return {
    simulated: () => createSimulatedProvider(),
    http: (options) => createHttpProvider({ ...options, baseUrl: options.baseUrl ?? config.upstreamUrl }),
    replicate: createReplicateProvider,
    fal: notBuilt("fal"),
    openai: (options) => createOpenAIProvider({ ...options, maxMediaBytes: config.downloadMaxBytes }),
    runway: createRunwayProvider,
  };
}

/**
 * Fails when a route of the catalog (primary or fallback) names a provider whose credential is
 * not set, with one line naming the model and the variable: a worker that started anyway would
 * fail every such task at its first submit.
 */
export function checkProviderCredentials(catalog: Catalog, config: Config): void {
  for (const model of catalog.models) {
    for (const route of model.routes) {
      if (!Object.hasOwn(PROVIDER_CREDENTIAL_VARIABLES, route.provider)) continue;
      const kind = route.provider as CredentialedProvider;
      if (config.providerCredentials[kind] === undefined) {
        throw new Error(`model ${model.id} uses provider ${kind}, but ${PROVIDER_CREDENTIAL_VARIABLES[kind]} is not set`);
      }
    }
  }
}

/**
 * One provider instance per kind and API base, built at start-up for every route of the catalog
 * (so a catalog this worker cannot serve stops it there, not at a task's submit), each with its
 * credential, UPSTREAM_TIMEOUT_MS and UPSTREAM_MAX_RESPONSE_BYTES.
 */
export function createProviderRegistry(catalog: Catalog, config: Config, factories: Record<ProviderKind, AdapterFactory> = adapters(config)): ProviderRegistry {
  checkProviderCredentials(catalog, config);
  const instances = new Map<string, Provider>();
  const providerFor = (route: Route): Provider => {
    const key = `${route.provider} ${route.upstreamUrl ?? ""}`;
    let provider = instances.get(key);
    if (!provider) {
      const apiKey = Object.hasOwn(PROVIDER_CREDENTIAL_VARIABLES, route.provider)
        ? config.providerCredentials[route.provider as CredentialedProvider]
        : undefined;
      provider = factories[route.provider]({
        ...(route.upstreamUrl === undefined ? {} : { baseUrl: route.upstreamUrl }),
        ...(apiKey === undefined ? {} : { apiKey }),
        timeoutMs: config.upstreamTimeoutMs,
        maxResponseBytes: config.upstreamMaxResponseBytes,
      });
      instances.set(key, provider);
    }
    return provider;
  };
  for (const model of catalog.models) for (const route of model.routes) providerFor(route);
  return providerFor;
}
