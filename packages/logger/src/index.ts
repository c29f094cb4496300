export { createLogger, type Logger } from "./create-logger.ts";
