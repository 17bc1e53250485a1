// The network cost of splitting a model over llama.cpp's RPC back end: the same model served locally
// and split between two network namespaces (rpc-server in one, serve --rpc in the other), measured in
// interleaved runs. `bun scripts/bench/rpc.ts [--model lfm2-350m-q4_0] [--runs 5]`; needs root.
// Writes docs/benchmarks/rpc-<date>.md.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureModel, isModelName } from "../gen-models.ts";
import { makeHostPair, whyNoNamespaces } from "../netns.ts";

const root = join(import.meta.dir, "..", "..");
const main = join(root, "src", "main.ts");
const client = join(root, "scripts", "netns-client.ts");
const bun = process.execPath;

const { values } = parseArgs({ options: { model: { type: "string" }, runs: { type: "string" }, threads: { type: "string" }, help: { type: "boolean", short: "h" } } });
if (values.help) {
  console.log("Usage: bun scripts/bench/rpc.ts [--model NAME] [--runs N] [--threads N]\n\nTokens/s of a model split over RPC between two network namespaces vs the same model served locally.");
  process.exit(0);
}
const modelName = values.model ?? "lfm2-350m-q4_0";
if (!isModelName(modelName)) throw new Error(`unknown model ${modelName}`);
const runs = Number(values.runs ?? 5);
const threads = values.threads ?? "2";
const why = whyNoNamespaces();
if (why) throw new Error(`Cannot run the RPC benchmark: ${why}`);

const model = await ensureModel(modelName, { log: (line) => console.error(line) });
const hosts = makeHostPair("llamux-rpcb");
const spawned = [
  hosts.spawnIn(hosts.a.ns, [bun, main, "rpc-server", "--host", hosts.a.address, "--port", "50052", "--threads", threads]),
];
try {
  await Bun.sleep(1500);
  spawned.push(hosts.spawnIn(hosts.b.ns, [bun, main, "serve", "--profile", "b", "--port", "8000", "--parallel", "1", "--threads", threads, "--rpc", `${hosts.a.address}:50052`, model]));
  spawned.push(hosts.spawnIn(hosts.b.ns, [bun, main, "serve", "--profile", "b", "--port", "8001", "--parallel", "1", "--threads", threads, model]));

  async function request(port: number, body: object): Promise<{ ms: number; reply: { usage: { prompt_tokens: number; completion_tokens: number } } }> {
    const started = performance.now();
    const run = hosts.spawnIn(hosts.b.ns, [bun, client, "json", `http://127.0.0.1:${port}/v1/completions`, JSON.stringify({ model, temperature: 0, ...body })]);
    await run.proc.exited;
    const ms = performance.now() - started;
    const last = run.output().trim().split("\n").at(-1)!;
    if (!last.startsWith("{")) throw new Error(`request failed: ${run.output()}`);
    const parsed = JSON.parse(last);
    if (parsed.status !== 200) throw new Error(`request failed: ${JSON.stringify(parsed)}`);
    return { ms, reply: parsed.body };
  }
  // the client process's own start-up is measured by a 1-token request and taken off
  const warm = async (port: number) => { for (let i = 0; i < 2; i++) await request(port, { prompt: "Hello", max_tokens: 1 }); };
  for (const port of [8000, 8001]) {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const probe = hosts.spawnIn(hosts.b.ns, [bun, client, "get", `http://127.0.0.1:${port}/v1/models`]);
      await probe.proc.exited;
      if (probe.output().includes("\"status\":200")) break;
      if (Date.now() > deadline) throw new Error(`server on ${port} did not start: ${spawned.map((s) => s.output()).join("\n")}`);
      await Bun.sleep(500);
    }
  }
  await warm(8000);
  await warm(8001);

  const prompt = "The quick brown fox jumps over the lazy dog. ".repeat(40);
  const results: Record<string, { pp: number[]; tg: number[] }> = { local: { pp: [], tg: [] }, split: { pp: [], tg: [] } };
  for (let run = 0; run < runs; run++) {
    for (const [name, port] of [["local", 8001], ["split", 8000]] as const) {
      const base = (await request(port, { prompt: "Hi", max_tokens: 1 })).ms;
      const pp = await request(port, { prompt, max_tokens: 1 });
      results[name]!.pp.push(pp.reply.usage.prompt_tokens / ((pp.ms - base) / 1000));
      const tg = await request(port, { prompt: "Hi", max_tokens: 129, ignore_eos: true });
      results[name]!.tg.push(128 / ((tg.ms - base) / 1000));
    }
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const row = (metric: "pp" | "tg", label: string) => {
    const local = median(results.local![metric]);
    const split = median(results.split![metric]);
    return `| ${label} | ${local.toFixed(1)} | ${split.toFixed(1)} | ${(split / local * 100).toFixed(0)}% |`;
  };
  const layers = spawned[1]!.output().match(/RPC: (\d+ of \d+ layers)/)?.[1] ?? "?";
  const date = new Date().toISOString().slice(0, 10);
  const report = [
    `# RPC split vs local (${date})`,
    "",
    `Model ${modelName}, ${threads} threads on each side, one sequence, greedy; ${runs} interleaved runs, medians.`,
    `Split: ${layers} on an rpc-server in another network namespace (veth pair, same machine), the rest local.`,
    "Both sides share this machine's cores, so the split cannot gain compute: the difference is the RPC round trips.",
    "",
    "| metric | local t/s | split t/s | split/local |",
    "|---|---:|---:|---:|",
    row("pp", `prompt (${results.local!.pp.length ? "~400" : "?"} tokens)`),
    row("tg", "decode (128 tokens)"),
    "",
  ].join("\n");
  console.log(report);
  const out = join(root, "docs", "benchmarks");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `rpc-${date}.md`), report);
} finally {
  for (const s of spawned) s.proc.kill("SIGTERM");
  await Promise.all(spawned.map((s) => s.proc.exited));
  hosts.remove();
}
