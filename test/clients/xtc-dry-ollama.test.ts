// The XTC and DRY samplers end to end on profile a (Ollama), through the clients its users run: the
// `ollama` client's options, a Modelfile's PARAMETER lines (`llamux create -f`), the `openai` client on
// /v1 with the fields as extra body, and `@anthropic-ai/sdk` on /v1/messages. Each surface's fields must
// change the reply (sampler-fixture.ts says how), and a bad value must be a 400 naming the field in the
// API's own error shape. One server for the file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama, type Options } from "ollama";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { llamux } from "../cli/cli-fixture.ts";
import { type ClientServer, MODEL, startClientServer } from "./client-fixture.ts";
import {
  BAD_VALUES, DRY, LOOPING, REPLY_TOKENS, SEEDED, type Settings, XTC, expectDryBrokeTheLoop, expectDryTakesEffect, expectXtcChangedTheReply,
  expectXtcTakesEffect,
} from "./sampler-fixture.ts";

let server: ClientServer;
let ollama: Ollama;
let modelfileDir: string;

beforeAll(async () => {
  server = await startClientServer("a");
  ollama = new Ollama({ host: server.baseUrl });
  modelfileDir = mkdtempSync(join(tmpdir(), "llamux-xtc-dry-modelfile-"));
  symlinkSync(await ensureModel("tiny-llama"), join(modelfileDir, "tiny.gguf"));
}, 180_000);

afterAll(async () => {
  await server?.stop();
  rmSync(modelfileDir, { recursive: true, force: true });
});

const prompt = "Tell me a story";
/** The (slow) model loads and Modelfile uploads of a busy 2-core machine. */
const SLOW = 300_000;

/** Ollama options of these settings (the names are Ollama's too) and the reply's limit. */
const ollamaOptions = (settings: Settings) => ({ num_predict: REPLY_TOKENS, ...settings }) as unknown as Partial<Options>;

const ollamaReply = (model: string) => async (settings: Settings) =>
  (await ollama.chat({ model, messages: [{ role: "user", content: prompt }], options: ollamaOptions(settings) })).message.content;

describe("the ollama client's options", () => {
  test("xtc_probability and xtc_threshold change a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(ollamaReply(MODEL));
  });

  test("dry_multiplier, dry_base, dry_allowed_length and dry_penalty_last_n break a greedy loop", async () => {
    await expectDryTakesEffect(ollamaReply(MODEL));
  });

  test("dry_sequence_breakers reach the engine: a breaker matching everything lets the loop through", async () => {
    // With every character of the loop a breaker, every token ends a repeat: DRY has nothing to penalise.
    const plain = await ollamaReply(MODEL)(LOOPING);
    const everyCharacterBreaks = [...new Set(plain)];
    if (everyCharacterBreaks.length > 32) throw new Error(`the plain reply has ${everyCharacterBreaks.length} distinct characters, more than the 32 breakers allowed`);
    const withBreakers = await ollamaReply(MODEL)({ ...LOOPING, ...DRY, dry_sequence_breakers: everyCharacterBreaks });
    expect(withBreakers).toBe(plain);
    expect(await ollamaReply(MODEL)({ ...LOOPING, ...DRY })).not.toBe(plain);
  });

  test("a bad value is a 400 in Ollama's shape naming the option", async () => {
    for (const { field, value } of BAD_VALUES) {
      const error = await ollama.chat({ model: MODEL, messages: [{ role: "user", content: prompt }], options: ollamaOptions({ [field]: value }) }).then(
        () => undefined,
        (e: unknown) => e as { status_code?: number; error?: string },
      );
      expect(error?.status_code).toBe(400);
      expect(error?.error).toContain(`"${field}"`);
    }
  });
});

describe("a Modelfile's PARAMETER lines", () => {
  /** `llamux create NAME -f Modelfile` against the server, as users create models. */
  async function create(name: string, parameters: string[]): Promise<void> {
    const file = join(modelfileDir, `Modelfile.${name}`);
    writeFileSync(file, ["FROM ./tiny.gguf", ...parameters.map((line) => `PARAMETER ${line}`)].join("\n"));
    const created = await llamux(["create", name, "-f", file], { LLAMUX_HOST: `127.0.0.1:${server.port}` });
    if (created.exitCode !== 0) throw new Error(`llamux create ${name} failed: ${created.stderr}`);
  }

  beforeAll(async () => {
    await create("tiny-plain", []);
  }, SLOW);

  test("XTC set by the model gives the reply XTC set by the request gives", async () => {
    await create("tiny-xtc", ["xtc_probability 1", "xtc_threshold 0"]);
    const plain = await ollamaReply("tiny-plain")(SEEDED);
    const byModel = await ollamaReply("tiny-xtc")(SEEDED);
    expectXtcChangedTheReply(plain, byModel, await ollamaReply("tiny-xtc")(SEEDED));
    expect(await ollamaReply("tiny-plain")({ ...SEEDED, ...XTC })).toBe(byModel);
  }, SLOW);

  test("DRY set by the model breaks the loop as DRY set by the request does", async () => {
    await create("tiny-dry", [
      "temperature 0", "repeat_penalty 0.5", "dry_multiplier 3", "dry_base 1.75", "dry_allowed_length 1", "dry_penalty_last_n -1",
      'dry_sequence_breakers "\\n"', 'dry_sequence_breakers ":"',
    ]);
    const plain = await ollamaReply("tiny-plain")(LOOPING);
    const byModel = await ollamaReply("tiny-dry")({});
    expectDryBrokeTheLoop(plain, byModel);
    expect(await ollamaReply("tiny-plain")({ ...LOOPING, ...DRY, dry_sequence_breakers: ["\n", ":"] })).toBe(byModel);
  }, SLOW);

  test("a bad value is refused by llamux create (naming the line and parameter) and by /api/create (a 400 naming it)", async () => {
    const file = join(modelfileDir, "Modelfile.bad");
    writeFileSync(file, "FROM ./tiny.gguf\nPARAMETER dry_base 0.5\n");
    const refused = await llamux(["create", "tiny-bad", "-f", file], { LLAMUX_HOST: `127.0.0.1:${server.port}` });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('line 2: invalid value "0.5" for parameter "dry_base"');
    for (const { field, value } of BAD_VALUES) {
      const error = await ollama.create({ model: "tiny-bad", from: "tiny-plain", parameters: { [field]: value } as Record<string, unknown> }).then(
        () => undefined,
        (e: unknown) => e as { status_code?: number; error?: string },
      );
      expect(error?.status_code).toBe(400);
      expect(error?.error).toContain(field);
    }
    expect((await ollama.list()).models.map((m) => m.name)).not.toContain("tiny-bad:latest");
  });
});

describe("the openai client on /v1 (extra body)", () => {
  const client = () => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  const reply = async (settings: Settings) =>
    (await client().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: prompt }], max_tokens: REPLY_TOKENS, ...settings })).choices[0]!.message.content!;

  test("chat.completions.create: XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("chat.completions.create: DRY breaks a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a 400 in the shape of Ollama's OpenAI layer (no param), its message naming the field", async () => {
    for (const { field, value } of BAD_VALUES) {
      const error = await reply({ [field]: value }).then(() => undefined, (e: unknown) => e);
      if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError for ${field}, got ${String(error)}`);
      expect(error.status).toBe(400);
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBeNull();
      expect(error.message).toContain(`"${field}"`);
    }
  });
});

describe("@anthropic-ai/sdk on /v1/messages (extra fields)", () => {
  const client = () => new Anthropic({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
  const reply = async (settings: Settings) => {
    // The SDK's types no longer list sampling fields; it sends what it is given.
    const message = await client().messages.create({ model: MODEL, max_tokens: REPLY_TOKENS, messages: [{ role: "user", content: prompt }], ...(settings as object) });
    return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  };

  test("messages.create: XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("messages.create: DRY breaks a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a 400 invalid_request_error naming the field", async () => {
    for (const { field, value } of BAD_VALUES) {
      const error = await reply({ [field]: value }).then(() => undefined, (e: unknown) => e);
      if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an APIError for ${field}, got ${String(error)}`);
      expect(error.status).toBe(400);
      const body = error.error as { type?: string; error?: { type?: string; message?: string } };
      expect(body.type).toBe("error");
      expect(body.error?.type).toBe("invalid_request_error");
      expect(body.error?.message).toContain(field);
    }
  });
});
