# llamux build. Targets are the interface: make (set-up + build), make run, make test, make binary, make bench.
# LLAMUX_GPU=cpu|cuda|vulkan picks the prebuilt llama.cpp variant (cpu by default).

LLAMUX_GPU ?= cpu
BUN        := node_modules/.bin/bun
NATIVE     := .native
LIB        := $(NATIVE)/lib
LLAMA_SRC  := $(NATIVE)/llama.cpp
CC         ?= cc

.PHONY: all setup native run test test-unit test-e2e binary bench models clean llama-from-source typecheck

all: setup

setup: node_modules/.installed native

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@$(BUN) --version >/dev/null || node node_modules/bun/install.js
	@touch $@

# Prebuilt libraries + source bundle; redone when the pins or the GPU variant change.
$(LIB)/VARIANT: scripts/native-packages.json scripts/fetch-native.sh
	bash scripts/fetch-native.sh $(LLAMUX_GPU)

native: node_modules/.installed
	@if [ ! -f $(LIB)/VARIANT ] || ! grep -q -- "-$(LLAMUX_GPU)$$" $(LIB)/VARIANT; then bash scripts/fetch-native.sh $(LLAMUX_GPU); fi
	@$(MAKE) --no-print-directory $(LIB)/libllamux-shim.so $(LIB)/libmtmd.so

$(LIB)/libllamux-shim.so: ffi/shim.c $(LIB)/VARIANT
	$(CC) -O2 -shared -fPIC -std=c11 -Wall -Werror -I$(LLAMA_SRC)/include -I$(LLAMA_SRC)/ggml/include \
	  ffi/shim.c -o $@ -L$(LIB) -l:$(notdir $(firstword $(wildcard $(LIB)/libllama.v*.so) $(LIB)/libllama.so)) -Wl,-rpath,'$$ORIGIN'

$(LIB)/libmtmd.so: scripts/mtmd.mk $(LIB)/VARIANT
	$(MAKE) --no-print-directory -f scripts/mtmd.mk SRC=$(LLAMA_SRC) LIB=$(LIB) OBJ=$(NATIVE)/obj/mtmd

typecheck: setup
	node_modules/.bin/tsc --noEmit -p .

run: setup
	$(BUN) scripts/make-run.ts

test: setup
	$(BUN) scripts/run-tests.ts

binary: setup
	$(BUN) scripts/build-binary.ts

bench: setup
	$(BUN) scripts/bench.ts

models: setup
	$(BUN) scripts/gen-models.ts

clean:
	rm -rf $(NATIVE) dist node_modules/.installed
