// `make bench` part "agents", issue 42's first goal: Claude Code's own requests at the server's defaults.
// The real CLI's requests (test/fixtures/recordings/claude-code-*.json, format in
// test/fixtures/recording-proxy.ts: `claude -p`, `claude -p --continue`, then a new `claude -p`, recorded
// without CLAUDE_CODE_ATTRIBUTION_HEADER or any other prompt switch) are sent again, in order, to
// `llamux serve MODEL --profile b` with nothing else that changes the prompt or the cache, twice: on a
// template that writes Claude Code's later system message in place, and on the same template made strict
// (it refuses a system message after the first, as Qwen3's does; test/agents/claude-code-replay.test.ts
// checks the same on the tiny agent model). Rows: the new session's first request reads ≥ 70% of its
// prompt from the cache (the system prompt and tools it shares with the first session), a later request
// of a session (--continue) ≥ 90%. Each reply is cut to a few tokens (max_tokens): only the prompts matter
// here, and a random-weight model would otherwise write up to the recorded 32,000.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHATML_HERMES_STRICT_TEMPLATE, CHATML_HERMES_TEMPLATE } from "../models/templates.ts";
import { RECORDING_FORMAT, replayInit, type RecordedRequest, type Recording } from "../../test/fixtures/recording-proxy.ts";
import { type LlamuxCommand, type ServerSpec, showCommand, startServer } from "./server.ts";
import type { GoalRow } from "./report.ts";

const RECORDINGS = join(import.meta.dir, "..", "..", "test", "fixtures", "recordings");

export interface ReplayOptions {
  model: string;
  modelName: string;
  /** The llamux build the rows name. */
  build: string;
  llamux: LlamuxCommand;
  threads: number;
  /** max_tokens of every replayed request (at most the recorded one). */
  outputTokens: number;
  log: (line: string) => void;
}

interface Usage { input_tokens: number; cache_read_input_tokens: number }
interface ReplayedRequest { run: string; path: string; status: number; recordedStatus: number; ms: number; usage?: Usage }

const TEMPLATES = [
  { name: "writes later system messages in place", file: "in-place.jinja", text: CHATML_HERMES_TEMPLATE },
  { name: "refuses later system messages", file: "strict.jinja", text: CHATML_HERMES_STRICT_TEMPLATE },
] as const;

/** The newest recording of Claude Code (by its version in the file name). */
export function claudeCodeRecording(): { file: string; recording: Recording } {
  const file = readdirSync(RECORDINGS).filter((name) => name.startsWith("claude-code-") && name.endsWith(".json")).sort().at(-1);
  if (!file) throw new Error(`no Claude Code recording in ${RECORDINGS}`);
  const recording = JSON.parse(readFileSync(join(RECORDINGS, file), "utf8")) as Recording;
  if (recording.format !== RECORDING_FORMAT) throw new Error(`${file}: format "${recording.format}", expected "${RECORDING_FORMAT}"`);
  return { file, recording };
}

const isMessages = (request: RecordedRequest) => request.method === "POST" && request.path.startsWith("/v1/messages") && !request.path.includes("count_tokens");

/** The recorded request with its reply cut to `outputTokens`. */
function withShortReply(request: RecordedRequest, outputTokens: number): RecordedRequest {
  if (!isMessages(request) || typeof request.body !== "object" || request.body === null) return request;
  const body = request.body as { max_tokens?: number };
  return { ...request, body: { ...body, max_tokens: Math.min(body.max_tokens ?? outputTokens, outputTokens) } };
}

/** Sends one recorded request again; a Messages request's usage (streamed or not). */
async function replay(baseUrl: string, request: RecordedRequest): Promise<{ status: number; usage?: Usage }> {
  const response = await fetch(baseUrl + request.path, { ...replayInit(request), timeout: false } as RequestInit);
  const text = await response.text();
  if (!isMessages(request) || response.status !== 200) return { status: response.status };
  if (!(request.body as { stream?: boolean }).stream) return { status: response.status, usage: (JSON.parse(text) as { usage: Usage }).usage };
  const events = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as { type: string; usage?: Usage; message?: { usage?: Usage } });
  const usage = events.findLast((e) => e.type === "message_delta" && e.usage)?.usage ?? events.find((e) => e.type === "message_start")?.message?.usage;
  return { status: response.status, ...(usage ? { usage } : {}) };
}

const share = (usage: Usage | undefined) => (usage ? usage.cache_read_input_tokens / (usage.cache_read_input_tokens + usage.input_tokens) : undefined);
const tokens = (usage: Usage | undefined) => (usage ? `${usage.cache_read_input_tokens} of ${usage.cache_read_input_tokens + usage.input_tokens}` : undefined);

export async function runClaudeCodeReplay(o: ReplayOptions): Promise<{ markdown: string; json: unknown; goals: GoalRow[]; commands: string[] }> {
  const { file, recording } = claudeCodeRecording();
  const dir = mkdtempSync(join(tmpdir(), "llamux-bench-replay-"));
  const results: Record<string, ReplayedRequest[]> = {};
  const commands: string[] = [];
  const goals: GoalRow[] = [];
  try {
    for (const template of TEMPLATES) {
      const path = join(dir, template.file);
      writeFileSync(path, template.text);
      // the server's defaults: no context, sequence or cache flag; the recording's model name; fixed threads
      const spec: ServerSpec = { model: o.model, threads: o.threads, llamux: o.llamux, servedModelName: recording.model, extraArgs: ["--chat-template", path] };
      commands.push(showCommand("llamux", spec).replace(dir, "DIR"));
      const server = await startServer("llamux", spec);
      const replayed: ReplayedRequest[] = [];
      try {
        for (const run of recording.runs) {
          for (const request of run.requests) {
            const started = performance.now();
            const { status, usage } = await replay(server.baseUrl, withShortReply(request, o.outputTokens));
            const ms = performance.now() - started;
            replayed.push({ run: run.name, path: request.path, status, recordedStatus: request.status, ms, ...(usage ? { usage } : {}) });
            o.log(`replay (${template.file}): ${run.name} ${request.method} ${request.path} ${status} in ${(ms / 1000).toFixed(1)} s${usage ? `, ${tokens(usage)} prompt tokens cached` : ""}`);
          }
        }
      } finally {
        await server.stop();
      }
      results[template.name] = replayed;
      const first = (run: string) => replayed.find((r) => r.run === run && r.usage);
      const base = { issue: 42, model: o.modelName, build: o.build, besideWhat: "prompt tokens" };
      const failed = replayed.filter((r) => r.status !== r.recordedStatus);
      const note = failed.length ? `${failed.length} request(s) answered otherwise than recorded: ${failed.map((r) => `${r.run} ${r.status}`).join(", ")}` : undefined;
      for (const [run, measure, atLeast] of [
        ["new-session", "a new session's first request: share of its prompt read from the cache", 0.7],
        ["continue", "a later request of a session (--continue): share of its prompt read from the cache", 0.9],
      ] as const) {
        const usage = first(run)?.usage;
        goals.push({
          ...base, measure: `Claude Code (${recording.client}), template that ${template.name}: ${measure}`,
          llamux: usage ? String(usage.cache_read_input_tokens) : undefined, beside: usage ? String(usage.cache_read_input_tokens + usage.input_tokens) : undefined,
          ratio: share(usage), goal: { atLeast }, ...(note ? { note } : usage ? {} : { note: `no usage from the ${run} run` }),
        });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = [
    `### Claude Code's own requests at the server's defaults (${file}: ${recording.runs.map((r) => r.name).join(", ")}), replies cut to ${o.outputTokens} tokens; llamux ${o.build}`,
    "",
    "| template | run | status (recorded) | prompt tokens read from the cache | share | time |",
    "|---|---|---|---:|---:|---:|",
    ...Object.entries(results).flatMap(([template, replayed]) => replayed.map((r) =>
      `| ${template} | ${r.run} | ${r.status} (${r.recordedStatus}) | ${tokens(r.usage) ?? "–"} | ${r.usage ? `${(share(r.usage)! * 100).toFixed(1)}%` : "–"} | ${(r.ms / 1000).toFixed(1)} s |`)),
    "",
    "Server commands:",
    ...commands.map((c) => `    ${c}`),
  ];
  return { markdown: lines.join("\n"), json: { recording: file, results }, goals, commands };
}
