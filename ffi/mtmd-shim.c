// llamux mtmd shim: the libmtmd calls that bun:ffi cannot make (structs passed or returned by value),
// as pointer-in, pointer-out calls, plus the struct layouts ffi/mtmd-layouts.ts checks at load.
// A library of its own, linked against libmtmd, so that text-only engines never load libmtmd.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "mtmd.h"
#include "mtmd-helper.h"

void llamux_mtmd_default_params(struct mtmd_context_params * out) { *out = mtmd_context_params_default(); }

mtmd_context * llamux_mtmd_init(const char * path, const struct llama_model * model, const struct mtmd_context_params * params) {
    return mtmd_init_from_file(path, model, *params);
}

// An image file's bytes (whatever stb_image reads) as a bitmap whose id is the bytes' SHA-256. Audio
// and video are not images here: their bitmaps are freed and NULL comes back.
mtmd_bitmap * llamux_mtmd_image_from_buf(const mtmd_context * ctx, const unsigned char * buf, size_t len) {
    struct mtmd_helper_bitmap_wrapper w = mtmd_helper_bitmap_init_from_buf(ctx, buf, len, false, mtmd_helper_init_opt_default());
    if (w.video_ctx != NULL) {
        mtmd_helper_video_free(w.video_ctx);
        if (w.bitmap != NULL) mtmd_bitmap_free(w.bitmap);
        return NULL;
    }
    if (w.bitmap != NULL && mtmd_bitmap_is_audio(w.bitmap)) {
        mtmd_bitmap_free(w.bitmap);
        return NULL;
    }
    return w.bitmap;
}

// An audio file's bytes (WAV, MP3 or FLAC: what miniaudio reads), resampled to the projector's rate, as a
// bitmap of samples whose id is the bytes' SHA-256. Anything else (an image, a video, bytes no decoder
// reads) gives NULL.
mtmd_bitmap * llamux_mtmd_audio_from_buf(const mtmd_context * ctx, const unsigned char * buf, size_t len) {
    struct mtmd_helper_bitmap_wrapper w = mtmd_helper_bitmap_init_from_buf(ctx, buf, len, false, mtmd_helper_init_opt_default());
    if (w.video_ctx != NULL) {
        mtmd_helper_video_free(w.video_ctx);
        if (w.bitmap != NULL) mtmd_bitmap_free(w.bitmap);
        return NULL;
    }
    if (w.bitmap != NULL && !mtmd_bitmap_is_audio(w.bitmap)) {
        mtmd_bitmap_free(w.bitmap);
        return NULL;
    }
    return w.bitmap;
}

// Audio generation (text to speech): mtmd_gen_audio_get_info returns a struct by value; its fields come
// back through pointers. 0 when the projector generates no audio.
int32_t llamux_gen_audio_info(const mtmd_context * ctx, int32_t * sample_rate, const char ** variant) {
    struct mtmd_gen_audio_info info = mtmd_gen_audio_get_info(ctx);
    *sample_rate = info.sample_rate;
    *variant = info.model_variant;
    return (int32_t) info.type;
}

// mtmd_helper_gen_audio_set_input with its input struct built here, asking for float PCM (not WAV):
// the caller reads the samples with mtmd_helper_gen_audio_get_output as frames come.
int32_t llamux_gen_audio_set_input(mtmd_helper_gen_audio * gen, int32_t seq_id, const char * prompt, size_t prompt_len,
                                   mtmd_bitmap * speaker, const char * lang, int32_t top_k, float top_p, uint32_t seed) {
    struct mtmd_helper_gen_audio_inp inp = {
        .seq_id = seq_id, .prompt = prompt, .prompt_len = prompt_len, .speaker_ref = speaker, .lang = lang,
        .top_k = top_k, .top_p = top_p, .seed = seed, .out_type = MTMD_HELPER_GEN_AUDIO_OUTTYPE_PCM,
    };
    return mtmd_helper_gen_audio_set_input(gen, &inp);
}

// The projector reseeds its sampler only when a call's seed differs from the last one's, so a second speech
// with the same seed would go on with the first one's random draws. One cheap code step with another seed
// makes the next speech's first step reseed, as in a fresh process (llama-tts). n_embd: the backbone's.
int32_t llamux_gen_audio_prepare_seed(mtmd_context * ctx, int32_t n_embd, uint32_t next_seed) {
    float * hidden = calloc((size_t) n_embd, sizeof(float));
    if (hidden == NULL) return 1;
    struct mtmd_gen_inp inp = mtmd_gen_inp_default(ctx);
    inp.type = MTMD_GEN_PROCESS_TYPE_GEN_CODE;
    inp.code0 = 0;
    inp.embd = hidden;
    inp.seed = next_seed ^ 1u;
    struct mtmd_gen_out out;
    int32_t status = mtmd_gen_audio_process(ctx, &inp, &out);
    free(hidden);
    return status;
}

#define SIZE(T) { "sizeof " #T, sizeof(struct T) }
#define FIELD(T, F) { #T "." #F, offsetof(struct T, F) }

static const struct { const char * name; size_t value; } layouts[] = {
    SIZE(mtmd_context_params),
    FIELD(mtmd_context_params, use_gpu),
    FIELD(mtmd_context_params, print_timings),
    FIELD(mtmd_context_params, n_threads),
    FIELD(mtmd_context_params, media_marker),
    FIELD(mtmd_context_params, flash_attn_type),
    FIELD(mtmd_context_params, warmup),
    FIELD(mtmd_context_params, batch_max_tokens),

    SIZE(mtmd_input_text),
    FIELD(mtmd_input_text, text),
    FIELD(mtmd_input_text, text_len),
    FIELD(mtmd_input_text, add_special),
    FIELD(mtmd_input_text, parse_special),
};

int32_t llamux_mtmd_layout_count(void) { return (int32_t) (sizeof(layouts) / sizeof(layouts[0])); }
const char * llamux_mtmd_layout_name(int32_t i) { return layouts[i].name; }
uint64_t llamux_mtmd_layout_value(int32_t i) { return (uint64_t) layouts[i].value; }
