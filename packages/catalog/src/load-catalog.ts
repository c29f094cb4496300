import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CatalogError } from "./catalog-error.ts";
import { createCatalog, type Catalog } from "./catalog.ts";

/** The catalog shipped in this package, used when MODEL_CATALOG is not set. */
export const DEFAULT_CATALOG_PATH = fileURLToPath(new URL("../models.json", import.meta.url));

/** Reads, checks and compiles a catalog file. Throws CatalogError naming the file and the fault. */
export function loadCatalog(path: string = DEFAULT_CATALOG_PATH): Catalog {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CatalogError(`Cannot read model catalog ${path}: ${(error as Error).message}`);
  }
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`Model catalog ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return createCatalog(content, `Model catalog ${path}`);
}
