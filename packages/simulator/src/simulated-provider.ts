import { Wf, WorkflowError } from "@gen/errors";
import { parseSimDirectives } from "./directives.ts";
import { PolicyViolation } from "@gen/providers";
import type { CompletedResult, Provider, ProviderJob, ProviderResult } from "@gen/providers";
import { decodeSimUpstreamId, encodeSimUpstreamId } from "./sim-upstream-id.ts";
import { simulateGeneration } from "./simulate-generation.ts";
import { storageFaultFile } from "./storage-fault.ts";

/** Time every simulated job takes before it completes, on top of directives and `delayMs`. */
export const SIM_BASE_DELAY_MS = 20;
// Results are kept only to spare repeated polls the work of drawing them again.
const CACHED_RESULTS = 16;
const REMEMBERED_CANCELS = 10_000;

function remember<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > limit) map.delete(map.keys().next().value as K);
}

function withoutTokens(result: CompletedResult): CompletedResult {
  const { tokens: _tokens, ...rest } = result;
  return rest;
}

/**
 * The built-in provider: no network, deterministic output (docs/api.md#simulator-directives).
 * Every fact a poll needs is inside the upstream id; memory holds only cancels and a cache.
 */
export function createSimulatedProvider(options: { now?: () => number; baseDelayMs?: number } = {}): Provider {
  const now = options.now ?? Date.now;
  const baseDelayMs = options.baseDelayMs ?? SIM_BASE_DELAY_MS;
  const canceled = new Map<string, true>();
  const results = new Map<string, CompletedResult>();

  function generate(upstreamId: string, job: ProviderJob): CompletedResult {
    let result = results.get(upstreamId);
    if (!result) {
      result = simulateGeneration(job);
      remember(results, upstreamId, result, CACHED_RESULTS);
    }
    // A copy, so that a caller editing its result cannot change what the next poll returns.
    return { ...result, ...(result.files ? { files: [...result.files] } : {}) };
  }

  return {
    async submit(job, signal) {
      signal?.throwIfAborted();
      const directives = parseSimDirectives(job.params);
      if (directives.fail === Wf.UpstreamSubmitFailed) throw new WorkflowError(Wf.UpstreamSubmitFailed, "Simulated upstream submission failure");
      if (directives.fail === Wf.InputRejected) throw new WorkflowError(Wf.InputRejected, "Simulated upstream rejected the input");
      if (directives.fail === Wf.ContentPolicy && directives.stage === "input")
        throw new PolicyViolation("input", "Simulated content policy verdict on the input");
      return { upstreamId: encodeSimUpstreamId({ job, startedAt: now() }) };
    },

    async poll(upstreamId, signal): Promise<ProviderResult> {
      signal?.throwIfAborted();
      const state = decodeSimUpstreamId(upstreamId);
      if (!state) return { state: "failed", code: Wf.UpstreamFailed, message: "Unknown simulated job" };
      if (canceled.has(upstreamId)) return { state: "failed", code: Wf.UpstreamFailed, message: "Simulated job was canceled" };
      const { job, startedAt } = state;
      const directives = parseSimDirectives(job.params);
      if (directives.fail === Wf.PollingTimeout) return { state: "running" };
      const readyAt = startedAt + baseDelayMs + (job.delayMs ?? 0) + (directives.delayMs ?? 0);
      if (now() < readyAt) return { state: "running" };
      switch (directives.fail) {
        case Wf.UpstreamFailed:
          return { state: "failed", code: Wf.UpstreamFailed, message: "Simulated upstream failure" };
        case Wf.ContentPolicy:
          return { state: "failed", code: Wf.ContentPolicy, stage: "output", message: "Simulated content policy verdict on the output" };
        // docs/api.md#simulator-directives: a directive fails the task with that code, whatever the code means.
        case Wf.Canceled:
          return { state: "failed", code: Wf.Canceled, message: "Simulated upstream cancellation" };
        case Wf.NoOutput:
          return { state: "completed" };
      }
      let result = generate(upstreamId, job);
      if (directives.noTokens) result = withoutTokens(result);
      // First, so that a storage step that works in order fails before it stores anything.
      if (directives.fail === Wf.StorageFailed) result = { ...result, files: [storageFaultFile(), ...(result.files ?? [])] };
      return result;
    },

    async cancel(upstreamId) {
      remember(canceled, upstreamId, true, REMEMBERED_CANCELS);
      results.delete(upstreamId);
    },
  };
}
