import type { ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";

/** One request on a connection of its own, so a GATEWAY_PROCESSES cluster spreads them over its children. */
export function callOnOwnConnection(method: string, url: string, auth: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      url,
      { method, agent: false, headers: { authorization: auth, ...(payload ? { "content-type": "application/json" } : {}) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.once("error", reject).end(payload);
  });
}

/** The JSON log lines the gateway (its children included, each line naming its pid) writes on stdout, as they come. */
export function collectLogLines(gateway: ChildProcess): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  let rest = "";
  gateway.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    for (const line of parts) if (line.startsWith("{")) lines.push(JSON.parse(line));
  });
  return lines;
}
