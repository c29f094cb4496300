import { Ajv } from "ajv";
import addFormats from "ajv-formats";

const INVISIBLE = /[\s\p{Cc}\p{Cf}\p{Cs}]/u;

/** The `http-url` format: an absolute http or https URL with a host, written without spaces. */
function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value) || INVISIBLE.test(value)) return false;
  try {
    return new URL(value).hostname !== "";
  } catch {
    return false;
  }
}

/**
 * Strict, so that a typo in an operator's schema fails at load instead of silently accepting
 * everything; `useDefaults` fills parameter defaults into the params. `allErrors: false` stops at
 * the first error, which bounds the cost of any body (a catalog compiles each schema both ways).
 */
export function createAjv(allErrors = true): Ajv {
  const ajv = new Ajv({ allErrors, strict: true, strictRequired: false, allowUnionTypes: true, useDefaults: true, messages: true });
  addFormats(ajv);
  ajv.addFormat("http-url", { type: "string", validate: isHttpUrl });
  return ajv;
}
