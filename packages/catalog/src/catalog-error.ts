/** The catalog file cannot be used; the message says which file, model and field. */
export class CatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CatalogError";
  }
}
