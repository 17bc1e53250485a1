// How many samples libmtmd's audio decoder (miniaudio) would produce from a file's bytes, asked of
// miniaudio itself with the configuration libmtmd uses (mono float at the projector's rate), without
// decoding the samples. libmtmd allocates that many floats before it decodes anything, and the count
// comes from the file's header (a WAV data size, FLAC's STREAMINFO, an MP3 Xing frame count), so a
// header that lies would make it allocate gigabytes; the engine asks here first and refuses long ones.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#define MINIAUDIO_IMPLEMENTATION
#define MA_NO_ENCODING
#define MA_NO_DEVICE_IO
#define MA_NO_RESOURCE_MANAGER
#define MA_NO_NODE_GRAPH
#define MA_NO_ENGINE
#define MA_NO_GENERATION
#define MA_API static
#include "miniaudio/miniaudio.h"
#pragma GCC diagnostic pop

#include <stdint.h>

// 1 and the sample count in *frames when miniaudio reads the bytes; 0 when no decoder does.
int32_t llamux_audio_decoded_frames(const unsigned char * buf, size_t len, int32_t sample_rate, uint64_t * frames) {
    ma_decoder_config config = ma_decoder_config_init(ma_format_f32, 1, (ma_uint32) sample_rate);
    ma_decoder decoder;
    if (ma_decoder_init_memory(buf, len, &config, &decoder) != MA_SUCCESS) return 0;
    ma_uint64 count = 0;
    ma_result result = ma_decoder_get_length_in_pcm_frames(&decoder, &count);
    ma_decoder_uninit(&decoder);
    if (result != MA_SUCCESS) return 0;
    *frames = count;
    return 1;
}
