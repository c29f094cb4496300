import { Writable } from "node:stream";
import winston from "winston";
import { createLogger } from "@gen/logger";

function capture(): { lines: Record<string, any>[]; logger: winston.Logger } {
  const lines: Record<string, any>[] = [];
  const logger = createLogger("test", "info");
  logger
    .clear()
    .add(new winston.transports.Stream({ stream: new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }) }));
  return { lines, logger };
}

describe("createLogger", () => {
  test("an Error in a field keeps its name, message, code, stack and cause", () => {
    const { lines, logger } = capture();
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    logger.error("task insert failed", { request_id: "req_1", err: new Error("query failed", { cause }) });
    expect(lines[0]).toMatchObject({ level: "error", message: "task insert failed", service: "test", request_id: "req_1" });
    expect(lines[0]!.err).toMatchObject({
      name: "Error",
      message: "query failed",
      cause: { message: "connect ECONNREFUSED 127.0.0.1:5432", code: "ECONNREFUSED" },
    });
    expect(lines[0]!.err.stack).toContain("create-logger.test.ts");
  });

  test("only those fields: an HTTP client's options (and the webhook URL in them) stay out", () => {
    const { lines, logger } = capture();
    const error = Object.assign(new Error("Timeout awaiting 'request' for 10000ms"), {
      code: "ETIMEDOUT",
      options: { url: "https://hooks.example/x?secret=abc" },
    });
    logger.warn("attempt failed", { err: error });
    expect(JSON.stringify(lines[0])).not.toContain("secret=abc");
    expect(lines[0]!.err).toMatchObject({ message: "Timeout awaiting 'request' for 10000ms", code: "ETIMEDOUT" });
  });
});

describe("a level below the logger's", () => {
  test("is dropped before any format runs; enabled levels, children and a raised level still write", () => {
    const { lines, logger } = capture();
    const formatted: string[] = [];
    logger.format = winston.format.combine(winston.format((info) => (formatted.push(String(info.message)), info))(), logger.format);
    logger.debug("dropped", { task_id: "tsk_1" });
    expect(formatted).toEqual([]);
    logger.info("kept", { task_id: "tsk_1" });
    logger.child({ request_id: "req_1" }).warn("from a child");
    logger.child({ request_id: "req_2" }).debug("dropped too");
    logger.level = "debug";
    logger.debug("now kept");
    expect(formatted).toEqual(["kept", "from a child", "now kept"]);
    expect(lines.map((line) => [line.level, line.message, line.request_id])).toEqual([
      ["info", "kept", undefined],
      ["warn", "from a child", "req_1"],
      ["debug", "now kept", undefined],
    ]);
  });
});
