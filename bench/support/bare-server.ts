// The baseline of the HTTP figures: bare Express on the same machine, one JSON POST and one JSON
// GET answering bodies shaped like the gateway's, nothing else (no auth, database or Redis).
// PROCESSES=N runs N node:cluster children on the port, as GATEWAY_PROCESSES does the gateway.
import cluster from "node:cluster";
import express from "express";

const processes = Number(process.env.PROCESSES || "1");
if (cluster.isPrimary && processes > 1) {
  let listening = 0;
  for (let i = 0; i < processes; i++) cluster.fork().on("message", () => ++listening === processes && process.send?.({ ready: true }));
  process.on("SIGTERM", () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    cluster.on("exit", () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0));
  });
} else {
  const app = express();
  const task = {
    id: "task_0123456789abcdef0123456789abcdef",
    object: "task",
    status: "queued",
    model: "sim-image-1",
    created_at: new Date().toISOString(),
    output: null,
    error: null,
    usage: { credits: 4 },
  };
  app.post("/api/v1/images/generations", express.json({ limit: "1mb" }), (req, res) => {
    res.status(202).json({ ...task, echo: typeof (req.body as { model?: unknown }).model });
  });
  app.get("/api/v1/tasks/:id", (req, res) => {
    res.json({ ...task, id: req.params.id });
  });
  const server = app.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.({ ready: true }));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
