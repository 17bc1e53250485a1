import { expect, test } from "bun:test";
import { ModelNameError, formatFullModelName, formatModelName, parseModelName, sameModelName } from "../../src/store/model-name.ts";

test("parseModelName fills in Ollama's defaults", () => {
  expect(parseModelName("llama3.2")).toEqual({ host: "registry.ollama.ai", namespace: "library", model: "llama3.2", tag: "latest" });
  expect(parseModelName("library/qwen3:8b")).toEqual({ host: "registry.ollama.ai", namespace: "library", model: "qwen3", tag: "8b" });
  expect(parseModelName("user/model")).toEqual({ host: "registry.ollama.ai", namespace: "user", model: "model", tag: "latest" });
  expect(parseModelName("localhost:5000/ns/m:v1.0")).toEqual({ host: "localhost:5000", namespace: "ns", model: "m", tag: "v1.0" });
});

test("parseModelName keeps the hub host and spells huggingface.co as hf.co", () => {
  const expected = { host: "hf.co", namespace: "bartowski", model: "Llama-3.2-1B-Instruct-GGUF", tag: "Q4_K_M" };
  expect(parseModelName("hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M")).toEqual(expected);
  expect(parseModelName("huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M")).toEqual(expected);
  expect(parseModelName("https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M")).toEqual(expected);
  expect(parseModelName("hf.co/org/repo:model-Q8_0.gguf").tag).toBe("model-Q8_0.gguf");
});

test("parseModelName rejects invalid names with the reason", () => {
  for (const bad of ["", "a/b/c/d", "model:", "../etc:passwd", "ns/.hidden", "white space", "model:-tag", ":tag", "a//b"]) {
    expect(() => parseModelName(bad)).toThrow(ModelNameError);
  }
  expect(() => parseModelName("a/b/c/d")).toThrow('Cannot parse model name "a/b/c/d": a name has at most three parts');
  expect(() => parseModelName("x".repeat(200))).toThrow("is not a valid model");
});

test("formatModelName gives the shortest form, as ollama list shows it", () => {
  expect(formatModelName(parseModelName("llama3.2"))).toBe("llama3.2:latest");
  expect(formatModelName(parseModelName("user/model:v2"))).toBe("user/model:v2");
  expect(formatModelName(parseModelName("huggingface.co/org/repo:Q4_K_M"))).toBe("hf.co/org/repo:Q4_K_M");
  expect(formatFullModelName(parseModelName("qwen3:8b"))).toBe("registry.ollama.ai/library/qwen3:8b");
  for (const name of ["llama3.2:latest", "user/model:v2", "hf.co/org/repo:Q4_K_M"]) expect(formatModelName(parseModelName(name))).toBe(name);
});

test("sameModelName ignores case", () => {
  expect(sameModelName(parseModelName("HF.co/Org/Repo:q4_k_m"), parseModelName("hf.co/org/repo:Q4_K_M"))).toBe(true);
  expect(sameModelName(parseModelName("Llama3.2"), parseModelName("llama3.2:latest"))).toBe(true);
  expect(sameModelName(parseModelName("llama3.2:1b"), parseModelName("llama3.2:3b"))).toBe(false);
});
