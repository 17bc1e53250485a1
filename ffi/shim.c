// llamux shim: adapts the llama.cpp calls that bun:ffi cannot make (structs passed or returned by
// value) into pointer-in, pointer-out calls, and reports the struct layouts the TypeScript side
// reads and writes so that ffi/layouts.ts can refuse to run against a library it does not match.
// Nothing else belongs here unless a benchmark shows the JavaScript path is too slow.
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

// llama_sampler_sample accepts whatever the chain selected. When a grammar has ruled out every
// candidate (a grammar that can reach a dead end, or one that is complete while end-of-generation is
// banned), the grammar's accept throws a C++ exception through the C API and the process aborts. This
// samples the same way but returns LLAMA_TOKEN_NULL, accepting nothing, when the selected candidate was
// ruled out (its logit is -inf). Backend samplers are not used by llamux, so only CPU logits are read.
// The same from logits kept elsewhere (a checkpoint's copy of a prompt's last logits).
llama_token llamux_sampler_sample_logits(struct llama_sampler * chain, const float * logits, int32_t n_vocab) {
    if (logits == NULL || n_vocab <= 0) return LLAMA_TOKEN_NULL;
    llama_token_data * data = malloc(sizeof(llama_token_data) * (size_t) n_vocab);
    if (data == NULL) return LLAMA_TOKEN_NULL;
    for (int32_t i = 0; i < n_vocab; i++) data[i] = (llama_token_data) { i, logits[i], 0.0f };
    llama_token_data_array candidates = { data, (size_t) n_vocab, -1, false };
    llama_sampler_apply(chain, &candidates);
    llama_token token = LLAMA_TOKEN_NULL;
    if (candidates.selected >= 0 && (size_t) candidates.selected < candidates.size) {
        const llama_token_data * picked = &candidates.data[candidates.selected];
        if (picked->logit > -INFINITY) token = picked->id;
    }
    free(data);
    if (token != LLAMA_TOKEN_NULL) llama_sampler_accept(chain, token);
    return token;
}

llama_token llamux_sampler_sample_checked(struct llama_sampler * chain, struct llama_context * ctx, int32_t idx) {
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)));
    return llamux_sampler_sample_logits(chain, llama_get_logits_ith(ctx, idx), n_vocab);
}

void llamux_perf_context(const struct llama_context * ctx, struct llama_perf_context_data * out) { *out = llama_perf_context(ctx); }

// ---- log forwarding -----------------------------------------------------------------------------
// llama.cpp's log text is only valid during the callback, but a thread-safe bun:ffi callback runs
// later on the JS thread. So the shim copies each forwarded message; JS frees it with
// llamux_log_free after reading. Messages below the minimum level are dropped here, cheaply; a
// continuation (GGML_LOG_LEVEL_CONT) follows the fate of the message it continues.

typedef void (*llamux_log_sink)(int32_t level, char * text);
static llamux_log_sink log_sink = NULL;
static int32_t log_min_level = GGML_LOG_LEVEL_ERROR;
static bool log_forwarding_current = false;

// The first error message since llamux_clear_last_error, kept so that a failing call (model load,
// context creation) can report llama.cpp's root cause synchronously; later error lines of the same
// failure only repeat it in more general words.
static char last_error[1024];
static bool last_was_error = false;

static void remember_error(enum ggml_log_level level, const char * text) {
    if (level == GGML_LOG_LEVEL_ERROR) {
        last_was_error = last_error[0] == '\0';
    } else if (level != GGML_LOG_LEVEL_CONT) {
        last_was_error = false;
    }
    if (last_was_error && text != NULL) {
        size_t used = strlen(last_error);
        strncat(last_error, text, sizeof(last_error) - used - 1);
    }
}

const char * llamux_last_error(void) { return last_error; }
void llamux_clear_last_error(void) { last_error[0] = '\0'; }

static void forward_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    remember_error(level, text);
    bool forward = level == GGML_LOG_LEVEL_CONT ? log_forwarding_current : (int32_t) level >= log_min_level;
    if (level != GGML_LOG_LEVEL_CONT) log_forwarding_current = forward;
    if (!forward || log_sink == NULL || text == NULL) return;
    size_t length = strlen(text);
    char * copy = malloc(length + 1);
    if (copy == NULL) return;
    memcpy(copy, text, length + 1);
    log_sink((int32_t) level, copy);
}

void llamux_log_install(llamux_log_sink sink, int32_t min_level) {
    log_sink = sink;
    log_min_level = min_level;
    llama_log_set(forward_log, NULL);
}

void llamux_log_free(char * text) { free(text); }

// The same forwarding for libraries with their own log setter (libmtmd's mtmd_helper_log_set).
ggml_log_callback llamux_log_forwarder(void) { return forward_log; }

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
