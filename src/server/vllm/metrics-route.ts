// GET /metrics: Prometheus text exposition of the server's metrics.
import type { Context } from "hono";
import type { MetricsExporter } from "../deps.ts";

export function metricsRoute(metrics: MetricsExporter) {
  return async function metricsHandler(c: Context) {
    const text = await metrics.render();
    return c.body(text, 200, { "Content-Type": metrics.contentType });
  };
}
