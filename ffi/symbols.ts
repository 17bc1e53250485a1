// The whole native surface llamux uses, as bun:ffi symbol tables. This is the only file that calls
// dlopen; everything else goes through the typed wrappers in ffi/*.ts.
import { dlopen } from "bun:ffi";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const ptr = "ptr", i32 = "i32", u32 = "u32", u64 = "u64", f32 = "f32", bool = "bool", none = "void", cstring = "cstring", usize = "usize";

const ggmlSymbols = {
  // in libggml-base, found through libggml's dependencies: what the loaded libraries were built from
  ggml_version: { args: [], returns: cstring },
  ggml_commit: { args: [], returns: cstring },
  ggml_backend_load_all_from_path: { args: [ptr], returns: none },
  ggml_backend_dev_count: { args: [], returns: usize },
  ggml_backend_dev_get: { args: [usize], returns: ptr },
  ggml_backend_dev_name: { args: [ptr], returns: cstring },
  ggml_backend_dev_description: { args: [ptr], returns: cstring },
  ggml_backend_dev_type: { args: [ptr], returns: i32 },
  ggml_backend_dev_memory: { args: [ptr, ptr, ptr], returns: none },
  ggml_backend_dev_backend_reg: { args: [ptr], returns: ptr },
  ggml_backend_reg_name: { args: [ptr], returns: cstring },
  ggml_backend_reg_by_name: { args: [ptr], returns: ptr },
  ggml_backend_reg_get_proc_address: { args: [ptr, ptr], returns: ptr },
  ggml_backend_register: { args: [ptr], returns: none },
} as const;

const llamaSymbols = {
  llama_backend_init: { args: [], returns: none },
  llama_log_set: { args: [ptr, ptr], returns: none },
  llama_print_system_info: { args: [], returns: cstring },
  llama_supports_gpu_offload: { args: [], returns: bool },
  llama_supports_mmap: { args: [], returns: bool },

  // model
  llama_model_free: { args: [ptr], returns: none },
  llama_model_get_vocab: { args: [ptr], returns: ptr },
  llama_model_n_ctx_train: { args: [ptr], returns: i32 },
  llama_model_n_embd: { args: [ptr], returns: i32 },
  llama_model_n_embd_inp: { args: [ptr], returns: i32 },
  llama_model_n_layer: { args: [ptr], returns: i32 },
  llama_model_n_head: { args: [ptr], returns: i32 },
  llama_model_n_head_kv: { args: [ptr], returns: i32 },
  llama_model_n_params: { args: [ptr], returns: u64 },
  llama_model_size: { args: [ptr], returns: u64 },
  llama_model_desc: { args: [ptr, ptr, usize], returns: i32 },
  llama_model_meta_val_str: { args: [ptr, ptr, ptr, usize], returns: i32 },
  llama_model_meta_count: { args: [ptr], returns: i32 },
  llama_model_meta_key_by_index: { args: [ptr, i32, ptr, usize], returns: i32 },
  llama_model_meta_val_str_by_index: { args: [ptr, i32, ptr, usize], returns: i32 },
  llama_model_chat_template: { args: [ptr, ptr], returns: ptr },
  llama_model_has_encoder: { args: [ptr], returns: bool },
  llama_model_has_decoder: { args: [ptr], returns: bool },
  llama_model_is_recurrent: { args: [ptr], returns: bool },
  llama_model_is_hybrid: { args: [ptr], returns: bool },
  llama_model_quantize: { args: [ptr, ptr, ptr], returns: u32 },

  // LoRA adapters (owned by their model; applied per context)
  llama_adapter_lora_init: { args: [ptr, ptr], returns: ptr },
  llama_adapter_lora_free: { args: [ptr], returns: none },
  llama_set_adapters_lora: { args: [ptr, ptr, usize, ptr], returns: i32 },

  // context
  llama_free: { args: [ptr], returns: none },
  llama_n_ctx: { args: [ptr], returns: u32 },
  llama_n_ctx_seq: { args: [ptr], returns: u32 },
  llama_n_batch: { args: [ptr], returns: u32 },
  llama_set_n_threads: { args: [ptr, i32, i32], returns: none },
  llama_attach_threadpool: { args: [ptr, ptr, ptr], returns: none },
  llama_n_ubatch: { args: [ptr], returns: u32 },
  llama_n_seq_max: { args: [ptr], returns: u32 },
  llama_pooling_type: { args: [ptr], returns: i32 },
  llama_model_n_cls_out: { args: [ptr], returns: u32 },
  llama_get_memory: { args: [ptr], returns: ptr },
  llama_get_logits_ith: { args: [ptr, i32], returns: ptr },
  llama_get_embeddings_ith: { args: [ptr, i32], returns: ptr },
  llama_get_embeddings_seq: { args: [ptr, i32], returns: ptr },
  llama_perf_context_reset: { args: [ptr], returns: none },

  // memory (KV cache / recurrent state) per sequence
  llama_memory_clear: { args: [ptr, bool], returns: none },
  llama_memory_seq_rm: { args: [ptr, i32, i32, i32], returns: bool },
  llama_memory_seq_cp: { args: [ptr, i32, i32, i32, i32], returns: none },
  llama_memory_seq_keep: { args: [ptr, i32], returns: none },
  llama_memory_seq_pos_min: { args: [ptr, i32], returns: i32 },
  llama_memory_seq_pos_max: { args: [ptr, i32], returns: i32 },
  llama_memory_can_shift: { args: [ptr], returns: bool },
  llama_state_seq_get_size: { args: [ptr, i32], returns: usize },
  llama_state_seq_get_data: { args: [ptr, ptr, usize, i32], returns: usize },
  llama_state_seq_set_data: { args: [ptr, ptr, usize, i32], returns: usize },
  llama_state_seq_get_size_ext: { args: [ptr, i32, u32], returns: usize },
  llama_state_seq_get_data_ext: { args: [ptr, ptr, usize, i32, u32], returns: usize },
  llama_state_seq_set_data_ext: { args: [ptr, ptr, usize, i32, u32], returns: usize },
  llama_n_rs_seq: { args: [ptr], returns: u32 },

  // vocab
  llama_vocab_n_tokens: { args: [ptr], returns: i32 },
  llama_vocab_type: { args: [ptr], returns: i32 },
  llama_vocab_bos: { args: [ptr], returns: i32 },
  llama_vocab_eos: { args: [ptr], returns: i32 },
  llama_vocab_eot: { args: [ptr], returns: i32 },
  llama_vocab_sep: { args: [ptr], returns: i32 },
  llama_vocab_nl: { args: [ptr], returns: i32 },
  llama_vocab_is_eog: { args: [ptr, i32], returns: bool },
  llama_vocab_get_suppress_tokens: { args: [ptr, ptr], returns: ptr },
  llama_vocab_is_control: { args: [ptr, i32], returns: bool },
  llama_vocab_get_add_bos: { args: [ptr], returns: bool },
  llama_vocab_get_add_eos: { args: [ptr], returns: bool },
  llama_vocab_get_text: { args: [ptr, i32], returns: cstring },
  llama_vocab_get_add_sep: { args: [ptr], returns: bool },
  llama_tokenize: { args: [ptr, ptr, i32, ptr, i32, bool, bool], returns: i32 },
  llama_token_to_piece: { args: [ptr, i32, ptr, i32, i32, bool], returns: i32 },
  llama_detokenize: { args: [ptr, ptr, i32, ptr, i32, bool, bool], returns: i32 },

  // samplers
  llama_sampler_chain_add: { args: [ptr, ptr], returns: none },
  llama_sampler_chain_n: { args: [ptr], returns: i32 },
  llama_sampler_free: { args: [ptr], returns: none },
  llama_sampler_sample: { args: [ptr, ptr, i32], returns: i32 },
  llama_sampler_accept: { args: [ptr, i32], returns: none },
  llama_sampler_apply: { args: [ptr, ptr], returns: none },
  llama_sampler_reset: { args: [ptr], returns: none },
  llama_sampler_init_greedy: { args: [], returns: ptr },
  llama_sampler_init_dist: { args: [u32], returns: ptr },
  llama_sampler_init_top_k: { args: [i32], returns: ptr },
  llama_sampler_init_top_p: { args: [f32, usize], returns: ptr },
  llama_sampler_init_min_p: { args: [f32, usize], returns: ptr },
  llama_sampler_init_typical: { args: [f32, usize], returns: ptr },
  llama_sampler_init_temp: { args: [f32], returns: ptr },
  llama_sampler_init_xtc: { args: [f32, f32, usize, u32], returns: ptr },
  llama_sampler_init_mirostat: { args: [i32, u32, f32, f32, i32], returns: ptr },
  llama_sampler_init_mirostat_v2: { args: [u32, f32, f32], returns: ptr },
  llama_sampler_init_grammar: { args: [ptr, ptr, ptr], returns: ptr },
  llama_sampler_init_penalties: { args: [i32, i32, f32, f32, f32], returns: ptr },
  llama_sampler_init_dry: { args: [ptr, f32, f32, i32, i32, ptr, usize], returns: ptr },
  llama_sampler_init_logit_bias: { args: [i32, i32, ptr], returns: ptr },
} as const;

const shimSymbols = {
  llamux_model_default_params: { args: [ptr], returns: none },
  llamux_context_default_params: { args: [ptr], returns: none },
  llamux_quantize_default_params: { args: [ptr], returns: none },
  llamux_model_load: { args: [ptr, ptr], returns: ptr },
  llamux_context_init: { args: [ptr, ptr], returns: ptr },
  llamux_decode: { args: [ptr, ptr], returns: i32 },
  llamux_threadpool_new: { args: [ptr, i32], returns: ptr },
  llamux_encode: { args: [ptr, ptr], returns: i32 },
  llamux_sampler_chain_init: { args: [bool], returns: ptr },
  llamux_sampler_sample_checked: { args: [ptr, ptr, i32], returns: i32 },
  llamux_sampler_sample_logits: { args: [ptr, ptr, i32], returns: i32 },
  llamux_sampler_init_draw: { args: [f32, f32, f32, u32], returns: ptr },
  llamux_sampler_sample_grammar: { args: [ptr, ptr, ptr, i32, i32, ptr, i32], returns: i32 },
  llamux_sampler_sample_grammar_logits: { args: [ptr, ptr, ptr, i32, i32, ptr, i32], returns: i32 },
  llamux_prefix_groups_new: { args: [ptr], returns: ptr },
  llamux_prefix_groups_free: { args: [ptr], returns: none },
  llamux_prefix_groups_count: { args: [ptr], returns: i32 },
  llamux_grammar_apply: { args: [ptr, ptr, ptr], returns: none },
  llamux_perf_context: { args: [ptr, ptr], returns: none },
  llamux_log_install: { args: [ptr, i32], returns: none },
  llamux_log_free: { args: [ptr], returns: none },
  llamux_log_forwarder: { args: [], returns: ptr },
  llamux_last_error: { args: [], returns: cstring },
  llamux_clear_last_error: { args: [], returns: none },
  llamux_layout_count: { args: [], returns: i32 },
  llamux_layout_name: { args: [i32], returns: cstring },
  llamux_layout_value: { args: [i32], returns: u64 },
} as const;

// libmtmd (images into a text model's embedding space) and the shim that adapts its by-value structs.
const mtmdSymbols = {
  mtmd_free: { args: [ptr], returns: none },
  mtmd_support_vision: { args: [ptr], returns: bool },
  mtmd_support_audio: { args: [ptr], returns: bool },
  mtmd_get_audio_sample_rate: { args: [ptr], returns: i32 },
  mtmd_decode_use_mrope: { args: [ptr], returns: bool },
  mtmd_get_marker: { args: [ptr], returns: cstring },
  mtmd_helper_log_set: { args: [ptr, ptr], returns: none },

  mtmd_bitmap_init: { args: [u32, u32, ptr], returns: ptr },
  mtmd_bitmap_free: { args: [ptr], returns: none },
  mtmd_bitmap_get_nx: { args: [ptr], returns: u32 },
  mtmd_bitmap_get_ny: { args: [ptr], returns: u32 },
  mtmd_bitmap_get_id: { args: [ptr], returns: ptr },
  mtmd_bitmap_is_audio: { args: [ptr], returns: bool },
  mtmd_bitmap_set_id: { args: [ptr, ptr], returns: none },

  mtmd_input_chunks_init: { args: [], returns: ptr },
  mtmd_input_chunks_size: { args: [ptr], returns: usize },
  mtmd_input_chunks_get: { args: [ptr, usize], returns: ptr },
  mtmd_input_chunks_free: { args: [ptr], returns: none },
  mtmd_input_chunk_get_type: { args: [ptr], returns: i32 },
  mtmd_input_chunk_get_tokens_text: { args: [ptr, ptr], returns: ptr },
  mtmd_input_chunk_get_n_tokens: { args: [ptr], returns: usize },
  mtmd_input_chunk_get_n_pos: { args: [ptr], returns: i32 },
  mtmd_input_chunk_get_id: { args: [ptr], returns: ptr },
  mtmd_input_chunk_copy: { args: [ptr], returns: ptr },
  mtmd_input_chunk_free: { args: [ptr], returns: none },

  mtmd_tokenize: { args: [ptr, ptr, ptr, ptr, usize], returns: i32 },
  mtmd_encode_chunk: { args: [ptr, ptr], returns: i32 },
  mtmd_get_output_embd: { args: [ptr], returns: ptr },
  mtmd_helper_decode_image_chunk: { args: [ptr, ptr, ptr, ptr, i32, i32, i32, ptr, ptr, ptr], returns: i32 },

  // audio generation (text to speech), driven frame by frame
  mtmd_helper_gen_audio_init: { args: [ptr, ptr], returns: ptr },
  mtmd_helper_gen_audio_free: { args: [ptr], returns: none },
  mtmd_helper_gen_audio_reset: { args: [ptr], returns: none },
  mtmd_helper_gen_audio_step_prompt: { args: [ptr, i32], returns: i32 },
  mtmd_helper_gen_audio_step_gen: { args: [ptr, i32, ptr, ptr, ptr], returns: i32 },
  mtmd_helper_gen_audio_get_output: { args: [ptr, ptr, ptr, ptr, ptr], returns: i32 },

  // stb_image, which libmtmd decodes image files with (and exports): its own header parse.
  stbi_info_from_memory: { args: [ptr, i32, ptr, ptr, ptr], returns: i32 },
} as const;

const mtmdShimSymbols = {
  llamux_mtmd_default_params: { args: [ptr], returns: none },
  llamux_mtmd_init: { args: [ptr, ptr, ptr], returns: ptr },
  llamux_mtmd_image_from_buf: { args: [ptr, ptr, usize], returns: ptr },
  llamux_mtmd_audio_from_buf: { args: [ptr, ptr, usize], returns: ptr },
  llamux_gen_audio_info: { args: [ptr, ptr, ptr], returns: i32 },
  llamux_gen_audio_set_input: { args: [ptr, i32, ptr, usize, ptr, ptr, i32, f32, u32], returns: i32 },
  llamux_gen_audio_prepare_seed: { args: [ptr, i32, u32], returns: i32 },
  llamux_audio_decoded_frames: { args: [ptr, usize, i32, ptr], returns: i32 },
  llamux_mtmd_layout_count: { args: [], returns: i32 },
  llamux_mtmd_layout_name: { args: [i32], returns: cstring },
  llamux_mtmd_layout_value: { args: [i32], returns: u64 },
} as const;

/** Finds a library by its base name, accepting the versioned file names of the prebuilt packages. */
export function findLibrary(dir: string, base: string): string {
  if (!existsSync(dir)) throw new Error(`Cannot load llama.cpp: library directory "${dir}" does not exist (run "make", or check LLAMUX_LIB_DIR)`);
  const exact = join(dir, `${base}.so`);
  if (existsSync(exact)) return exact;
  // libllama.v0.5.0.so on the CPU build; GPU builds name their variant: libllama.cuda.v0.5.0.so
  const versioned = readdirSync(dir).find((f) => f.startsWith(`${base}.`) && /^\.(?:[a-z0-9]+\.)?v[\d.]+\.so$/.test(f.slice(base.length)));
  if (versioned) return join(dir, versioned);
  throw new Error(`Cannot find library "${base}" in "${dir}": run "make" to set up the native libraries`);
}

export function openNative(libDir: string) {
  const ggml = dlopen(findLibrary(libDir, "libggml"), ggmlSymbols);
  const llama = dlopen(findLibrary(libDir, "libllama"), llamaSymbols);
  const shim = dlopen(join(libDir, "libllamux-shim.so"), shimSymbols);
  return { ggml: ggml.symbols, llama: llama.symbols, shim: shim.symbols };
}

export type Native = ReturnType<typeof openNative>;

/** libmtmd and its shim; opened only by engines that load a vision projector. */
export function openMtmd(libDir: string) {
  const mtmd = dlopen(findLibrary(libDir, "libmtmd"), mtmdSymbols);
  const shim = dlopen(join(libDir, "libllamux-mtmd.so"), mtmdShimSymbols);
  return { mtmd: mtmd.symbols, shim: shim.symbols };
}

export type MtmdNative = ReturnType<typeof openMtmd>;
