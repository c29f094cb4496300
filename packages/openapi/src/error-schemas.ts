import { ERROR_CATALOG, type ErrorCode } from "@gen/errors";
import { errorCodeDescription } from "./document-description.ts";
import { type Json, ref } from "./json.ts";

export const ERROR_CODES = Object.keys(ERROR_CATALOG).map(Number) as ErrorCode[];

/** The HTTP statuses the error catalog uses, each with its codes. */
export function codesByStatus(codes: readonly ErrorCode[] = ERROR_CODES): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

export const errorSchemaName = (status: number): string => `Error${status}`;

/** Every code with its status and message, and the error envelope of each HTTP status. */
export function errorSchemas(): Record<string, Json> {
  const schemas: Record<string, Json> = {
    ErrorCode: {
      type: "integer",
      description: errorCodeDescription(),
      oneOf: ERROR_CODES.map((code) => ({
        const: code,
        title: String(code),
        description: `HTTP ${ERROR_CATALOG[code].status}: ${ERROR_CATALOG[code].message}`,
        "x-http-status": ERROR_CATALOG[code].status,
      })),
    },
  };
  // Each status's envelope is whole, not a refinement of one shared envelope by allOf: generated
  // clients get one plain type per status, and validators that close every object (Redocly's
  // example check) accept it.
  for (const [status, codes] of codesByStatus()) {
    schemas[errorSchemaName(status)] = envelope(status, { allOf: [ref("ErrorCode")], enum: codes });
  }
  return schemas;
}

function envelope(status: number, code: Json): Json {
  return {
    type: "object",
    description: `The error envelope of an HTTP ${status} answer. \`request_id\` equals the \`X-Request-Id\` header; quote it in support reports.`,
    additionalProperties: false,
    required: ["error"],
    properties: {
      error: {
        type: "object",
        additionalProperties: false,
        required: ["code", "message"],
        properties: {
          code,
          message: { type: "string", description: "Human-readable; may name a parameter or state a balance." },
          request_id: { type: "string", pattern: "^req_[0-9a-f]{24}$" },
        },
      },
    },
  };
}
