#!/usr/bin/env bash
# The whole GPU check in one run, for a machine with an NVIDIA GPU (H100/H200: sm_90) and no network.
#
#   scripts/gpu-check.sh pack
#       Here, with network and a set-up checkout: writes .gpu-check/ (git-ignored), everything the run needs
#       that is not in git: Bun (xz), the pinned llama.cpp source (xz, without its docs, models and .git) and
#       the runtime npm packages (xz). Refuses to leave more than 60 MiB, so that the checkout travels whole
#       to a machine that takes 64 MiB.
#   scripts/gpu-check.sh run [--dry-run] [--out DIR]
#       There: unpacks .gpu-check/ where the checkout lacks Bun, the source or node_modules; builds llama.cpp's
#       shared libraries with CUDA for CUDA_ARCHS (default 90) and, in the same build tree, llama-server,
#       llama-bench and llama-batched-bench linked to the very same libraries (the CUDA kernels compile once);
#       builds llamux's shim and libmtmd beside them; generates the benchmark models; checks that the engine
#       offloads to the GPU and that the engine and server tests pass on these libraries; then runs the engine
#       and whole-server benchmarks beside llama-server and llama-bench. The report goes to DIR (default
#       docs/benchmarks), as gpu-<date>.md with the raw log beside it.
#       --dry-run does all of it on the CPU (no CUDA, one run per measurement, the tiny models): it checks the
#       script itself on a machine without a GPU, and writes gpu-dry-run-<date>.md.
#
# Env: JOBS (compile jobs, default: cores), CUDA_ARCHS (default 90), GPU_CHECK_TESTS (test files to run on the
# GPU libraries, default below), GPU_CHECK_THREADS (CPU threads for both servers, default 8).
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=.gpu-check
die() { echo "gpu-check: $*" >&2; exit 1; }
say() { echo "gpu-check [$(date +%H:%M:%S)] $*" >&2; }

pack() {
  [ -f .native/llama.cpp/include/llama.h ] || die "no llama.cpp source in .native/llama.cpp: run make first"
  [ -x node_modules/.bin/bun ] || die "no Bun in node_modules: run make first"
  rm -rf "$bundle" && mkdir -p "$bundle"
  say "Bun"
  xz -T0 -6 -c "$(readlink -f node_modules/.bin/bun)" > "$bundle/bun.xz"
  say "llama.cpp source"
  # What CMake needs for the libraries, llama-server and the benchmark tools; the patches llamux applies.
  tar -C .native/llama.cpp --exclude='*.gguf' -cf - CMakeLists.txt cmake common ggml include src tools vendor \
    licenses LICENSE llamux-patches examples tests benches | xz -T0 -6 > "$bundle/llama-src.tar.xz"
  say "runtime npm packages"
  npm ls --omit=dev --all --parseable 2>/dev/null | sed "s|^$PWD/||" | grep '^node_modules/' \
    | tar -cf - -T - | xz -T0 -6 > "$bundle/node-modules.tar.xz"
  local total
  total=$(( $(du -sb "$bundle" | cut -f1) + $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) ))
  say "bundle: $(du -sh "$bundle" | cut -f1); with the tracked files $((total / 1048576)) MiB"
  [ "$total" -le $((60 * 1048576)) ] || die "the bundle and the checkout come to more than 60 MiB"
}

unpack() {
  if [ ! -x node_modules/.bin/bun ] && ! command -v bun >/dev/null; then
    [ -f "$bundle/bun.xz" ] || die "no Bun here and no $bundle/bun.xz: run 'scripts/gpu-check.sh pack' where there is network"
    mkdir -p "$bundle/bin" && xz -dc "$bundle/bun.xz" > "$bundle/bin/bun" && chmod +x "$bundle/bin/bun"
  fi
  if [ ! -f .native/llama.cpp/include/llama.h ]; then
    [ -f "$bundle/llama-src.tar.xz" ] || die "no llama.cpp source and no $bundle/llama-src.tar.xz"
    mkdir -p .native/llama.cpp && xz -dc "$bundle/llama-src.tar.xz" | tar -C .native/llama.cpp -xf -
  fi
  if [ ! -d node_modules/hono ]; then
    [ -f "$bundle/node-modules.tar.xz" ] || die "no node_modules and no $bundle/node-modules.tar.xz"
    xz -dc "$bundle/node-modules.tar.xz" | tar -xf -
  fi
}

bun_path() {
  if [ -x node_modules/.bin/bun ]; then echo "$PWD/node_modules/.bin/bun"
  elif [ -x "$bundle/bin/bun" ]; then echo "$PWD/$bundle/bin/bun"
  else command -v bun; fi
}

run() {
  local dry=0 out=docs/benchmarks
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) dry=1 ;;
      --out) out="$2"; shift ;;
      -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  local started=$SECONDS date gpu lib tag
  date=$(date -u +%Y-%m-%d)
  unpack
  local bun; bun=$(bun_path)
  mkdir -p "$out"
  if [ $dry = 1 ]; then
    gpu=cpu tag="gpu-dry-run-$date"
    # Beside .native/lib, which stays as it is here.
    lib=.native/lib-gpu-check
  else
    command -v nvidia-smi >/dev/null || die "no nvidia-smi: is this a GPU machine? (--dry-run checks the script on a CPU)"
    command -v nvcc >/dev/null || die "no nvcc: the CUDA toolkit is needed to build llama.cpp for this GPU"
    gpu=cuda tag="gpu-$date"
    # A fresh machine has no prebuilt set: the CUDA build is the one llamux loads by default.
    lib=.native/lib
  fi
  local log="$out/$tag.log" report="$out/$tag.md"
  : > "$log"
  exec > >(tee -a "$log") 2>&1

  say "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  [ $dry = 1 ] || nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  [ $dry = 1 ] || nvcc --version | tail -2

  say "building llama.cpp ($gpu) with llama-server and the benchmark tools in one tree"
  CUDA_ARCHS="${CUDA_ARCHS:-90}" LIB="$lib" bash scripts/build-llama-from-source.sh libs-and-tools "$gpu"
  make --no-print-directory LIB="$lib" -o "$lib/VARIANT" companions
  say "built in $((SECONDS - started)) s: $(cat "$lib/VARIANT")"

  local models=(tiny-llama tiny-lfm2)
  [ $dry = 1 ] || models+=(lfm2-350m-q4_0 llama-1b-q4_0)
  say "models: ${models[*]}"
  "$bun" scripts/gen-models.ts "${models[@]}"

  say "where the engine runs"
  LLAMUX_LIB_DIR="$lib" "$bun" src/main.ts doctor || true

  # Engine and server tests that need nothing but the runtime packages, on these libraries.
  local tests="${GPU_CHECK_TESTS:-test/ffi/context.test.ts test/engine/engine-process.test.ts test/engine/speculative.test.ts test/server/openai/openai-e2e.test.ts}"
  say "tests on $lib: $tests"
  local file
  for file in $tests; do [ -f "$file" ] || die "no test file $file"; done
  local test_status=0
  # shellcheck disable=SC2086
  LLAMUX_LIB_DIR="$lib" "$bun" test --timeout=120000 $tests || test_status=$?

  say "benchmarks beside llama-server and llama-bench from the same build"
  # llamux from the checkout on the GPU build (the executables embed CPU libraries)
  local bench_args=(--only engine,server --libs source --llamux checkout --out "$out/.bench-$tag")
  if [ $dry = 1 ]; then
    # the tiny models stand in for the benchmark shapes; a busy machine is measured anyway
    bench_args+=(--quick --threads 2 --max-foreign-cpu 1 --model-lfm2 .models/tiny-lfm2.gguf --model-llama .models/tiny-llama.gguf)
  else
    bench_args+=(--runs 3 --threads "${GPU_CHECK_THREADS:-8}")
  fi
  local bench_status=0
  LLAMUX_TOOLS_DIR="$lib" "$bun" scripts/bench.ts "${bench_args[@]}" || bench_status=$?

  {
    echo "# GPU check, $date$([ $dry = 1 ] && echo ' (dry run on the CPU)')"
    echo
    echo "\`scripts/gpu-check.sh run$([ $dry = 1 ] && echo ' --dry-run')\`: llama.cpp built here ($(cat "$lib/VARIANT")), llamux and"
    echo "llama-server/llama-bench on the same libraries. Whole run: $((SECONDS - started)) s."
    echo "Tests on these libraries: $([ $test_status = 0 ] && echo passed || echo "FAILED (status $test_status)")."
    echo "Benchmark: $([ $bench_status = 0 ] && echo done || echo "FAILED (status $bench_status)"). Log: $(basename "$log")."
    echo
    cat "$out/.bench-$tag"/*.md 2>/dev/null || echo "(no benchmark report)"
  } > "$report"
  rm -rf "$out/.bench-$tag"
  say "report: $report ($((SECONDS - started)) s)"
  [ $test_status = 0 ] && [ $bench_status = 0 ]
}

case "${1:-}" in
  pack) pack ;;
  run) shift; run "$@" ;;
  -h|--help|"") sed -n '2,24p' "$0"; [ -n "${1:-}" ] ;;
  *) die "unknown command '$1' (pack | run [--dry-run] [--out DIR])" ;;
esac
