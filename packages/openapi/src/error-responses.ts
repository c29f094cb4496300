import { ERROR_CATALOG, type ErrorCode } from "@gen/errors";
import { codesByStatus, errorSchemaName } from "./error-schemas.ts";
import { RATE_LIMIT_HEADERS, REQUEST_ID_HEADER, RETRY_AFTER_HEADER } from "./headers.ts";
import { type Json, ref } from "./json.ts";

const EXAMPLE_REQUEST_ID = "req_5f0c2a9be41d7c3a86f10d2e";

/** One response per HTTP status the codes use, listing the codes and an example of each. */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const [status, group] of codesByStatus(codes)) {
    responses[String(status)] = {
      description: group.map((code) => `${code}: ${ERROR_CATALOG[code].message}`).join(". "),
      headers: status === 429 ? { ...REQUEST_ID_HEADER, ...RETRY_AFTER_HEADER, ...RATE_LIMIT_HEADERS } : REQUEST_ID_HEADER,
      content: {
        "application/json": {
          schema: ref(errorSchemaName(status)),
          examples: Object.fromEntries(
            group.map((code) => [
              String(code),
              {
                summary: `${code}: ${ERROR_CATALOG[code].message}`,
                value: { error: { code, message: ERROR_CATALOG[code].message, request_id: EXAMPLE_REQUEST_ID } },
              },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}
