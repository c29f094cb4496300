import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const DOC_ID = "https://openapi.test/openapi.json";

/** Compiles `#/components/schemas/<name>` of an OpenAPI 3.1 document with a JSON Schema 2020-12 validator. */
export function schemaValidator(doc: object): (name: string) => (value: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat("http-url", /^https?:\/\/\S+$/i);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  return (name) => {
    const validate = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    return (value) =>
      validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
  };
}
