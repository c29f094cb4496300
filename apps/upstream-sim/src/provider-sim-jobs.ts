import { MEDIA_ENDPOINTS, type Endpoint } from "@gen/domain";
import type { CompletedResult } from "@gen/providers";
import { simulateGeneration } from "@gen/simulator";
import type { Request, Response } from "express";
import type { UpDirectives } from "./up-directives.ts";

/** A job of a provider simulator (Replicate, Runway): what it was asked for, in our parameters. */
export interface ProviderSimJob {
  id: string;
  endpoint: Endpoint;
  model: string;
  /** The provider's input translated back to our parameters, for simulateGeneration. */
  params: Record<string, unknown>;
  createdAt: number;
  directives: UpDirectives;
  canceled: boolean;
  polls: number;
}

export interface ProviderSimJobsOptions {
  now: () => number;
  defaultDelayMs: number;
  maxJobs: number;
}

const CACHED_RESULTS = 32;

/**
 * The job table the provider simulators share: when a job is done, its simulated result (kept for
 * the last few jobs, recomputed on demand otherwise: it is a pure function of the job), and its
 * output files served without authentication, as the providers' file hosts serve them.
 */
export function createProviderSimJobs(options: ProviderSimJobsOptions) {
  const jobs = new Map<string, ProviderSimJob>();
  const results = new Map<string, CompletedResult>();
  const throttled = new Map<string, number>();

  const doneAt = (job: ProviderSimJob) => job.createdAt + options.defaultDelayMs + (job.directives.delayMs ?? 0);

  return {
    add(job: ProviderSimJob): void {
      jobs.set(job.id, job);
      if (jobs.size > options.maxJobs) jobs.delete(jobs.keys().next().value as string);
    },
    get: (id: string) => jobs.get(id),
    doneAt,
    isDone: (job: ProviderSimJob) => !job.directives.hang && options.now() >= doneAt(job),
    /** Whether the job is still before its half-way point (a provider's "starting" or "PENDING"). */
    isEarly: (job: ProviderSimJob) => options.now() < job.createdAt + (doneAt(job) - job.createdAt) / 2,
    resultOf(job: ProviderSimJob): CompletedResult {
      let result = results.get(job.id);
      if (!result) {
        result = simulateGeneration({ endpoint: job.endpoint, model: job.model, params: job.params });
        results.set(job.id, result);
        if (results.size > CACHED_RESULTS) results.delete(results.keys().next().value as string);
      }
      return result;
    },
    /** The output file URLs of a done media job, under `filesBase`. */
    fileUrls(job: ProviderSimJob, filesBase: string): string[] {
      if (job.directives.outputUrl) return [job.directives.outputUrl];
      return (this.resultOf(job).files ?? []).map((file, index) => `${filesBase}/${job.id}/${index}.${file.extension}`);
    },
    /** True when this request is one of the first `limit` with `key`: it is to be answered 429. */
    throttle(key: string, limit: number | undefined): boolean {
      if (!limit) return false;
      const served = throttled.get(key) ?? 0;
      if (served >= limit) return false;
      throttled.set(key, served + 1);
      if (throttled.size > options.maxJobs) throttled.delete(throttled.keys().next().value as string);
      return true;
    },
    /** GET handler of `/files/:id/:name`. */
    serveFile(req: Request<{ id: string; name: string }>, res: Response, notFound: (res: Response) => void): void {
      const job = jobs.get(req.params.id);
      const match = /^(\d{1,3})\.([a-z0-9]+)$/.exec(req.params.name);
      if (!job || !match || job.canceled || job.directives.hang || options.now() < doneAt(job) || !MEDIA_ENDPOINTS.includes(job.endpoint)) return notFound(res);
      if (job.directives.badFile) {
        res.status(job.directives.badFile).type("text/plain").send("Simulated file download failure");
        return;
      }
      const file = this.resultOf(job).files?.[Number(match[1])];
      if (!file || file.extension !== match[2]) return notFound(res);
      res
        .set("Content-Type", job.directives.fileType ?? file.contentType)
        .set("Cache-Control", "no-store")
        .send(file.data);
    },
  };
}

/** "16:9" or "1280:720" as a simulator size ("1280x720"; a bare ratio scaled to 512 on its long side). */
export function ratioToSize(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d{1,5}):(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width === 0 || height === 0) return undefined;
  if (Math.max(width, height) >= 64) return `${width}x${height}`;
  const scale = 512 / Math.max(width, height);
  return `${Math.round(width * scale)}x${Math.round(height * scale)}`;
}

/** POSTs a webhook body to `url`, once, and forgets it: a lost or refused delivery is the receiver's problem, as with a real provider. */
export function postWebhook(url: string, body: string, headers: Record<string, string> = {}): void {
  void fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    signal: AbortSignal.timeout(5000),
  })
    .then((response) => response.body?.cancel())
    .catch(() => {});
}
