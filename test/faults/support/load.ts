import type { FaultStack } from "./fault-stack.ts";

/**
 * Submits `count` tasks, 20 at a time; every one must be accepted. Returns their ids in order.
 * `auth` may depend on the task's index (several customers' tasks interleaved); `ratePerSec` paces
 * the submissions instead of sending them as fast as the gateway answers.
 */
export async function submitMany(
  stack: FaultStack,
  auth: string | ((i: number) => string),
  count: number,
  body: (i: number) => Record<string, unknown>,
  pathname = "/api/v1/detect",
  ratePerSec?: number,
): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  let next = 0;
  const started = Date.now();
  const lane = async () => {
    for (let i = next++; i < count; i = next++) {
      // Paced: submission i is not sent before started + i / rate.
      const wait = ratePerSec === undefined ? 0 : started + (i * 1000) / ratePerSec - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const answer = await stack.call(typeof auth === "string" ? auth : auth(i), "POST", pathname, body(i));
      if (answer.status >= 300) throw new Error(`submission ${i} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      ids[i] = answer.body.id as string;
    }
  };
  await Promise.all(Array.from({ length: 20 }, lane));
  return ids;
}

/** Polls `probe` every 100 ms until it returns a value. */
export async function until<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs: number, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Sample {
  kind: "submit" | "get";
  startedAt: number;
  ms: number;
  /** HTTP status; 0 when no answer came (connection error or the 15 s client time-out). */
  status: number;
  code?: number;
  taskId?: string;
  /** The task's `status` in a task answer (a 202 or a poll's 200). */
  taskStatus?: string;
}

export interface Load {
  samples: Sample[];
  /** Ids of the tasks whose submission was accepted. */
  accepted: string[];
  stop(): Promise<void>;
}

/**
 * Steady traffic: each lane submits a task, reads the task it submitted last, pauses, and again.
 * Every request is recorded with its timing and answer.
 */
export function startLoad(stack: FaultStack, auth: string, body: (i: number) => Record<string, unknown>, lanes = 4, pauseMs = 50): Load {
  const samples: Sample[] = [];
  const accepted: string[] = [];
  let running = true;
  let n = 0;
  const record = async (kind: Sample["kind"], method: string, pathname: string, payload?: unknown): Promise<Sample> => {
    const startedAt = Date.now();
    const sample: Sample = await stack.call(auth, method, pathname, payload).then(
      (answer) => ({
        kind,
        startedAt,
        ms: answer.ms,
        status: answer.status,
        code: answer.body.error?.code,
        taskId: answer.body.id,
        taskStatus: answer.body.status,
      }),
      () => ({ kind, startedAt, ms: Date.now() - startedAt, status: 0 }),
    );
    samples.push(sample);
    return sample;
  };
  const lane = async () => {
    let last: string | undefined;
    while (running) {
      const submitted = await record("submit", "POST", "/api/v1/detect", body(n++));
      if (submitted.status < 300 && submitted.taskId) {
        accepted.push(submitted.taskId);
        last = submitted.taskId;
      }
      if (last) await record("get", "GET", `/api/v1/tasks/${last}`);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  const lanesDone = Promise.all(Array.from({ length: lanes }, lane));
  return {
    samples,
    accepted,
    async stop() {
      running = false;
      await lanesDone;
    },
  };
}
