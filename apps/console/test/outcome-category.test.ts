import { DeliveryStatus, FIXED_LAST_ERRORS, httpStatusError } from "@gen/domain";
import { OUTCOME_CATEGORIES, outcomeCategory } from "../src/deliveries/outcome-category.ts";

// The delivery chart's categories come from the service's vocabulary (@gen/domain): every outcome an
// attempt can record has a category and a colour of its own; only what this build does not know is `other`.

test("every outcome the domain names is its own category, every http_<status> is http_error", () => {
  for (const outcome of [DeliveryStatus.Delivered, ...FIXED_LAST_ERRORS]) expect(outcomeCategory(outcome)).toBe(outcome);
  for (const status of [200, 301, 404, 429, 500, 503]) expect(outcomeCategory(httpStatusError(status))).toBe("http_error");
});

test("values outside the vocabulary are other", () => {
  for (const outcome of ["", "http_5000", "http_", "HTTP_500", "http_50a", "Timeout", "pending", "other_thing"]) expect(outcomeCategory(outcome)).toBe("other");
});

test("the chart lists exactly the domain's outcomes, http_error and other, each once with a colour of its own", () => {
  const names = OUTCOME_CATEGORIES.map((category) => category.name);
  expect(new Set(names)).toEqual(new Set([DeliveryStatus.Delivered, "http_error", ...FIXED_LAST_ERRORS, "other"]));
  expect(names).toHaveLength(new Set(names).size);
  const colours = OUTCOME_CATEGORIES.map((category) => category.colour);
  for (const colour of colours) expect(colour).toMatch(/^#[0-9a-f]{6}$/);
  expect(new Set(colours).size).toBe(colours.length);
});
