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
  const exchanges = new WeakMap<object, Promise<Response>>();
  const spares = new WeakMap<Response, Response>();

  async function handOut(exchange: Promise<Response>): Promise<Response> {
    const original = await exchange;
    const copy = original.clone();
    spares.set(copy, original.clone());
    return copy;
  }

  const single: typeof fetch = (input, init) => {
    if (!init) return handOut(base(input));
    let exchange = exchanges.get(init);
    if (!exchange) {
      exchange = base(input, init);
      exchanges.set(init, exchange);
      // A failed exchange is rethrown to every repeat; this handler only keeps it from being unhandled.
      exchange.catch(() => {});
    }
    return handOut(exchange);
  };

  return {
    fetch: single,
    bodyOf: async (response) =>
      spares
        .get(response)
        ?.text()
        .catch(() => undefined),
  };
}
