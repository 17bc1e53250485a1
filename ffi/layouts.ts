// Struct layouts the TypeScript side reads and writes, as llamux expects them (x86-64 / arm64 LP64).
// verifyLayouts() compares every size and offset here with what the compiled shim reports for the
// loaded headers, so a llama.cpp whose structs moved is refused at start-up instead of corrupting memory.
import { ptr as pointerOf, read, type Pointer } from "bun:ffi";

type FieldType = "i8" | "bool" | "i32" | "u32" | "u64" | "f32" | "f64" | "ptr";
interface Field { offset: number; type: FieldType }
export interface StructLayout<F extends string = string> { name: string; size: number; fields: Record<F, Field> }

function layout<F extends string>(name: string, size: number, fields: Record<F, [number, FieldType]>): StructLayout<F> {
  const out = {} as Record<F, Field>;
  for (const key in fields) out[key] = { offset: fields[key][0], type: fields[key][1] };
  return { name, size, fields: out };
}

export const modelParamsLayout = layout("llama_model_params", 80, {
  n_gpu_layers: [16, "i32"], split_mode: [20, "i32"], load_mode: [24, "i32"], main_gpu: [32, "i32"],
  progress_callback: [48, "ptr"], vocab_only: [72, "bool"], check_tensors: [73, "bool"], use_extra_bufts: [74, "bool"],
});

export const contextParamsLayout = layout("llama_context_params", 160, {
  n_ctx: [0, "u32"], n_batch: [4, "u32"], n_ubatch: [8, "u32"], n_seq_max: [12, "u32"], n_rs_seq: [16, "u32"],
  n_threads: [28, "i32"], n_threads_batch: [32, "i32"], pooling_type: [44, "i32"], attention_type: [48, "i32"],
  flash_attn_type: [52, "i32"], type_k: [104, "i32"], type_v: [108, "i32"], embeddings: [128, "bool"],
  offload_kqv: [129, "bool"], no_perf: [130, "bool"], swa_full: [132, "bool"], kv_unified: [133, "bool"],
});

export const batchLayout = layout("llama_batch", 56, {
  n_tokens: [0, "i32"], token: [8, "ptr"], embd: [16, "ptr"], pos: [24, "ptr"], n_seq_id: [32, "ptr"],
  seq_id: [40, "ptr"], logits: [48, "ptr"],
});

export const quantizeParamsLayout = layout("llama_model_quantize_params", 64, {
  nthread: [0, "i32"], ftype: [4, "i32"], allow_requantize: [16, "bool"], quantize_output_tensor: [17, "bool"], pure: [19, "bool"],
});

export const perfContextLayout = layout("llama_perf_context_data", 48, {
  t_start_ms: [0, "f64"], t_load_ms: [8, "f64"], t_p_eval_ms: [16, "f64"], t_eval_ms: [24, "f64"],
  n_p_eval: [32, "i32"], n_eval: [36, "i32"], n_reused: [40, "i32"],
});

export const logitBiasLayout = layout("llama_logit_bias", 8, { bias: [4, "f32"] });

export const allLayouts: StructLayout[] = [
  modelParamsLayout, contextParamsLayout, batchLayout, quantizeParamsLayout, perfContextLayout, logitBiasLayout,
];

// libmtmd's structs, reported by its own shim (libllamux-mtmd.so) and checked when a projector loads.
export const mtmdContextParamsLayout = layout("mtmd_context_params", 96, {
  use_gpu: [0, "bool"], print_timings: [16, "bool"], n_threads: [20, "i32"], media_marker: [32, "ptr"],
  flash_attn_type: [40, "i32"], warmup: [44, "bool"], batch_max_tokens: [72, "i32"],
});

export const mtmdInputTextLayout = layout("mtmd_input_text", 24, {
  text: [0, "ptr"], text_len: [8, "u64"], add_special: [16, "bool"], parse_special: [17, "bool"],
});

export const mtmdLayouts: StructLayout[] = [mtmdContextParamsLayout, mtmdInputTextLayout];

/** Throws naming the first struct or field whose size or offset differs from the compiled library's. */
export function verifyLayouts(reported: Map<string, number>, layouts: StructLayout[] = allLayouts): void {
  for (const l of layouts) {
    const size = reported.get(`sizeof ${l.name}`);
    if (size !== l.size) {
      throw new Error(`Cannot use llama.cpp: struct ${l.name} is ${size ?? "unknown"} bytes in the library, llamux expects ${l.size}`);
    }
    for (const [field, { offset }] of Object.entries<Field>(l.fields)) {
      const actual = reported.get(`${l.name}.${field}`);
      if (actual !== offset) {
        throw new Error(`Cannot use llama.cpp: field ${l.name}.${field} is at offset ${actual ?? "unknown"} in the library, llamux expects ${offset}`);
      }
    }
  }
}

/** A typed view over one native struct held in a JS-owned buffer. */
export class StructBuffer<F extends string> {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  constructor(readonly layout: StructLayout<F>) {
    this.bytes = new Uint8Array(layout.size);
    this.view = new DataView(this.bytes.buffer);
  }
  get pointer(): Pointer { return pointerOf(this.bytes); }
  set(field: F, value: number | boolean | bigint): void {
    const { offset, type } = this.layout.fields[field];
    switch (type) {
      case "i8": this.view.setInt8(offset, Number(value)); break;
      case "bool": this.view.setUint8(offset, value ? 1 : 0); break;
      case "i32": this.view.setInt32(offset, Number(value), true); break;
      case "u32": this.view.setUint32(offset, Number(value), true); break;
      case "u64": this.view.setBigUint64(offset, BigInt(value), true); break;
      case "f32": this.view.setFloat32(offset, Number(value), true); break;
      case "f64": this.view.setFloat64(offset, Number(value), true); break;
      case "ptr": this.view.setBigUint64(offset, BigInt(value), true); break;
    }
  }
  get(field: F): number {
    const { offset, type } = this.layout.fields[field];
    switch (type) {
      case "i8": return this.view.getInt8(offset);
      case "bool": return this.view.getUint8(offset);
      case "i32": return this.view.getInt32(offset, true);
      case "u32": return this.view.getUint32(offset, true);
      case "u64": return Number(this.view.getBigUint64(offset, true));
      case "f32": return this.view.getFloat32(offset, true);
      case "f64": return this.view.getFloat64(offset, true);
      case "ptr": return Number(read.u64(this.pointer, offset));
    }
  }
}
