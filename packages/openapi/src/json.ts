/** A JSON object of the OpenAPI document. */
export type Json = { [key: string]: unknown };

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

export const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: "null" }] });
