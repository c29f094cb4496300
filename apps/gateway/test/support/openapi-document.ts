import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { Response } from "supertest";

const DOC_ID = "https://openapi.test/openapi.json";

/**
 * Checks real responses against the OpenAPI document the gateway serves: the response the document
 * lists for (path, method, status) must exist, its headers must be present and match their schemas,
 * and the JSON body must match the listed schema (JSON Schema 2020-12, as OpenAPI 3.1 says).
 */
export class OpenApiDocument {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: any) {
    addFormats(this.ajv);
    this.ajv.addFormat("http-url", /^https?:\/\/\S+$/i);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** Errors of `value` against the schema at a JSON pointer of the document (`#/components/...`). */
  errors(pointer: string, value: unknown): string[] {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
  }

  /** Problems of a real response against the document; [] when it conforms. */
  check(res: Response, method: string, path: string): string[] {
    const where = `${method.toUpperCase()} ${path} ${res.status}`;
    const response = this.doc.paths[path]?.[method]?.responses?.[String(res.status)];
    if (!response) return [`${where}: not in the document`];
    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {}) as [string, { $ref: string }][]) {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) {
        problems.push(`${where}: header ${name} missing`);
        continue;
      }
      const pointer = `${header.$ref}/schema`;
      const schema = this.doc.components.headers[header.$ref.split("/").pop()!].schema;
      const typed = schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
      problems.push(...this.errors(pointer, typed).map((e) => `${where}: header ${name}: ${e}`));
    }
    const schemaRef: string | undefined = response.content?.["application/json"]?.schema?.$ref;
    if (schemaRef) {
      if (!/^application\/json/.test(res.headers["content-type"] ?? "")) problems.push(`${where}: content-type ${res.headers["content-type"]}`);
      problems.push(...this.errors(schemaRef, res.body).map((e) => `${where}: body${e}`));
    }
    return problems;
  }
}
