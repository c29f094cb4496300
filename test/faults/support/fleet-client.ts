// A client of a fleet of gateways, as a well-behaved API user writes one: submissions spread over
// every gateway, a failed request retried on the next gateway when retrying is safe (the
// connection was refused, so nothing was sent, or the submission carries an Idempotency-Key).
interface FleetSubmission {
  i: number;
  key?: string;
  /** Task ids of every 2xx answer (all equal when the key did its job). */
  ids: string[];
  /** Requests that got no answer or a 5xx. */
  failures: number;
  /** Requests that were sent and got no answer (the gateway died with it): the outcome unknown. */
  lostAnswers: number;
  /** Accepted, refused (4xx), or unknown: an unkeyed request that failed after it may have been sent. */
  outcome: "accepted" | "refused" | "unknown";
  detail?: string;
}

export interface FleetLoad {
  submissions: FleetSubmission[];
  accepted(): string[];
  /** Times (ms since epoch) of accepted answers, to see when the fleet answered again. */
  acceptedAt: number[];
  stop(): Promise<void>;
}

export interface FleetLoadOptions {
  baseUrls: string[];
  auth: string;
  body: (i: number) => Record<string, unknown>;
  /** Submissions i with keyed(i) carry an Idempotency-Key. */
  keyed: (i: number) => boolean;
  /** Keyed submissions i with replay(i) are sent once more after their 2xx, to another gateway. */
  replay: (i: number) => boolean;
  keyPrefix: string;
  lanes: number;
  pauseMs: number;
  pathname?: string;
}

const MAX_TRIES = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Answer = { status: number; id?: string; code?: number; refused?: boolean; error?: string };

async function post(baseUrl: string, pathname: string, auth: string, body: unknown, key: string | undefined): Promise<Answer> {
  try {
    const res = await fetch(`${baseUrl}${pathname}`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/json", ...(key ? { "Idempotency-Key": key } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as { id?: string; error?: { code?: number } }) : {};
    return { status: res.status, id: parsed.id, code: parsed.error?.code };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { status: 0, refused: cause?.code === "ECONNREFUSED", error: cause?.code ?? (error as Error).name };
  }
}

export function startFleetLoad(options: FleetLoadOptions): FleetLoad {
  const pathname = options.pathname ?? "/api/v1/detect";
  const submissions: FleetSubmission[] = [];
  const acceptedAt: number[] = [];
  let running = true;
  let n = 0;

  const submit = async (i: number) => {
    const key = options.keyed(i) ? `${options.keyPrefix}-${i}` : undefined;
    const body = options.body(i);
    const s: FleetSubmission = { i, key, ids: [], failures: 0, lostAnswers: 0, outcome: "unknown" };
    submissions.push(s);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      // Pairs of submissions per gateway, so keyed and unkeyed ones both reach every gateway.
      const gateway = (Math.floor(i / 2) + tries) % options.baseUrls.length;
      const answer = await post(options.baseUrls[gateway]!, pathname, options.auth, body, key);
      if (answer.status >= 200 && answer.status < 300 && answer.id) {
        s.ids.push(answer.id);
        s.outcome = "accepted";
        acceptedAt.push(Date.now());
        if (key && options.replay(i)) {
          // A client that timed out just as the answer came, retrying on the other gateway.
          const again = await post(options.baseUrls[(gateway + 1) % options.baseUrls.length]!, pathname, options.auth, body, key);
          if (again.status >= 200 && again.status < 300 && again.id) s.ids.push(again.id);
        }
        return;
      }
      if (answer.status >= 400 && answer.status < 500) {
        s.outcome = "refused";
        s.detail = `${answer.status}/${answer.code}`;
        return;
      }
      s.failures++;
      if (answer.status === 0 && !answer.refused) s.lostAnswers++;
      s.detail = answer.status === 0 ? answer.error : `${answer.status}/${answer.code}`;
      // 60002 means rolled back and refunded: a retry is safe with or without a key.
      const safe = key !== undefined || answer.refused === true || answer.code === 60002;
      if (!safe) return;
      await sleep(Math.min(1000, 100 * (tries + 1)));
    }
  };

  const lane = async () => {
    while (running) {
      await submit(n++);
      await sleep(options.pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: options.lanes }, lane));
  return {
    submissions,
    acceptedAt,
    accepted: () => submissions.filter((s) => s.outcome === "accepted").map((s) => s.ids[0]!),
    async stop() {
      running = false;
      await done;
    },
  };
}
