// What every route handler of one listener needs.
import type { ModelService } from "./model-service.ts";
import type { RequestUsage } from "../engine/types.ts";
import type { Profile } from "./profiles/profile.ts";
import type { ToolCallParserName } from "../generation/chat-output.ts";
import type { ImageFetchPolicy } from "../vision/image-fetch.ts";
import type { StartupReadiness } from "./readiness.ts";
import type { McpHub } from "../mcp/mcp-hub.ts";
import type { RealtimeSettings } from "./realtime-config.ts";

/** One finished generation (one choice), for metrics and request logs. */
export interface FinishedGeneration {
  model: string;
  usage: RequestUsage;
  finishReason: string;
  /** From the request's arrival to the choice's end. */
  e2eSeconds: number;
}

/** Told about every generation a route runs (the vLLM profile's /metrics counts them). */
export interface GenerationObserver {
  finished(generation: FinishedGeneration): void;
}

/** The server's metrics in a scrape format (the vLLM profile serves them at /metrics). */
export interface MetricsExporter {
  contentType: string;
  /** Reads the gauges that are sampled on scrape, then renders every metric. */
  render(): Promise<string>;
}

export interface ServerDeps {
  profile: Profile;
  models: ModelService;
  observer?: GenerationObserver;
  metrics?: MetricsExporter;
  /** vLLM's --tool-call-parser: the call syntax to read, or "none"; unset reads the template's. */
  toolCallParser?: ToolCallParserName;
  /** How image URLs in requests are fetched. Default: defaultImageFetchPolicy (no private addresses). */
  imageFetch?: ImageFetchPolicy;
  /** POST /api/push may upload stored models to registries (serve --allow-push). Default: false. */
  allowPush?: boolean;
  /** The MCP servers requests may use (mcp.json, and URLs with --allow-request-mcp). Default: none, and no URLs. */
  mcp?: McpHub;
  /** The folder of named speaker files a speech request's `voice` may name (LLAMUX_VOICES). */
  voicesDir?: string;
  /** The Realtime API's pipelines (--realtime-config) and speech model (--realtime-voice-model). */
  realtime?: RealtimeSettings;
  /** The loads of the models named on the command line (profile b's /health waits for them). */
  readiness?: StartupReadiness;
}
