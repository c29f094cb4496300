export { createLogger, type ContextFields, type Logger } from "./create-logger.ts";
