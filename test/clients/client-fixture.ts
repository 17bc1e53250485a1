// What the client-library tests share: one `llamux serve` per profile, serving the tiny ChatML model with
// its tiny vision projector (text, tools, structured output and images from one model), the schemas
// the tests ask for, and a real JPEG.
//
// Random weights never call a tool or write JSON on their own, so every tool call is forced
// (tool_choice required or named) and every object comes from a JSON-schema grammar; strings and
// numbers are bounded so that a grammar-constrained reply ends well within its token budget.
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, waitUntilReady, type RunningServer } from "../server/serve-fixture.ts";

export type ProfileName = "a" | "b" | "c";

/** The name the model is served under on every profile. */
export const MODEL = "tiny-vision";
/** Tokens the tiny projector makes of one image (56×56 pixels in 14×14 patches). */
export const IMAGE_TOKENS = 16;

export const jpeg = new Uint8Array(readFileSync(join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg")));
export const jpegDataUri = `data:image/jpeg;base64,${Buffer.from(jpeg).toString("base64")}`;

/** A server of one profile, and the store directory it was given (removed when it stops). */
export interface ClientServer extends RunningServer {
  profile: ProfileName;
}

/**
 * `llamux serve` for one profile: the tiny llama model with its projector lying next to it (profile a
 * finds it as Ollama users lay out files), or given by --mmproj (profiles b and c). Resolves when the
 * server is ready (profile b: its model has loaded).
 */
export async function startClientServer(profile: ProfileName): Promise<ClientServer> {
  const dir = mkdtempSync(join(tmpdir(), `llamux-clients-${profile}-`));
  const modelPath = join(dir, "tiny-vision.gguf");
  symlinkSync(await ensureModel("tiny-llama"), modelPath);
  const projector = await ensureModel("tiny-mmproj");
  const projectorArgs = profile === "a" ? [] : ["--mmproj", projector];
  if (profile === "a") symlinkSync(projector, join(dir, "mmproj-tiny-vision.gguf"));
  const server = await startServer(
    [modelPath, ...projectorArgs, "--profile", profile, "--served-model-name", MODEL, "--ctx-size", "2048", "--parallel", "2"],
    { LLAMUX_MODELS: join(dir, "store"), OLLAMA_MODELS: "" },
  );
  if (profile === "b") await waitUntilReady(server);
  return {
    ...server,
    profile,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- tools -------------------------------------------------------------------------------------------

export const weatherInput = z.object({
  city: z.enum(["Paris", "Oslo"]).describe("The city"),
  days: z.number().int().min(1).max(7).describe("How many days ahead"),
});
export const searchInput = z.object({ query: z.string().max(6).describe("Search terms") });

/** The two tools as OpenAI function definitions (JSON schemas from zod, as clients send them). */
export const openAiTools = [
  { type: "function" as const, function: { name: "get_weather", description: "Weather forecast for a city", parameters: z.toJSONSchema(weatherInput) } },
  { type: "function" as const, function: { name: "search", description: "Search the web", parameters: z.toJSONSchema(searchInput) } },
];

/** Checks a call's name and arguments against the tool it names. */
export function parseToolCall(name: string, args: unknown): z.infer<typeof weatherInput> | z.infer<typeof searchInput> {
  if (name === "get_weather") return weatherInput.parse(args);
  if (name === "search") return searchInput.parse(args);
  throw new Error(`call to an undeclared tool ${JSON.stringify(name)}`);
}

// --- structured output -------------------------------------------------------------------------------

/** A schema every grammar feature today covers: enum, bounded integer, boolean, bounded array of bounded strings. */
export const forecastSchema = z.object({
  city: z.enum(["Paris", "Oslo", "Lima"]),
  days: z.number().int().min(1).max(7),
  metric: z.boolean(),
  tags: z.array(z.string().max(5)).max(2),
});

/** An integer `.positive()`: exclusiveMinimum on an integer, which the grammar already bounds. */
export const positiveSchema = z.object({ count: z.number().int().positive().max(9), label: z.string().max(4) });

/**
 * What zod users write and grammars must learn: a number `.positive()` (exclusiveMinimum on a number)
 * and `z.record` (propertyNames), bounded by maxProperties. openai's zodResponseFormat refuses
 * z.record itself in strict mode, so the openai test uses positiveSchema and a number .positive().
 */
export const recordSchema = z.object({
  weight: z.number().positive().max(9),
  scores: z.record(z.string().max(3), z.number().int().min(0).max(9)).meta({ maxProperties: 2 }),
});

/** A number `.positive()` alone, for openai's strict zod helper. */
export const positiveNumberSchema = z.object({ weight: z.number().positive().max(9) });

/** The messages of a chat: one user question. */
export const question = "What is the weather in Paris?";
