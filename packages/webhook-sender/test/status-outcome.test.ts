import { statusOutcome } from "../src/status-outcome.ts";

describe("statusOutcome", () => {
  it.each([200, 201, 202, 204, 299])("counts %i as delivered", (status) => {
    expect(statusOutcome(status)).toEqual({ ok: true, status });
  });

  it.each([100, 199, 300, 301, 302, 304, 307, 308, 400, 404, 429, 500, 503])("reports %i as http_<status>", (status) => {
    expect(statusOutcome(status)).toEqual({ ok: false, lastError: `http_${status}`, status });
  });
});
