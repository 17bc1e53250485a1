// Struct layouts: llamux's own table must match what the compiled shim reports, and a mismatch must be
// refused with a message naming the struct or field.
import { expect, test } from "bun:test";
import { allLayouts, contextParamsLayout, verifyLayouts } from "../../ffi/layouts.ts";
import { loadNative } from "../../ffi/native.ts";

function reported(): Map<string, number> {
  const n = loadNative();
  const out = new Map<string, number>();
  for (let i = 0; i < n.shim.llamux_layout_count(); i++) out.set(String(n.shim.llamux_layout_name(i)), Number(n.shim.llamux_layout_value(i)));
  return out;
}

test("every field llamux reads or writes is reported by the shim and matches", () => {
  const report = reported();
  for (const layout of allLayouts) {
    expect(report.get(`sizeof ${layout.name}`)).toBe(layout.size);
    for (const [field, { offset }] of Object.entries(layout.fields)) expect(report.get(`${layout.name}.${field}`)).toBe(offset);
  }
  expect(() => verifyLayouts(report)).not.toThrow();
});

test("a moved field is refused, naming the field", () => {
  const report = reported();
  report.set("llama_context_params.n_threads", contextParamsLayout.fields.n_threads.offset + 4);
  expect(() => verifyLayouts(report)).toThrow("field llama_context_params.n_threads is at offset 32 in the library, llamux expects 28");
});

test("a resized struct is refused, naming the struct", () => {
  const report = reported();
  report.set("sizeof llama_batch", 64);
  expect(() => verifyLayouts(report)).toThrow("struct llama_batch is 64 bytes in the library, llamux expects 56");
});

test("a field the shim does not report is refused", () => {
  const report = reported();
  report.delete("llama_model_params.n_gpu_layers");
  expect(() => verifyLayouts(report)).toThrow("llama_model_params.n_gpu_layers is at offset unknown");
});
