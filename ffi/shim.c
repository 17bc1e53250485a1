// llamux shim: adapts the llama.cpp calls that bun:ffi cannot make (structs passed or returned by
// value) into pointer-in, pointer-out calls, and reports the struct layouts the TypeScript side
// reads and writes so that ffi/layouts.ts can refuse to run against a library it does not match.
// Nothing else belongs here unless a benchmark shows the JavaScript path is too slow.
#include <stddef.h>
#include <stdint.h>
#include "llama.h"

// ---- struct-by-value adapters -------------------------------------------------------------------

void llamux_model_default_params(struct llama_model_params * out) { *out = llama_model_default_params(); }
void llamux_context_default_params(struct llama_context_params * out) { *out = llama_context_default_params(); }
void llamux_quantize_default_params(struct llama_model_quantize_params * out) { *out = llama_model_quantize_default_params(); }

struct llama_model * llamux_model_load(const char * path, const struct llama_model_params * params) {
    return llama_model_load_from_file(path, *params);
}

struct llama_context * llamux_context_init(struct llama_model * model, const struct llama_context_params * params) {
    return llama_init_from_model(model, *params);
}

int32_t llamux_decode(struct llama_context * ctx, const struct llama_batch * batch) { return llama_decode(ctx, *batch); }
int32_t llamux_encode(struct llama_context * ctx, const struct llama_batch * batch) { return llama_encode(ctx, *batch); }

struct llama_sampler * llamux_sampler_chain_init(bool no_perf) {
    struct llama_sampler_chain_params params = llama_sampler_chain_default_params();
    params.no_perf = no_perf;
    return llama_sampler_chain_init(params);
}

void llamux_perf_context(const struct llama_context * ctx, struct llama_perf_context_data * out) { *out = llama_perf_context(ctx); }

// ---- layout report ------------------------------------------------------------------------------

#define SIZE(T) { "sizeof " #T, sizeof(struct T) }
#define FIELD(T, F) { #T "." #F, offsetof(struct T, F) }

static const struct { const char * name; size_t value; } layouts[] = {
    SIZE(llama_model_params),
    FIELD(llama_model_params, n_gpu_layers),
    FIELD(llama_model_params, split_mode),
    FIELD(llama_model_params, main_gpu),
    FIELD(llama_model_params, progress_callback),
    FIELD(llama_model_params, vocab_only),
    FIELD(llama_model_params, use_extra_bufts),
    FIELD(llama_model_params, check_tensors),
    FIELD(llama_model_params, load_mode),

    SIZE(llama_context_params),
    FIELD(llama_context_params, n_ctx),
    FIELD(llama_context_params, n_batch),
    FIELD(llama_context_params, n_ubatch),
    FIELD(llama_context_params, n_seq_max),
    FIELD(llama_context_params, n_rs_seq),
    FIELD(llama_context_params, n_threads),
    FIELD(llama_context_params, n_threads_batch),
    FIELD(llama_context_params, pooling_type),
    FIELD(llama_context_params, attention_type),
    FIELD(llama_context_params, flash_attn_type),
    FIELD(llama_context_params, type_k),
    FIELD(llama_context_params, type_v),
    FIELD(llama_context_params, embeddings),
    FIELD(llama_context_params, offload_kqv),
    FIELD(llama_context_params, no_perf),
    FIELD(llama_context_params, swa_full),
    FIELD(llama_context_params, kv_unified),

    SIZE(llama_batch),
    FIELD(llama_batch, n_tokens),
    FIELD(llama_batch, token),
    FIELD(llama_batch, embd),
    FIELD(llama_batch, pos),
    FIELD(llama_batch, n_seq_id),
    FIELD(llama_batch, seq_id),
    FIELD(llama_batch, logits),

    SIZE(llama_model_quantize_params),
    FIELD(llama_model_quantize_params, nthread),
    FIELD(llama_model_quantize_params, ftype),
    FIELD(llama_model_quantize_params, allow_requantize),
    FIELD(llama_model_quantize_params, quantize_output_tensor),
    FIELD(llama_model_quantize_params, pure),

    SIZE(llama_perf_context_data),
    FIELD(llama_perf_context_data, t_start_ms),
    FIELD(llama_perf_context_data, t_load_ms),
    FIELD(llama_perf_context_data, t_p_eval_ms),
    FIELD(llama_perf_context_data, t_eval_ms),
    FIELD(llama_perf_context_data, n_p_eval),
    FIELD(llama_perf_context_data, n_eval),
    FIELD(llama_perf_context_data, n_reused),

    SIZE(llama_logit_bias),
    FIELD(llama_logit_bias, bias),
};

int32_t llamux_layout_count(void) { return (int32_t) (sizeof(layouts) / sizeof(layouts[0])); }
const char * llamux_layout_name(int32_t i) { return layouts[i].name; }
uint64_t llamux_layout_value(int32_t i) { return (uint64_t) layouts[i].value; }
