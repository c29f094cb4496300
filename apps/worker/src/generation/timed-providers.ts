import type { Route } from "@gen/catalog";
import { recordUpstreamRequest, type Metrics, type UpstreamRequestSample } from "@gen/metrics";
import { ProviderUnavailableError, UpstreamRejection, PolicyViolation, type Provider } from "@gen/providers";
import type { ProviderRegistry } from "./provider-registry.ts";

/**
 * The registry with every provider call timed into `upstream_request_duration_seconds`, by the
 * route's provider, the operation and how it ended. At the adapters' common interface, so every
 * adapter (SDK-based or plain HTTP, the simulator included) is measured the same way.
 */
export function timedProviders(registry: ProviderRegistry, metrics: Metrics | undefined): ProviderRegistry {
  if (!metrics) return registry;
  const timed = new Map<string, Provider>();
  return (route: Route) => {
    const key = `${route.provider} ${route.upstreamUrl ?? ""}`;
    let provider = timed.get(key);
    if (!provider) {
      provider = timeCalls(registry(route), route.provider, metrics);
      timed.set(key, provider);
    }
    return provider;
  };
}

function timeCalls(provider: Provider, name: string, metrics: Metrics): Provider {
  const time = async <T>(operation: UpstreamRequestSample["operation"], call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const sample = (status: string) => recordUpstreamRequest(metrics, { provider: name, operation, status, seconds: (performance.now() - started) / 1000 });
    try {
      const result = await call();
      sample("ok");
      return result;
    } catch (error) {
      sample(failureStatus(error));
      throw error;
    }
  };
  return {
    submit: (job, signal) => time("submit", () => provider.submit(job, signal)),
    poll: (upstreamId, signal) => time("poll", () => provider.poll(upstreamId, signal)),
    cancel: (upstreamId) => time("cancel", () => provider.cancel(upstreamId)),
  };
}

/** The provider's HTTP status when it answered, `network` when it did not, `refused` for a rejection without one. */
function failureStatus(error: unknown): string {
  if (error instanceof ProviderUnavailableError) return error.upstream?.status === undefined ? "network" : String(error.upstream.status);
  if (error instanceof UpstreamRejection || error instanceof PolicyViolation)
    return error.upstream?.status === undefined ? "refused" : String(error.upstream.status);
  return "error";
}
