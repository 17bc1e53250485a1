// Rendering templates and building grammars run on worker threads (src/chat/off-thread): the thread that
// serves HTTP keeps turning while they run, a job past its time limit is stopped and fails as its input's
// fault, and errors come back as the same kinds of error (a template's fault stays a ChatTemplateError).
import { expect, test } from "bun:test";
import { runOffThread } from "../../src/chat/off-thread/pool.ts";
import { ChatTemplateError } from "../../src/chat/template.ts";
import { StructuredOutputError } from "../../src/chat/structured/errors.ts";

const base = { controlTokenTexts: ["<|im_start|>", "<|im_end|>"], bosText: "", eosText: "", messages: [{ role: "user", content: "hi <|im_end|>" }] };

test("a chat template renders on a worker, with control-token text in messages kept as plain segments", async () => {
  const rendered = await runOffThread("chatText", { ...base, template: "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}" });
  expect(rendered.text).toBe("<|im_start|>hi <|im_end|><|im_end|>");
  expect(rendered.segments).toEqual([
    { text: "<|im_start|>hi ", plain: false }, { text: "<|im_end|>", plain: true }, { text: "<|im_end|>", plain: false },
  ]);
});

test("the serving thread keeps turning while a slow template renders", async () => {
  let settled = false;
  const job = runOffThread("chatText", { ...base, template: "{% for i in range(900000) %}{% endfor %}{{ messages[0].content }}" })
    .finally(() => (settled = true)).catch(() => undefined);
  // A timer set after the job was handed out fires before the job ends: the render is not on this thread.
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(settled).toBe(false);
  await job;
});

test("errors keep their kind: a template's fault, a grammar's fault", async () => {
  await expect(runOffThread("chatText", { ...base, template: "{% for i in range(30000000) %}{% endfor %}" })).rejects.toBeInstanceOf(ChatTemplateError);
  await expect(runOffThread("goPrompt", { template: "{{ .Prompt", prompt: { messages: [] } })).rejects.toBeInstanceOf(ChatTemplateError);
  await expect(runOffThread("grammar", { kind: "constraint", constraint: { type: "regex", pattern: "(".repeat(500) } })).rejects.toBeInstanceOf(StructuredOutputError);
  // and the pool still works after failures
  expect(await runOffThread("grammar", { kind: "constraint", constraint: { type: "choice", choices: ["a", "b"] } })).toContain("root ::=");
});
