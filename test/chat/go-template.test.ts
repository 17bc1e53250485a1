// The Go template engine. testdata/go-template-cases.json holds templates, data and what Go's own
// text/template (Go 1.19, Option("missingkey=zero"), a json function) printed for them, or whether it
// failed; our engine must print the same.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  GoTemplate,
  TemplateExecutionError,
  TemplateSyntaxError,
  goStruct,
  withMethods,
} from "../../src/chat/go-template/index.ts";

interface Case {
  template: string;
  data: unknown;
  output?: string;
  error?: true;
}
const cases = JSON.parse(readFileSync(join(import.meta.dir, "testdata", "go-template-cases.json"), "utf8")) as Case[];

const run = (template: string, data: unknown = {}) => GoTemplate.parse(template).execute(data);

describe("GoTemplate agrees with Go's text/template", () => {
  cases.forEach((c, i) => {
    test(`#${i} ${JSON.stringify(c.template).slice(0, 70)}`, () => {
      if (c.error) expect(() => run(c.template, c.data)).toThrow(/^Cannot (parse|execute) template at line \d+, column \d+/);
      else expect(run(c.template, c.data)).toBe(c.output!);
    });
  });
});

describe("GoTemplate", () => {
  test("syntax errors are SyntaxErrors with line and column", () => {
    try {
      GoTemplate.parse("line one\n  {{ if .X }}\n{{ else }}{{ else }}{{ end }}");
      throw new Error("expected a syntax error");
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateSyntaxError);
      expect(error).toBeInstanceOf(SyntaxError);
      expect((error as TemplateSyntaxError).line).toBe(3);
      expect((error as TemplateSyntaxError).column).toBe(11);
    }
  });

  test("execution errors name the action that failed", () => {
    const attempt = () => run("ok\n{{ .A }} {{ index .L 3 }}", { A: 1, L: [] });
    expect(attempt).toThrow(TemplateExecutionError);
    expect(attempt).toThrow("Cannot execute template at line 2, column 13 (at <index .L 3>): error calling index: index out of range: 3");
  });

  test("struct fields are exact, map keys may be missing", () => {
    const message = goStruct("api.Message", { Role: "user", Content: "hi" });
    expect(run("{{ .M.Role }}:{{ .M.Content }}", { M: message })).toBe("user:hi");
    expect(() => run("{{ .M.Name }}", { M: message })).toThrow("can't evaluate field Name in type api.Message");
    expect(run("{{ .Name }}", {})).toBe("<no value>");
  });

  test("String methods decide how a value prints and can be called as methods", () => {
    const args = withMethods({ city: "Paris" }, { string: () => '{"city":"Paris"}' });
    expect(run("{{ .A }} {{ .A.city }} {{ .A.String }} {{ range $k, $v := .A }}{{ $k }}={{ $v }}{{ end }}", { A: args })).toBe(
      '{"city":"Paris"} Paris {"city":"Paris"} city=Paris',
    );
  });

  test("methods take arguments", () => {
    const greeter = goStruct("Greeter", { Greet: (name: string, punctuation: string) => `hello ${name}${punctuation}` });
    expect(run('{{ .G.Greet "bob" "!" }}|{{ "ann" | .G.Greet "x" }}', { G: greeter })).toBe("hello bob!|hello xann");
    expect(() => run('{{ .A "x" }}', { A: "field" })).toThrow("A has arguments but cannot be invoked as a function");
  });

  test("json writes Go's encoding/json form, escaping HTML characters", () => {
    const tool = goStruct("api.Tool", { Type: "function" }, { json: () => ({ type: "function", note: "<&>" }) });
    expect(run("{{ json .T }} {{ json .S }} {{ json .N }}", { T: tool, S: "a\u2028b", N: null })).toBe(
      '{"type":"function","note":"\\u003c\\u0026\\u003e"} "a\\u2028b" null',
    );
  });

  test("range over an integer, else with, and variables scoped to their block", () => {
    expect(run("{{ range $i := 3 }}{{ $i }}{{ end }}")).toBe("012");
    expect(run("{{ with .A }}a{{ else with .B }}b{{ . }}{{ else }}none{{ end }}", { B: 7 })).toBe("b7");
    expect(() => GoTemplate.parse("{{ if 1 }}{{ $x := 1 }}{{ end }}{{ $x }}")).toThrow('undefined variable "$x"');
  });

  test("Ollama's date functions and toTypeScriptType", () => {
    expect(run("{{ currentDate }}")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(run("{{ yesterdayDate }}")).not.toBe(run("{{ currentDate }}"));
    const property = goStruct("api.ToolProperty", { Type: ["string", "null"], Enum: [] });
    const enumProperty = goStruct("api.ToolProperty", { Type: ["string"], Enum: ["a", "b"] });
    expect(run("{{ toTypeScriptType .P }} / {{ toTypeScriptType .E }}", { P: property, E: enumProperty })).toBe('string | null / "a" | "b"');
  });

  test("numbers print as Go prints ints and float64s", () => {
    expect(run("{{ .A }} {{ .B }} {{ .C }} {{ .D }}", { A: 42, B: 0.1, C: 1234567.5, D: 0.00001 })).toBe("42 0.1 1.2345675e+06 1e-05");
  });

  test("the output is split into template text and values read from the data", () => {
    const parts = GoTemplate.parse('<a>{{ .X }}<b>{{ "lit" }}{{ range .L }}{{ . }}{{ end }}{{ printf "%s" .X }}').executeParts({ X: "x", L: ["y"] });
    expect(parts).toEqual([
      { text: "<a>", fromData: false },
      { text: "x", fromData: true },
      { text: "<b>lit", fromData: false },
      { text: "y", fromData: true },
      { text: "x", fromData: false },
    ]);
  });

  test("identifiers lists the fields and variables a template mentions", () => {
    expect(GoTemplate.parse("{{ if .System }}{{ $.Prompt }}{{ end }}{{ range .Messages }}{{ .Role }}{{ end }}").identifiers()).toEqual([
      "$", "messages", "prompt", "role", "system",
    ]);
  });
});
