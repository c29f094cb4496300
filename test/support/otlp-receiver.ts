import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carried it, with its process's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: the exporter appends /v1/traces. */
  endpoint: string;
  /** Every export request as it came: path, content type, raw body. */
  requests: { path: string; contentType: string; body: Buffer }[];
  /** The spans of every http/json export so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** A tiny OTLP/HTTP collector on loopback: takes http/json and http/protobuf exports and answers 200. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpReceiver["requests"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      const json = String(req.headers["content-type"]).startsWith("application/json");
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : "");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans: () => requests.filter((r) => r.contentType.startsWith("application/json")).flatMap((r) => spansOf(JSON.parse(r.body.toString("utf8")))),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function spansOf(exported: {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
}): ReceivedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)["service.name"]);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: String(span.traceId),
        spanId: String(span.spanId),
        parentSpanId: String(span.parentSpanId ?? ""),
        name: String(span.name),
        kind: Number(span.kind),
        attributes: attributesOf(span.attributes as KeyValue[] | undefined),
      })),
    );
  });
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));
}
