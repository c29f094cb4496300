/**
 * A `fetch` for the replicate package that makes one network exchange per SDK request. The package
 * repeats a request up to five more times, at once, on a 429, on a 5xx to a GET and on any thrown
 * error, and has no option to turn that off; the worker owns retries (and honours Retry-After),
 * so a repeat made with the same request init is answered with the first exchange's outcome
 * instead of calling the provider again.
 *
 * `bodyOf` gives the body text of an answer handed out, even after the package has read it, so an
 * error's details (Replicate's problem JSON) can be recovered from the error's `response`.
 */
export function createSingleExchangeFetch(base: typeof fetch): { fetch: typeof fetch; bodyOf: (response: Response) => Promise<string | undefined> } {
  const exchanges = new WeakMap<object, Promise<Answer>>();
  const bodies = new WeakMap<Response, Uint8Array>();

  // The answer is read once (the base has it in memory already); each hand-out is a fresh Response
  // over the same bytes, which costs less than teeing the body's stream for every copy.
  async function handOut(exchange: Promise<Answer>): Promise<Response> {
    const answer = await exchange;
    const nullBody = answer.status === 204 || answer.status === 304;
    const copy = new Response(nullBody ? null : answer.body, answer.init);
    bodies.set(copy, answer.body);
    return copy;
  }

  const single: typeof fetch = (input, init) => {
    if (!init) return handOut(read(base(input)));
    let exchange = exchanges.get(init);
    if (!exchange) {
      exchange = read(base(input, init));
      exchanges.set(init, exchange);
      // A failed exchange is rethrown to every repeat; this handler only keeps it from being unhandled.
      exchange.catch(() => {});
    }
    return handOut(exchange);
  };

  return {
    fetch: single,
    bodyOf: async (response) => {
      const body = bodies.get(response);
      return body && new TextDecoder().decode(body);
    },
  };
}

interface Answer {
  status: number;
  init: ResponseInit;
  body: Uint8Array;
}

async function read(response: Promise<Response>): Promise<Answer> {
  const original = await response;
  const body = new Uint8Array(await original.arrayBuffer());
  return { status: original.status, init: { status: original.status, statusText: original.statusText, headers: original.headers }, body };
}
