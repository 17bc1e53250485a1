// The bounds on Go template execution and Jinja chat-template rendering: each hostile template ends
// with the template's own error type, quickly, and ordinary templates render as before.
import { describe, expect, test } from "bun:test";
import { GoTemplate, TemplateExecutionError, TemplateLimitError, renderOllamaPrompt } from "../../src/chat/go-template/index.ts";
import { ChatTemplateError, CHATML_TEMPLATE, renderChatTemplate } from "../../src/chat/template.ts";

const quick = <T>(work: () => T, withinMs = 1500): T => {
  const started = performance.now();
  try {
    return work();
  } finally {
    expect(performance.now() - started).toBeLessThan(withinMs);
  }
};

describe("Go templates", () => {
  const input = { messages: [{ role: "user", content: "hi" }] };

  test("nested ranges end at the step bound", () => {
    expect(() => quick(() => renderOllamaPrompt("{{range 30000}}{{range 30000}}{{end}}{{end}}", input))).toThrow(TemplateLimitError);
  });

  test("a range over 1e12 counts lazily instead of allocating", () => {
    expect(() => quick(() => renderOllamaPrompt("{{range 1000000000000}}{{end}}", input))).toThrow(/more than 1000000 steps/);
  });

  test("output past the size bound, and time past the deadline, end the execution", () => {
    const template = GoTemplate.parse("{{range 100}}{{.}}{{end}}");
    expect(() => template.execute("x".repeat(10), undefined, { maxSteps: 1e9, maxOutputChars: 50, maxMilliseconds: 1000 })).toThrow(/output passed 50 characters/);
    const slow = GoTemplate.parse("{{range 100000000}}{{end}}");
    expect(() => quick(() => slow.execute({}, undefined, { maxSteps: 1e12, maxOutputChars: 1e9, maxMilliseconds: 50 }), 1000)).toThrow(/longer than 50 ms/);
  });

  test("printf refuses widths and precisions above a million as Go does; toFixed's range error is the template's", () => {
    expect(renderOllamaPrompt('{{printf "%0999999999d" 1}}', input)).toBe("%!(BADWIDTH)1");
    expect(renderOllamaPrompt('{{printf "%.9999999f" 1.5}}', input)).toBe("%!(BADPREC)1.500000");
    expect(() => renderOllamaPrompt('{{printf "%.200f" 1.5}}', input)).toThrow(TemplateExecutionError);
  });

  test("an ordinary template is unaffected", () => {
    expect(renderOllamaPrompt("{{range .Messages}}<{{.Role}}>{{.Content}}{{end}}", input)).toBe("<user>hi");
  });
});

describe("Jinja chat templates", () => {
  const messages = [{ role: "user" as const, content: "hi" }];
  const refused = (template: string, reason: RegExp) => {
    let error: unknown;
    quick(() => {
      try {
        renderChatTemplate(template, messages);
      } catch (caught) {
        error = caught;
      }
    });
    expect(error).toBeInstanceOf(ChatTemplateError);
    expect((error as Error).message).toMatch(reason);
  };

  test("range() past its bound is refused before it allocates", () => refused("{% for i in range(30000000) %}{% endfor %}", /range\(\) of 30000000 numbers/));
  test("nested loops end at the step bound or the deadline", () => {
    refused("{% for i in range(3000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}", /more than 2000000 expressions|longer than 1000 ms/);
  });
  test("a string doubled in a loop ends at the size bound", () => {
    refused("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}", /string longer than 16777216/);
  });
  test("indent and tojson widths are capped", () => {
    refused("{{ 'a\nb'|indent(1000000000) }}", /indent width 1000000000 is above 1000/);
    refused("{{ messages|tojson(indent=100000000) }}", /tojson indent 100000000 is above 1000/);
    refused("{% filter indent(width=100000000) %}a\nb{% endfilter %}", /indent width 100000000/);
  });
  test("recursive macros end at the nesting bound", () => refused("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", /nested evaluations more than 500 deep/));

  test("ordinary templates render as before: globals, loops, filters", () => {
    expect(renderChatTemplate(CHATML_TEMPLATE, messages)).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    const globals = "{{ range(2, 8, 2)|join(',') }} {{ range(3)|length }} {{ 'a\nb'|indent(2) }} {{ messages|tojson(indent=1) }} {{ true and not none }}";
    expect(renderChatTemplate(globals, messages)).toBe('2,4,6 3 a\n  b [\n {\n  "role": "user",\n  "content": "hi"\n }\n] true');
    expect(renderChatTemplate("{{ strftime_now('%Y') }}", messages)).toBe(String(new Date().getFullYear()));
    expect(() => renderChatTemplate("{{ raise_exception('no system role') }}", messages)).toThrow(/no system role/);
  });
});
