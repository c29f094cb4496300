import type { Route } from "@gen/catalog";
import { Wf } from "@gen/errors";
import { createMetrics, renderMetrics } from "@gen/metrics";
import { ProviderUnavailableError, UpstreamRejection, type Provider } from "@gen/providers";
import { timedProviders } from "../src/generation/timed-providers.ts";

const route = (provider: Route["provider"]): Route => ({ provider, upstreamModel: "m" });

test("every provider call is timed by provider, operation and how it ended, and its outcome passes through", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  let polls = 0;
  const replicate: Provider = {
    submit: async () => {
      throw new ProviderUnavailableError("503", { upstream: { status: 503, message: "overloaded" } });
    },
    poll: async () => {
      polls++;
      if (polls === 1) throw new ProviderUnavailableError("connect ECONNREFUSED", { cause: Object.assign(new Error("x"), { code: "ECONNREFUSED" }) });
      return { state: "running" };
    },
    cancel: async () => {},
  };
  const fal: Provider = {
    submit: async () => {
      throw new UpstreamRejection(Wf.InputRejected, { status: 422, message: "prompt too long" });
    },
    poll: async () => ({ state: "running" }),
    cancel: async () => {},
  };
  const built: string[] = [];
  const registry = timedProviders((r) => {
    built.push(r.provider);
    return r.provider === "fal" ? fal : replicate;
  }, metrics);

  const job = { taskId: "t", endpoint: "images", model: "m", upstreamModel: "m", params: {} } as const;
  await expect(registry(route("replicate")).submit({ ...job })).rejects.toThrow(ProviderUnavailableError);
  await expect(registry(route("replicate")).poll("job-1")).rejects.toThrow("ECONNREFUSED");
  await expect(registry(route("replicate")).poll("job-1")).resolves.toEqual({ state: "running" });
  await registry(route("replicate")).cancel("job-1");
  await expect(registry(route("fal")).submit({ ...job })).rejects.toThrow(UpstreamRejection);
  // One wrapper per route's provider, not one per call.
  expect(built).toEqual(["replicate", "fal"]);

  const { body } = await renderMetrics(metrics);
  const count = (labels: string) => Number(new RegExp(`^upstream_request_duration_seconds_count\\{${labels}\\} (\\d+)$`, "m").exec(body)?.[1]);
  expect(count('provider="replicate",operation="submit",status="503"')).toBe(1);
  expect(count('provider="replicate",operation="poll",status="network"')).toBe(1);
  expect(count('provider="replicate",operation="poll",status="ok"')).toBe(1);
  expect(count('provider="replicate",operation="cancel",status="ok"')).toBe(1);
  expect(count('provider="fal",operation="submit",status="422"')).toBe(1);
});

test("without metrics the registry is returned as it is", () => {
  const registry = () => ({}) as Provider;
  expect(timedProviders(registry, undefined)).toBe(registry);
});
