/** The log calls a metrics server needs; both apps pass their winston logger. */
export interface MetricsServerLogger {
  info(message: string, fields?: Record<string, unknown>): unknown;
  warn(message: string, fields: Record<string, unknown>): unknown;
  error(message: string, fields?: Record<string, unknown>): unknown;
}
