import type { Response } from "supertest";

/** Asserts the documented error envelope: status, code, and request_id equal to X-Request-Id. */
export function expectError(res: Response, status: number, code: number): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toMatch(/^req_[0-9a-f]{24}$/);
  expect(res.headers["x-request-id"]).toBe(res.body.error.request_id);
  expect(typeof res.body.error.message).toBe("string");
  expect(Object.keys(res.body)).toEqual(["error"]);
}
