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
#include <time.h>
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
//
// The grammar (NULL: none) is kept out of the chain and checked the way llama-server checks it: the
// chain picks from all candidates first, the grammar then looks at that one token only, and only when
// it rejects the token is the grammar applied to the whole vocabulary and the chain run again. Checking
// every token of a 65k-256k vocabulary against the grammar at every step is what makes constrained
// decoding slow; inside a JSON string nearly every pick passes the one-token check.
static void fill_candidates(llama_token_data * data, const float * logits, int32_t n_vocab) {
    for (int32_t i = 0; i < n_vocab; i++) data[i] = (llama_token_data) { i, logits[i], 0.0f };
}

static llama_token picked_token(const llama_token_data_array * candidates) {
    if (candidates->selected < 0 || (size_t) candidates->selected >= candidates->size) return LLAMA_TOKEN_NULL;
    const llama_token_data * picked = &candidates->data[candidates->selected];
    return picked->logit > -INFINITY ? picked->id : LLAMA_TOKEN_NULL;
}

static bool grammar_allows(struct llama_sampler * grammar, llama_token token) {
    llama_token_data single = { token, 1.0f, 0.0f };
    llama_token_data_array one = { &single, 1, -1, false };
    llama_sampler_apply(grammar, &one);
    return single.logit > -INFINITY;
}

static void swap_candidates(llama_token_data * a, llama_token_data * b) {
    llama_token_data t = *a;
    *a = *b;
    *b = t;
}

// Moves the `count` candidates of highest logit among data[0..n) to data[0..count), in no order: a
// quickselect with three-way partitions, so that runs of equal logits (-inf ones) end it.
static void select_highest(llama_token_data * data, size_t n, size_t count) {
    size_t low = 0, high = n;
    while (high - low > 1 && count > low && count < high) {
        const float pivot = data[low + (high - low) / 2].logit;
        size_t above = low, i = low, below = high;
        while (i < below) {
            if (data[i].logit > pivot) swap_candidates(&data[above++], &data[i++]);
            else if (data[i].logit < pivot) swap_candidates(&data[i], &data[--below]);
            else i++;
        }
        // [low, above) > pivot, [above, below) == pivot, [below, high) < pivot
        if (count <= above) high = above;
        else if (count >= below) low = below;
        else return;
    }
}

// ---- a persistent CPU threadpool -------------------------------------------------------------------

// Without a threadpool attached, ggml's CPU back end starts and joins its worker threads in every
// graph computation, so every decoded token pays thread creation and a cold worker. llama.cpp's own
// tools attach one whose workers stay between graphs and wait for the next by hybrid polling; this
// does the same, with ggml's default parameters (inherited affinity, poll level 50). Measured on the
// LFM2-350M shape, 2 cores, one token a decode: 17.5 ms without a pool, 15.2 ms with it, 16.9 ms with
// a pool whose workers sleep at once (poll 0), so the polling is most of the gain. The CPU back end is
// loaded at run time, so its constructor comes as a pointer from its registry.
typedef struct ggml_threadpool * (*threadpool_new_fn)(struct ggml_threadpool_params * params);

struct ggml_threadpool * llamux_threadpool_new(void * constructor, int32_t n_threads) {
    struct ggml_threadpool_params params;
    ggml_threadpool_params_init(&params, n_threads);
    return ((threadpool_new_fn) constructor)(&params);
}

// ---- a grammar's check of many tokens, group by group ------------------------------------------------
// A grammar allows a token only if it allows every prefix of the token's text: where no grammar stack
// accepts the characters a token starts with, the grammar rejects the token. So tokens are grouped by
// their first character, and again by their first two, each group with a token that is that prefix alone:
// the grammar checks that one token, and when it rejects it the whole group is ruled out without decoding
// and matching each member (llama.cpp's check of a token costs a few hundred nanoseconds; a 151k-token
// vocabulary took 25-45 ms a step wherever a grammar allowed few tokens). What is left is checked by the
// grammar as before, so exactly the same tokens are ruled out. Outside any group: end-of-generation tokens
// (the grammar allows them by its end state, not by their text), pieces that are empty or start inside a
// UTF-8 sequence (a previous token may have left one open), and prefixes without a token of their own or
// with no other member. Grammars that match token ids (`<[id]>`, `!<...>`) decide by the id, not the
// text: the TypeScript side passes no groups for those.

struct llamux_prefix_groups {
    int32_t n_vocab;
    int32_t n_groups;
    int32_t * first_group;    // per token: its one-character group, or -1
    int32_t * second_group;   // per token: its two-character group, or -1
    llama_token * group_rep;  // per group: the token whose piece is the prefix alone
};

// The first code point of a UTF-8 text and its length in bytes; 0 when the text does not start with a
// whole, valid character.
static int32_t first_code_point(const unsigned char * s, int32_t n, uint32_t * cp) {
    if (n <= 0) return 0;
    const unsigned char c = s[0];
    int32_t len;
    uint32_t value;
    if (c < 0x80) { *cp = c; return 1; }
    else if ((c >> 5) == 6) { len = 2; value = c & 0x1f; }
    else if ((c >> 4) == 14) { len = 3; value = c & 0x0f; }
    else if ((c >> 3) == 30) { len = 4; value = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (int32_t i = 1; i < len; i++) {
        if ((s[i] >> 6) != 2) return 0;
        value = (value << 6) | (s[i] & 0x3f);
    }
    *cp = value;
    return len;
}

void llamux_prefix_groups_free(struct llamux_prefix_groups * index) {
    if (index == NULL) return;
    free(index->first_group);
    free(index->second_group);
    free(index->group_rep);
    free(index);
}

// Prefixes while the groups are built: an open-addressing table keyed by one or two code points.
typedef struct { uint64_t key; int32_t count; llama_token rep; int32_t group; } prefix_slot;
typedef struct { prefix_slot * slots; size_t mask; } prefix_table;

static prefix_slot * prefix_find(prefix_table * table, uint64_t key) {
    size_t i = (size_t) ((key * 0x9E3779B97F4A7C15ull) >> 20) & table->mask;
    while (table->slots[i].key != 0 && table->slots[i].key != key) i = (i + 1) & table->mask;
    table->slots[i].key = key;
    return &table->slots[i];
}

// One character c as (c + 1); two as (first + 1) << 21 | (second + 1): never 0, which marks a free slot.
static uint64_t prefix_key(uint32_t first, int64_t second) {
    return second < 0 ? (uint64_t) first + 1 : (((uint64_t) first + 1) << 21) | ((uint64_t) second + 1);
}

struct llamux_prefix_groups * llamux_prefix_groups_new(const struct llama_vocab * vocab) {
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    const size_t n = (size_t) (n_vocab > 0 ? n_vocab : 1);
    struct llamux_prefix_groups * index = calloc(1, sizeof *index);
    uint64_t * keys = malloc(sizeof(uint64_t) * n * 2); // per token: its one- and two-character keys (0: none)
    prefix_table table = { NULL, 0 };
    size_t size = 1024;
    while (size < n * 4) size <<= 1;
    table.slots = calloc(size, sizeof(prefix_slot));
    table.mask = size - 1;
    if (index == NULL || keys == NULL || table.slots == NULL) goto fail;
    index->n_vocab = n_vocab;
    index->first_group = malloc(sizeof(int32_t) * n);
    index->second_group = malloc(sizeof(int32_t) * n);
    if (index->first_group == NULL || index->second_group == NULL) goto fail;
    char buf[512];
    for (llama_token id = 0; id < n_vocab; id++) {
        keys[2 * id] = keys[2 * id + 1] = 0;
        if (llama_vocab_is_eog(vocab, id)) continue;
        // the piece the grammar sees: special tokens as their text (llama_vocab's token_to_piece cache)
        const int32_t len = llama_token_to_piece(vocab, id, buf, (int32_t) sizeof buf, 0, true);
        uint32_t first, second;
        const int32_t first_len = len > 0 ? first_code_point((const unsigned char *) buf, len, &first) : 0;
        if (first_len == 0 || first == 0) continue;
        keys[2 * id] = prefix_key(first, -1);
        prefix_slot * one = prefix_find(&table, keys[2 * id]);
        one->count++;
        if (first_len == len) { if (one->rep == 0) one->rep = id + 1; continue; }
        const int32_t second_len = first_code_point((const unsigned char *) buf + first_len, len - first_len, &second);
        if (second_len == 0 || second == 0) continue;
        keys[2 * id + 1] = prefix_key(first, second);
        prefix_slot * two = prefix_find(&table, keys[2 * id + 1]);
        two->count++;
        if (first_len + second_len == len && two->rep == 0) two->rep = id + 1;
    }
    // a group: a prefix with a token of its own (rep, stored as id + 1) and at least one other member
    int32_t n_groups = 0;
    for (size_t i = 0; i < size; i++) {
        prefix_slot * slot = &table.slots[i];
        slot->group = (slot->key != 0 && slot->rep != 0 && slot->count >= 2) ? n_groups++ : -1;
    }
    index->n_groups = n_groups;
    index->group_rep = malloc(sizeof(llama_token) * (size_t) (n_groups > 0 ? n_groups : 1));
    if (index->group_rep == NULL) goto fail;
    for (size_t i = 0; i < size; i++) {
        if (table.slots[i].group >= 0) index->group_rep[table.slots[i].group] = table.slots[i].rep - 1;
    }
    for (llama_token id = 0; id < n_vocab; id++) {
        index->first_group[id] = keys[2 * id] != 0 ? prefix_find(&table, keys[2 * id])->group : -1;
        index->second_group[id] = keys[2 * id + 1] != 0 ? prefix_find(&table, keys[2 * id + 1])->group : -1;
    }
    free(keys);
    free(table.slots);
    return index;
fail:
    free(keys);
    free(table.slots);
    llamux_prefix_groups_free(index);
    return NULL;
}

int32_t llamux_prefix_groups_count(const struct llamux_prefix_groups * index) { return index ? index->n_groups : 0; }

// Below this many candidates the groups save nothing worth their own checks.
#define GROUPED_MIN_CANDIDATES 512

// Checks the representatives of the groups `group_of` gives the candidates still allowed (logit above
// -inf) that have no verdict yet, in one grammar pass, then rules out the members of rejected groups.
// `verdicts`: per group, 0 not checked yet, 1 allowed, -1 ruled out.
static void rule_out_groups(struct llama_sampler * grammar, const struct llamux_prefix_groups * index, const int32_t * group_of,
                            int8_t * verdicts, llama_token_data_array * cur, llama_token_data * probe, int32_t * probe_group) {
    size_t n_probe = 0;
    for (size_t i = 0; i < cur->size; i++) {
        const llama_token id = cur->data[i].id;
        if (cur->data[i].logit == -INFINITY || id < 0 || id >= index->n_vocab) continue;
        const int32_t group = group_of[id];
        if (group < 0 || verdicts[group] != 0) continue;
        verdicts[group] = 1; // provisional: the pass below decides
        probe[n_probe] = (llama_token_data) { index->group_rep[group], 0.0f, 0.0f };
        probe_group[n_probe++] = group;
    }
    if (n_probe > 0) {
        llama_token_data_array reps = { probe, n_probe, -1, false };
        llama_sampler_apply(grammar, &reps);
        for (size_t i = 0; i < n_probe; i++) verdicts[probe_group[i]] = probe[i].logit > -INFINITY ? 1 : -1;
    }
    for (size_t i = 0; i < cur->size; i++) {
        const llama_token id = cur->data[i].id;
        if (id < 0 || id >= index->n_vocab) continue;
        const int32_t group = group_of[id];
        if (group >= 0 && verdicts[group] < 0) cur->data[i].logit = -INFINITY;
    }
}

// llama_sampler_apply(grammar, cur) with the same result, the groups ruling out what they can first.
// `verdicts` (index->n_groups entries) carries verdicts across calls on the same grammar state; NULL
// judges the groups afresh.
static void grammar_apply_grouped(struct llama_sampler * grammar, const struct llamux_prefix_groups * index, int8_t * verdicts, llama_token_data_array * cur) {
    if (index == NULL || cur->size < GROUPED_MIN_CANDIDATES || index->n_groups == 0) {
        llama_sampler_apply(grammar, cur);
        return;
    }
    int8_t * own = NULL;
    if (verdicts == NULL) verdicts = own = calloc((size_t) index->n_groups, 1);
    llama_token_data * probe = malloc(sizeof(llama_token_data) * cur->size);
    int32_t * probe_group = malloc(sizeof(int32_t) * cur->size);
    size_t * place = malloc(sizeof(size_t) * cur->size);
    if (verdicts == NULL || probe == NULL || probe_group == NULL || place == NULL) {
        free(probe); free(probe_group); free(place); free(own);
        llama_sampler_apply(grammar, cur);
        return;
    }
    // Candidates already at -inf stay there: the grammar only ever lowers a logit to -inf.
    rule_out_groups(grammar, index, index->first_group, verdicts, cur, probe, probe_group);
    rule_out_groups(grammar, index, index->second_group, verdicts, cur, probe, probe_group);
    // every candidate no group ruled out goes to the grammar itself
    size_t n_rest = 0;
    for (size_t i = 0; i < cur->size; i++) {
        if (cur->data[i].logit == -INFINITY) continue;
        probe[n_rest] = cur->data[i];
        place[n_rest++] = i;
    }
    if (n_rest > 0) {
        llama_token_data_array rest = { probe, n_rest, -1, false };
        llama_sampler_apply(grammar, &rest);
        for (size_t i = 0; i < n_rest; i++) cur->data[place[i]].logit = probe[i].logit;
    }
    free(probe); free(probe_group); free(place); free(own);
}

void llamux_grammar_apply(struct llama_sampler * grammar, const struct llamux_prefix_groups * index, llama_token_data_array * cur) {
    grammar_apply_grouped(grammar, index, NULL, cur);
}

// The grammar's allowed candidates among the highest, at least `k` of them when that many are allowed,
// moved to data[0..count): candidates are examined in windows of the highest remaining, growing fourfold,
// the grammar applied to a whole window at once; once a window would pass the highest eighth of the
// vocabulary, all the rest are examined at once. Every allowed candidate above the last window is found,
// so the k highest allowed ones are among them. Selection costs a pass over the vocabulary: one for the
// first window (often enough, inside a JSON string), one for the highest eighth, whose windows are then
// selected within it.
static size_t allowed_highest(struct llama_sampler * grammar, const struct llamux_prefix_groups * index, int8_t * verdicts, llama_token_data * data, size_t n, size_t k) {
    size_t found = 0, start = 0, window = k < 64 ? 64 : k;
    size_t head = n; // data[start..head) holds the highest remaining candidates, unordered
    while (found < k && start < n) {
        size_t end = start + window;
        if (start > 0 && head == n && end < n / 8) {
            select_highest(data + start, n - start, n / 8 - start);
            head = n / 8;
        }
        if (end >= head || (start > 0 && end >= n / 8)) end = n;
        if (end < n) select_highest(data + start, head - start, end - start);
        llama_token_data_array part = { data + start, end - start, -1, false };
        grammar_apply_grouped(grammar, index, verdicts, &part);
        for (size_t i = start; i < end; i++) {
            if (data[i].logit > -INFINITY) swap_candidates(&data[found++], &data[i]);
        }
        start = end;
        window *= 4;
    }
    return found;
}

static void apply_range(struct llama_sampler * chain, int32_t from, int32_t to, llama_token_data_array * candidates) {
    for (int32_t i = from; i < to; i++) llama_sampler_apply(llama_sampler_chain_get(chain, i), candidates);
}

// `n_pre`: the chain's first samplers that only change logits (bias, penalties, DRY); `top_k`: when the
// sampler after them keeps the k highest (top-k, or greedy as k = 1), 0 otherwise. On a rejected pick the
// grammar then looks only at the highest candidates until k are allowed, instead of at every token: the
// k highest allowed tokens are what top-k keeps after the grammar, so the draw is exactly llama.cpp's.
// `index` (NULL: none) groups the vocabulary by first character for the grammar's check of many tokens.
llama_token llamux_sampler_sample_grammar_logits(struct llama_sampler * chain, struct llama_sampler * grammar, const struct llamux_prefix_groups * index, int32_t n_pre, int32_t top_k, const float * logits, int32_t n_vocab) {
    if (logits == NULL || n_vocab <= 0) return LLAMA_TOKEN_NULL;
    llama_token_data * data = malloc(sizeof(llama_token_data) * (size_t) n_vocab);
    if (data == NULL) return LLAMA_TOKEN_NULL;
    fill_candidates(data, logits, n_vocab);
    llama_token_data_array candidates = { data, (size_t) n_vocab, -1, false };
    llama_sampler_apply(chain, &candidates);
    llama_token token = picked_token(&candidates);
    if (grammar != NULL && (token == LLAMA_TOKEN_NULL || !grammar_allows(grammar, token))) {
        fill_candidates(data, logits, n_vocab);
        candidates = (llama_token_data_array) { data, (size_t) n_vocab, -1, false };
        const int32_t n_samplers = llama_sampler_chain_n(chain);
        int8_t * verdicts = index != NULL ? calloc((size_t) index->n_groups + 1, 1) : NULL;
        if (top_k > 0 && n_pre >= 0 && n_pre < n_samplers) {
            apply_range(chain, 0, n_pre, &candidates);
            candidates.size = allowed_highest(grammar, verdicts != NULL ? index : NULL, verdicts, data, (size_t) n_vocab, (size_t) top_k);
            // a dead end (the grammar allows nothing): top-p and min-p would abort on no candidates
            if (candidates.size > 0) apply_range(chain, n_pre, n_samplers, &candidates);
        } else {
            grammar_apply_grouped(grammar, verdicts != NULL ? index : NULL, verdicts, &candidates);
            llama_sampler_apply(chain, &candidates);
        }
        free(verdicts);
        token = candidates.size > 0 ? picked_token(&candidates) : LLAMA_TOKEN_NULL;
    }
    free(data);
    if (token != LLAMA_TOKEN_NULL) {
        if (grammar != NULL) llama_sampler_accept(grammar, token);
        llama_sampler_accept(chain, token);
    }
    return token;
}

llama_token llamux_sampler_sample_grammar(struct llama_sampler * chain, struct llama_sampler * grammar, const struct llamux_prefix_groups * index, int32_t n_pre, int32_t top_k, struct llama_context * ctx, int32_t idx) {
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)));
    return llamux_sampler_sample_grammar_logits(chain, grammar, index, n_pre, top_k, llama_get_logits_ith(ctx, idx), n_vocab);
}

// The same without a separate grammar (kept for callers that put everything in one chain).
llama_token llamux_sampler_sample_logits(struct llama_sampler * chain, const float * logits, int32_t n_vocab) {
    return llamux_sampler_sample_grammar_logits(chain, NULL, NULL, 0, 0, logits, n_vocab);
}

llama_token llamux_sampler_sample_checked(struct llama_sampler * chain, struct llama_context * ctx, int32_t idx) {
    return llamux_sampler_sample_grammar(chain, NULL, NULL, 0, 0, ctx, idx);
}

// ---- truncation and draw without sorting the vocabulary ------------------------------------------
// With top_k off, llama.cpp's chain (top_p, min_p, temp, dist) softmaxes the whole vocabulary in several
// passes and top_p sorts it; at 65k-256k entries that is a noticeable share of a decode step. This sampler
// does the same job in place: min_p as a logit threshold, top_p by walking a histogram of the
// probabilities (only the bucket where the mass crosses p is sorted), then temperature and one draw
// from the kept candidates. It is the last sampler of a chain; bias, grammar, penalties and DRY run
// before it as llama.cpp samplers. When nothing is cut, the draw is exactly llama.cpp's [temp, dist]
// for the same seed: same RNG (mt19937, a 53-bit uniform draw as libstdc++ makes it), same arithmetic,
// same order. Afterwards cur_p holds the kept candidates in index order, their p unnormalised weights.

typedef struct {
    uint32_t state[624];
    int32_t index;
} llamux_mt19937;

static void mt_seed(llamux_mt19937 * mt, uint32_t seed) {
    mt->state[0] = seed;
    for (uint32_t i = 1; i < 624; i++) mt->state[i] = 1812433253u * (mt->state[i - 1] ^ (mt->state[i - 1] >> 30)) + i;
    mt->index = 624;
}

static uint32_t mt_next(llamux_mt19937 * mt) {
    if (mt->index >= 624) {
        for (int32_t i = 0; i < 624; i++) {
            uint32_t y = (mt->state[i] & 0x80000000u) | (mt->state[(i + 1) % 624] & 0x7fffffffu);
            mt->state[i] = mt->state[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        mt->index = 0;
    }
    uint32_t y = mt->state[mt->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

// std::uniform_real_distribution<double>(0, 1) over std::mt19937 in libstdc++ (generate_canonical<double, 53>).
static double mt_uniform(llamux_mt19937 * mt) {
    double low = (double) mt_next(mt);
    double high = (double) mt_next(mt);
    double value = (low + high * 4294967296.0) / 18446744073709551616.0;
    return value >= 1.0 ? nextafter(1.0, 0.0) : value;
}

typedef struct {
    float top_p;
    float min_p;
    float temperature;
    uint32_t seed;
    uint32_t seed_used;
    llamux_mt19937 rng;
    // candidates of the bucket where top_p's mass crosses p, sorted there
    llama_token_data * boundary;
    size_t boundary_capacity;
} llamux_draw;

#define TOP_P_BUCKETS 1024
#define TOP_P_RANGE 32.0f // logits this far below the maximum share the last bucket (weights below e^-32)

static uint32_t fresh_seed(uint32_t seed) {
    if (seed != LLAMA_DEFAULT_SEED) return seed;
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (uint32_t) (now.tv_nsec ^ (now.tv_sec * 2654435761u) ^ (uint32_t) (uintptr_t) &now);
}

static int by_logit_descending(const void * a, const void * b) {
    float la = ((const llama_token_data *) a)->logit, lb = ((const llama_token_data *) b)->logit;
    if (la != lb) return la > lb ? -1 : 1;
    int32_t ia = ((const llama_token_data *) a)->id, ib = ((const llama_token_data *) b)->id;
    return (ia > ib) - (ia < ib);
}

static size_t keep_at_or_above(llama_token_data_array * cur_p, float threshold) {
    size_t kept = 0;
    for (size_t i = 0; i < cur_p->size; i++) {
        if (cur_p->data[i].logit >= threshold) cur_p->data[kept++] = cur_p->data[i];
    }
    return kept;
}

// The smallest logit among the highest-logit candidates whose probability (temperature 1) adds up to at
// least p, as llama.cpp's top_p picks them after sorting; ties at that logit are all kept.
static float top_p_threshold(llamux_draw * d, const llama_token_data_array * cur_p, float max_logit) {
    double mass[TOP_P_BUCKETS] = { 0 };
    const float scale = TOP_P_BUCKETS / TOP_P_RANGE;
    double total = 0.0;
    for (size_t i = 0; i < cur_p->size; i++) {
        float distance = max_logit - cur_p->data[i].logit;
        float weight = expf(-distance);
        int bucket = distance < TOP_P_RANGE ? (int) (distance * scale) : TOP_P_BUCKETS - 1;
        mass[bucket] += weight;
        total += weight;
    }
    const double target = (double) d->top_p * total;
    double above = 0.0;
    int crossing = TOP_P_BUCKETS - 1;
    for (int b = 0; b < TOP_P_BUCKETS; b++) {
        if (above + mass[b] >= target) { crossing = b; break; }
        above += mass[b];
    }
    // Sort the crossing bucket's candidates and walk them until the mass reaches p.
    size_t count = 0;
    for (size_t i = 0; i < cur_p->size; i++) {
        float distance = max_logit - cur_p->data[i].logit;
        int bucket = distance < TOP_P_RANGE ? (int) (distance * scale) : TOP_P_BUCKETS - 1;
        if (bucket != crossing) continue;
        if (count == d->boundary_capacity) {
            size_t capacity = d->boundary_capacity ? d->boundary_capacity * 2 : 1024;
            llama_token_data * grown = realloc(d->boundary, capacity * sizeof(llama_token_data));
            if (grown == NULL) return -INFINITY; // keep everything rather than fail
            d->boundary = grown;
            d->boundary_capacity = capacity;
        }
        d->boundary[count++] = cur_p->data[i];
    }
    if (count == 0) return -INFINITY;
    qsort(d->boundary, count, sizeof(llama_token_data), by_logit_descending);
    for (size_t i = 0; i < count; i++) {
        above += expf(d->boundary[i].logit - max_logit);
        if (above >= target) return d->boundary[i].logit;
    }
    return d->boundary[count - 1].logit;
}

static void llamux_draw_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    llamux_draw * d = smpl->ctx;
    cur_p->selected = -1;
    if (cur_p->size == 0) return;
    float max_logit = -INFINITY;
    for (size_t i = 0; i < cur_p->size; i++) {
        if (cur_p->data[i].logit > max_logit) max_logit = cur_p->data[i].logit;
    }
    if (!(max_logit > -INFINITY)) {
        // every candidate ruled out: nothing to draw (the caller sees the -inf logit and reports it)
        cur_p->selected = 0;
        return;
    }
    float threshold = -INFINITY;
    if (d->min_p > 0.0f) threshold = max_logit + logf(d->min_p);
    if (d->top_p < 1.0f) {
        float top_p = top_p_threshold(d, cur_p, max_logit);
        if (top_p > threshold) threshold = top_p;
    }
    if (threshold > -INFINITY) cur_p->size = keep_at_or_above(cur_p, threshold);

    // llama.cpp's temp then dist: logits divided by the temperature, softmax in float with a double sum,
    // one uniform draw, the first candidate whose running sum reaches it.
    const double rnd = mt_uniform(&d->rng);
    if (cur_p->size == 1) {
        cur_p->data[0].p = 1.0f;
        cur_p->selected = 0;
        return;
    }
    const float temperature = d->temperature;
    const float max_scaled = max_logit / temperature;
    double sum = 0.0;
    for (size_t i = 0; i < cur_p->size; i++) {
        float p = expf(cur_p->data[i].logit / temperature - max_scaled);
        cur_p->data[i].p = p;
        sum += p;
    }
    const double target = sum * rnd;
    double running = 0.0;
    for (size_t i = 0; i < cur_p->size; i++) {
        running += cur_p->data[i].p;
        if (running >= target) {
            cur_p->selected = (int64_t) i;
            return;
        }
    }
    cur_p->selected = (int64_t) cur_p->size - 1;
}

static const char * llamux_draw_name(const struct llama_sampler * smpl) {
    (void) smpl;
    return "llamux-draw";
}

static void llamux_draw_reset(struct llama_sampler * smpl) {
    llamux_draw * d = smpl->ctx;
    d->seed_used = fresh_seed(d->seed);
    mt_seed(&d->rng, d->seed_used);
}

static void llamux_draw_free(struct llama_sampler * smpl) {
    llamux_draw * d = smpl->ctx;
    free(d->boundary);
    free(d);
}

static struct llama_sampler * llamux_draw_clone(const struct llama_sampler * smpl);

static struct llama_sampler_i llamux_draw_interface = {
    .name = llamux_draw_name,
    .apply = llamux_draw_apply,
    .reset = llamux_draw_reset,
    .clone = llamux_draw_clone,
    .free = llamux_draw_free,
};

// top_p 1 or more: off; min_p 0 or less: off; temperature > 0; seed LLAMA_DEFAULT_SEED: a fresh one.
struct llama_sampler * llamux_sampler_init_draw(float top_p, float min_p, float temperature, uint32_t seed) {
    if (!(temperature > 0.0f) || isnan(top_p) || isnan(min_p)) return NULL;
    top_p = top_p > 1.0f ? 1.0f : top_p < 0.0f ? 0.0f : top_p;
    min_p = min_p < 0.0f ? 0.0f : min_p > 1.0f ? 1.0f : min_p;
    llamux_draw * d = calloc(1, sizeof(llamux_draw));
    if (d == NULL) return NULL;
    d->top_p = top_p;
    d->min_p = min_p;
    d->temperature = temperature;
    d->seed = seed;
    d->seed_used = fresh_seed(seed);
    mt_seed(&d->rng, d->seed_used);
    return llama_sampler_init(&llamux_draw_interface, d);
}

static struct llama_sampler * llamux_draw_clone(const struct llama_sampler * smpl) {
    const llamux_draw * source = smpl->ctx;
    struct llama_sampler * copy = llamux_sampler_init_draw(source->top_p, source->min_p, source->temperature, source->seed);
    if (copy != NULL) {
        llamux_draw * d = copy->ctx;
        d->seed_used = source->seed_used;
        d->rng = source->rng;
    }
    return copy;
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
