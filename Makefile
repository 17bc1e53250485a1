# llamux build. Targets are the interface: make (set-up + build), make run, make test, make binary, make bench.
# LLAMUX_GPU=cpu|cuda|vulkan picks the prebuilt llama.cpp variant (cpu by default).

LLAMUX_GPU ?= cpu
BUN        := node_modules/.bin/bun
NATIVE     := .native
LIB        := $(NATIVE)/lib
LLAMA_SRC  := $(NATIVE)/llama.cpp
CC         ?= cc
# Compile jobs of the sub-makes (the C companions) when make was not given -j itself (then they share its jobs).
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
SUBMAKE_J   = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(JOBS))

.PHONY: all setup fetched native companions oracle-tools run test test-requirements test-unit test-e2e binary release package bench gpu-pack gpu-check models clean llama-from-source llama-portable typecheck image

all: setup

setup: node_modules/.installed native

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@$(BUN) --version >/dev/null || node node_modules/bun/install.js
	@touch $@

# Prebuilt libraries + source bundle; redone when the pins or the GPU variant change.
$(LIB)/VARIANT: scripts/native-packages.json scripts/fetch-native.sh
	LIB=$(LIB) bash scripts/fetch-native.sh $(LLAMUX_GPU)

# Fetched again when the libraries there are of another GPU variant. Needs neither npm packages nor Bun, so
# `make -j2` fetches and compiles while npm installs.
fetched:
	@if [ ! -f $(LIB)/VARIANT ] || ! grep -q -- "-$(LLAMUX_GPU)$$" $(LIB)/VARIANT; then bash scripts/fetch-native.sh $(LLAMUX_GPU); fi

native: fetched
	@$(MAKE) --no-print-directory $(SUBMAKE_J) companions

# What llamux builds beside a set of llama.cpp libraries in $(LIB): its shim, libmtmd, the vision shim and
# the RPC back end. `make LIB=DIR -o DIR/VARIANT companions` completes a set kept elsewhere.
companions: $(LIB)/libllamux-shim.so $(LIB)/libmtmd.so $(LIB)/libllamux-mtmd.so $(LIB)/libggml-rpc.so

$(LIB)/libllamux-shim.so: ffi/shim.c $(LIB)/VARIANT
	$(CC) -O2 -shared -fPIC -std=c11 -Wall -Werror -I$(LLAMA_SRC)/include -I$(LLAMA_SRC)/ggml/include \
	  ffi/shim.c -o $@ -L$(LIB) -l:$(notdir $(firstword $(wildcard $(LIB)/libllama.v*.so $(LIB)/libllama.*.v*.so) $(LIB)/libllama.so)) -Wl,-rpath,'$$ORIGIN'

$(LIB)/libmtmd.so: scripts/mtmd.mk $(LIB)/VARIANT
	$(MAKE) --no-print-directory $(SUBMAKE_J) -f scripts/mtmd.mk SRC=$(LLAMA_SRC) LIB=$(LIB) OBJ=$(NATIVE)/obj/mtmd

# ggml's RPC back end (models split across machines), loaded at run time like the CPU back ends.
$(LIB)/libggml-rpc.so: scripts/rpc.mk $(LIB)/VARIANT
	$(MAKE) --no-print-directory $(SUBMAKE_J) -f scripts/rpc.mk SRC=$(LLAMA_SRC) LIB=$(LIB) OBJ=$(NATIVE)/obj/rpc

# The vision shim links libmtmd, so only engines with a projector load either.
# It also holds miniaudio's length query (ffi/audio-length.c), asked before libmtmd decodes audio.
$(LIB)/libllamux-mtmd.so: ffi/mtmd-shim.c ffi/audio-length.c $(LIB)/libmtmd.so
	$(CC) -O2 -shared -fPIC -std=c11 -Wall -Werror -I$(LLAMA_SRC)/include -I$(LLAMA_SRC)/ggml/include -I$(LLAMA_SRC)/tools/mtmd -I$(LLAMA_SRC)/vendor \
	  ffi/mtmd-shim.c ffi/audio-length.c -o $@ -L$(LIB) -lmtmd -lm -lpthread -Wl,-rpath,'$$ORIGIN'

# llama.cpp compiled here from the pinned source bundle for this CPU (GGML_NATIVE; CUDA/Vulkan with
# LLAMUX_GPU=cuda|vulkan), replacing the prebuilt libraries in $(LIB) (those move to $(NATIVE)/lib-prebuilt);
# then the shim and libmtmd are relinked against it. `make native` keeps it: its VARIANT ends in -$(LLAMUX_GPU).
llama-from-source: node_modules/.installed
	@[ -f $(LLAMA_SRC)/include/llama.h ] || bash scripts/fetch-native.sh $(LLAMUX_GPU)
	LIB=$(LIB) bash scripts/build-llama-from-source.sh libs $(LLAMUX_GPU)
	@$(MAKE) --no-print-directory $(SUBMAKE_J) companions

# The CPU libraries compiled here for any x86-64 processor (one back end per CPU generation, chosen at run
# time, as in the prebuilt packages) into $(NATIVE)/lib-portable, with the shim, libmtmd and the RPC back end;
# .native/lib stays as it is. `make release` ships them. About 5 minutes on 2 cores.
PORTABLE_LIB := $(NATIVE)/lib-portable
llama-portable: node_modules/.installed
	@[ -f $(LLAMA_SRC)/include/llama.h ] || bash scripts/fetch-native.sh $(LLAMUX_GPU)
	LIB=$(PORTABLE_LIB) bash scripts/build-llama-from-source.sh portable-libs
	@$(MAKE) --no-print-directory $(SUBMAKE_J) LIB=$(PORTABLE_LIB) -o $(PORTABLE_LIB)/VARIANT companions

# llama-bench, llama-batched-bench, llama-server and llama-mtmd-cli from the same source, statically linked, into
# $(NATIVE)/tools (for make bench).
.PHONY: llama-tools
llama-tools: node_modules/.installed
	@[ -f $(LLAMA_SRC)/include/llama.h ] || bash scripts/fetch-native.sh $(LLAMUX_GPU)
	bash scripts/build-llama-from-source.sh tools

typecheck: setup
	node_modules/.bin/tsc --noEmit -p .
	node_modules/.bin/tsc --noEmit -p src/webui

run: setup
	$(BUN) scripts/make-run.ts

# The system tools the tests drive (tmux, Chromium, systemd, ...) are checked first, naming what to install.
# llama.cpp's llama-mtmd-cli, llama-server and llama-tts, built from the same source into $(NATIVE)/oracles,
# are oracles of the audio, rerank and speech tests (minutes, once). One build makes all three: llama,
# ggml, common and mtmd are compiled once for them.
ORACLE_TOOLS := $(NATIVE)/oracles/llama-mtmd-cli $(NATIVE)/oracles/llama-server $(NATIVE)/oracles/llama-tts
test: test-requirements setup $(ORACLE_TOOLS)
	@# the tests run a second library set when one is there (make llama-portable): its shim follows ffi/shim.c too
	@if [ -f $(PORTABLE_LIB)/VARIANT ]; then $(MAKE) --no-print-directory LIB=$(PORTABLE_LIB) -o $(PORTABLE_LIB)/VARIANT companions; fi
	$(BUN) scripts/run-tests.ts

oracle-tools: $(ORACLE_TOOLS)

$(ORACLE_TOOLS) &: | fetched
	bash scripts/build-llama-from-source.sh oracles

test-requirements:
	@bash scripts/test-requirements.sh

binary: setup
	$(BUN) scripts/build-binary.ts

# dist/llamux-<version>-linux-x64 (CPU), plus -cuda / -vulkan with RELEASE_VARIANTS="cpu cuda vulkan"
# (each from its own .native/variants/<gpu>/lib), and dist/SHA256SUMS. The CPU executable embeds the
# portable libraries compiled here (make llama-portable); RELEASE_LIBS=prebuilt embeds .native/lib's instead.
RELEASE_VARIANTS ?= cpu
RELEASE_LIBS ?= portable
release: setup
	RELEASE_VARIANTS="$(RELEASE_VARIANTS)" RELEASE_LIBS="$(RELEASE_LIBS)" $(BUN) scripts/release.ts

# The SDK as an npm package, dist/npm/llamux-<version>.tgz: JavaScript and .d.ts types, "llamux" (in process,
# Bun) and "llamux/remote" (Node 20+, browsers); llama.cpp's libraries come from its @node-llama-cpp dependency.
package: setup
	$(BUN) scripts/package.ts

# An OCI image of profile b with vLLM's container interface (LLAMUX_GPU=cuda: of the CUDA executable),
# built offline from the executable and Debian's packages: container/Containerfile.
# (The CUDA executable comes from its own library directory; .native/lib stays as it is.)
image: node_modules/.installed
	LLAMUX_GPU=$(LLAMUX_GPU) bash scripts/image/build-image.sh

# make bench QUICK=1: issue 41's table on both shapes, under 15 minutes on 2 quiet cores (scripts/bench.ts --quick);
# BENCH_ARGS="--only agents ..." passes options (bun scripts/bench.ts --help lists them).
bench: setup
	$(BUN) scripts/bench.ts $(if $(QUICK),--quick) $(BENCH_ARGS)

# The GPU check (scripts/gpu-check.sh): `make gpu-pack` here gathers what a GPU machine without network needs
# (.gpu-check/, under 60 MiB with the checkout); `make gpu-check` there builds llama.cpp for its GPU, runs the
# GPU-path tests and the benchmarks beside llama-server, and writes docs/benchmarks/gpu-<date>.md.
# `make gpu-check GPU_CHECK_ARGS=--dry-run` does the same on the CPU. Neither needs `make setup`.
gpu-pack:
	bash scripts/gpu-check.sh pack

gpu-check:
	bash scripts/gpu-check.sh run $(GPU_CHECK_ARGS)

models: setup
	$(BUN) scripts/gen-models.ts

clean:
	rm -rf $(NATIVE) dist node_modules/.installed
