// The shapes of the server's answers the page reads (LM Studio's /api/v1 and llamux's own UI routes).

export interface LoadedInstance {
  id: string;
  config?: { context_length?: number; gpu_layers?: number | null };
}

/** One entry of GET /api/v1/models. */
export interface ModelEntry {
  type: string;
  key: string;
  display_name?: string;
  publisher?: string;
  architecture?: string | null;
  quantization?: { name?: string | null; bits_per_weight?: number | null } | null;
  size_bytes?: number;
  params_string?: string | null;
  loaded_instances?: LoadedInstance[];
  max_context_length?: number;
  capabilities?: { vision?: boolean; trained_for_tool_use?: boolean; reasoning?: unknown; speech?: boolean };
}

export interface HubModel {
  id: string;
  downloads: number | null;
  likes: number | null;
}

export interface HubQuantization {
  quantization: string;
  file: string;
  size_bytes: number | null;
  recommended: boolean;
}

export interface HubRepo {
  id: string;
  quantizations: HubQuantization[];
  projector: { file: string; size_bytes: number | null } | null;
}

/** GET /api/v1/models/download/status/{job}. */
export interface DownloadStatus {
  job_id: string;
  status: "downloading" | "paused" | "completed" | "failed" | "already_downloaded" | string;
  total_size_bytes?: number | null;
  downloaded_bytes?: number | null;
  bytes_per_second?: number | null;
  error?: string | { message?: string } | null;
}

export interface ServerStatus {
  version: string;
  profile: string;
  anchor: string;
  api_key_required: boolean;
  host: string;
  port: number;
  runtime: string | null;
  loaded: Array<{ model: string; path: string; compute: string; context_length: number; sequences: number; gpu_layers: number | null }>;
}

export interface LoggedRequest {
  id: number;
  at: number;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  stream: string | null;
}

/** One entry of GET /v1/usage: a named key's usage and limits. */
export interface KeyUsageEntry {
  key: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  rate_limited: number;
  tokens_today: number;
  last_minute: { requests: number; tokens: number };
  limits: {
    scopes: string[]; models: string[] | null; rpm: number | null; tpm: number | null; tokens_per_day: number | null;
    max_parallel: number | null; weight: number; expires_at: string | null;
  } | null;
}

export const isLoaded = (model: ModelEntry) => (model.loaded_instances?.length ?? 0) > 0;
export const modelLabel = (model: ModelEntry) => model.display_name || model.key;
