export { buildOpenApi, type OpenApiOptions } from "./build-openapi.ts";
