#!/usr/bin/env bash
# Builds llama.cpp from the pinned source bundle (.native/llama.cpp) with cmake, tuned for this machine
# (GGML_NATIVE=ON), instead of using the prebuilt npm libraries.
#
#   scripts/build-llama-from-source.sh libs [cpu|cuda|vulkan]
#       shared libllama/libggml* into the library dir (default .native/lib; env LIB overrides), replacing
#       the prebuilt ones; VARIANT becomes "<platform>-source-<gpu>". The prebuilt set that was there is
#       kept in .native/lib-prebuilt so that `make bench` can compare both builds.
#       The caller (make llama-from-source) then rebuilds libllamux-shim.so and libmtmd.so against it.
#   scripts/build-llama-from-source.sh libs-and-tools [cpu|cuda|vulkan]
#       as `libs`, and in the same build tree llama-server, llama-bench and llama-batched-bench linked to the
#       very same shared libraries, installed beside them in the library dir (they find them through $ORIGIN).
#       For the GPU check (scripts/gpu-check.sh): the CUDA kernels are compiled once, not once per build.
#   scripts/build-llama-from-source.sh portable-libs
#       the CPU libraries the way the prebuilt packages are laid out, but compiled here: GGML_NATIVE off,
#       one libggml-cpu-<variant>.so per x86 generation (GGML_CPU_ALL_VARIANTS), ggml picking the best one
#       at run time, so the set runs on any x86-64 processor and can go into a release executable. Into
#       .native/lib-portable (env LIB overrides); VARIANT "<platform>-portable-cpu". Leaves .native/lib alone.
#   scripts/build-llama-from-source.sh tools [TOOL ...]
#       llama-bench, llama-batched-bench, llama-server and llama-mtmd-cli (or only the named ones), statically
#       linked, into .native/tools: the yardsticks of `make bench` (the engine against the first two, the
#       whole server against llama-server).
#   scripts/build-llama-from-source.sh oracles [TOOL ...]
#       llama-mtmd-cli, llama-server and llama-tts (or only the named ones), statically linked, into
#       .native/oracles: what the audio, rerank and speech tests compare llamux with. As `tools`, but
#       with OpenMP: llama-tts runs its projector on 4 threads whatever -t says, and on 2 cores ggml's
#       own barriers spin until the OS runs the thread they wait for, a frame then takes seconds to a
#       minute; OpenMP's barriers sleep when there are more threads than cores. The threads split the work
#       as in the `tools` build, so the results are the same.
#
# Env: JOBS (parallel compile jobs, default: number of cores), CUDA_ARCHS (CMAKE_CUDA_ARCHITECTURES,
# default: llama.cpp's own list, since "native" needs a visible GPU at build time), CMAKE_EXTRA_FLAGS (more
# -D options for both builds, appended last so they win, e.g. "-DGGML_OPENMP=ON").
set -euo pipefail
cd "$(dirname "$0")/.."

native=.native
src="$native/llama.cpp"
jobs="${JOBS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu)}"

die() { echo "build-llama-from-source: $*" >&2; exit 1; }

[ -f "$src/include/llama.h" ] || die "no llama.cpp source in $src: run 'make native' (or scripts/fetch-native.sh) first"
command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake)"

# The prebuilt libraries were built with these patches; a source build must match them.
apply_patches() {
  local patch
  for patch in "$src"/llamux-patches/*.diff; do
    [ -f "$patch" ] || continue
    if git -C "$src" apply --reverse --check "$(realpath "$patch")" 2>/dev/null; then
      continue # already applied
    fi
    echo "applying $(basename "$patch")" >&2
    git -C "$src" apply "$(realpath "$patch")"
  done
}

platform() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo linux-x64 ;;
    Linux-aarch64) echo linux-arm64 ;;
    Darwin-arm64) echo mac-arm64 ;;
    Darwin-x86_64) echo mac-x64 ;;
    *) echo "$(uname -s | tr 'A-Z' 'a-z')-$(uname -m)" ;;
  esac
}

# Options shared by every build: nothing that is not needed.
common_flags=(
  -DCMAKE_BUILD_TYPE=Release
  -DLLAMA_CURL=OFF # deprecated in this release (prints a warning); kept so older pins do not pull in libcurl
  -DLLAMA_OPENSSL=OFF
  # ggml's own thread pool, as in the prebuilt packages (they do not link libgomp): source and prebuilt
  # libraries and the yardstick tools then differ only in CPU flags, not in how threads wait at barriers.
  -DGGML_OPENMP=OFF
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_APP=OFF
)
# The libs and tools builds are tuned for this CPU.
native_flags=(-DGGML_NATIVE=ON)
# No Intel AMX kernels unless LLAMUX_CPU_AMX=1: in this llama.cpp they crash (llama-bench -p 512 on a
# Q4_0 llama) or compute wrong results (hybrid models, several sequences per batch); see ffi/cpu-backends.ts.
# GGML_NATIVE compiles them whenever -march=native reports AMX, and explicit -mno-* flags override -march.
# (The portable build keeps its AMX variant, like the prebuilt packages: the engine leaves it unloaded.)
if [ "$(uname -m)" = x86_64 ] && [ "${LLAMUX_CPU_AMX:-}" != 1 ]; then
  no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  native_flags+=("-DCMAKE_C_FLAGS=$no_amx" "-DCMAKE_CXX_FLAGS=$no_amx")
fi

# Configures, builds and installs (into BUILD/install) llama.cpp's shared libraries with the given -D options
# besides the shared ones: build_shared BUILD [-DOPTION=VALUE ...]
build_shared() {
  local build="$1"; shift
  # The libraries find each other in their own directory, wherever it is moved.
  local origin='$ORIGIN'
  [ "$(uname -s)" = Darwin ] && origin='@loader_path'
  apply_patches
  # No versioned SONAMEs: plain libllama.so etc. without symlink chains, easy to copy and embed.
  cmake -S "$src" -B "$build" "${common_flags[@]}" "$@" \
    -DBUILD_SHARED_LIBS=ON \
    -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DCMAKE_PLATFORM_NO_VERSIONED_SONAME=ON \
    -DCMAKE_INSTALL_RPATH="$origin" -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
    -DCMAKE_INSTALL_PREFIX="$(realpath "$build")/install" ${CMAKE_EXTRA_FLAGS:-} >&2
  cmake --build "$build" -j "$jobs" >&2
  rm -rf "$build/install"
  cmake --install "$build" >&2
}

build_libs() {
  local gpu="$1" lib="${LIB:-$native/lib}" with_tools="${2:-}"
  local build="$native/build-source-$gpu"
  local gpu_flags=()
  case "$gpu" in
    cpu) ;;
    cuda) gpu_flags=(-DGGML_CUDA=ON)
          [ -n "${CUDA_ARCHS:-}" ] && gpu_flags+=("-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS") ;;
    vulkan) gpu_flags=(-DGGML_VULKAN=ON) ;;
    metal) gpu_flags=(-DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON) ;;
    *) die "unknown GPU variant '$gpu' (cpu|cuda|vulkan|metal)" ;;
  esac
  # GGML_NATIVE rules out GGML_BACKEND_DL, so the back ends (libggml-cpu.so, libggml-cuda.so, ...) are linked
  # into libggml and registered at start-up; the engine's ggml_backend_load_all_from_path then finds nothing
  # more to load (and stays silent in a Release build). The prebuilt per-CPU libggml-cpu-*.so must not sit
  # beside these, or they would register a second CPU back end: the directory is replaced as a whole below.
  if [ -n "$with_tools" ]; then
    build="$native/build-source-tools-$gpu"
    # Appended last, so they override build_shared's "no tools" options.
    CMAKE_EXTRA_FLAGS="-DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF ${CMAKE_EXTRA_FLAGS:-}" \
      build_shared "$build" "${native_flags[@]}" "${gpu_flags[@]}" -DGGML_BACKEND_DL=OFF
  else
    build_shared "$build" "${native_flags[@]}" "${gpu_flags[@]}" -DGGML_BACKEND_DL=OFF
  fi

  # The variant ends in the GPU name so that `make native`'s "-$(LLAMUX_GPU)$" check keeps this build.
  install_set "$build" "$lib" "$(platform)-source-$gpu"
  if [ -n "$with_tools" ]; then
    local tool
    for tool in llama-server llama-bench llama-batched-bench; do
      # installed with $ORIGIN as their library path; a tool without an install rule is taken from bin/
      local built="$build/install/bin/$tool"
      [ -x "$built" ] || built="$build/bin/$tool"
      [ -x "$built" ] || die "no $tool built in $build"
      cp "$built" "$lib/$tool"
    done
    echo "llama-server, llama-bench and llama-batched-bench on the same libraries in $lib" >&2
  fi
}

# Copies the libraries a build installed into a library directory, replacing what was there. A prebuilt set
# found there is kept in .native/lib-prebuilt, for `make bench` to compare builds.
install_set() {
  local build="$1" lib="$2" variant="$3"
  # Stage the new set beside the old one and swap directories, so no running process sees a half-written
  # library (copying over a mapped .so can crash it).
  local staged="$lib.part"
  rm -rf "$staged" && mkdir -p "$staged"
  find "$build/install" \( -name '*.so' -o -name '*.dylib' \) -exec cp {} "$staged/" \;
  [ -n "$(ls "$staged"/libllama.* 2>/dev/null)" ] || die "no libllama in $build/install"
  echo "$variant" > "$staged/VARIANT"
  git -C "$src" describe --tags --always 2>/dev/null > "$staged/SOURCE_REVISION" || true

  if [ -f "$lib/VARIANT" ] && ! grep -q -- "-source-\|-portable-" "$lib/VARIANT"; then
    rm -rf "$native/lib-prebuilt" && mv "$lib" "$native/lib-prebuilt"
    echo "kept the prebuilt libraries in $native/lib-prebuilt" >&2
  else
    rm -rf "$lib"
  fi
  mv "$staged" "$lib"
  echo "llama.cpp from source ($(cat "$lib/VARIANT")) installed in $lib" >&2
}

# The CPU libraries for any x86-64 (or arm64) processor: the prebuilt packages' layout, this machine's
# compiler. GGML_BACKEND_DL makes each CPU back end a module of its own (libggml-cpu-<variant>.so) that ggml
# loads and scores at run time (ffi/cpu-backends.ts keeps the AMX one out, as it does for the prebuilt set).
build_portable_libs() {
  local lib="${LIB:-$native/lib-portable}"
  local build="$native/build-portable-cpu"
  build_shared "$build" -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON
  ls "$build/install"/*/libggml-cpu-*.so >/dev/null 2>&1 || die "no CPU back-end modules (libggml-cpu-*.so) in $build/install"
  install_set "$build" "$lib" "$(platform)-portable-cpu"
}

# Static llama.cpp tools: build_tools BUILD OUT "DEFAULT TOOLS" "MORE -D OPTIONS" [TOOL ...]
build_tools() {
  local build="$1" out="$2" defaults="$3" options="$4"
  shift 4
  apply_patches
  # Static: the tools carry their own llama/ggml and do not depend on what is in .native/lib.
  # shellcheck disable=SC2086 # one word per option
  cmake -S "$src" -B "$build" "${common_flags[@]}" "${native_flags[@]}" \
    -DBUILD_SHARED_LIBS=OFF -DGGML_BACKEND_DL=OFF \
    -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF $options ${CMAKE_EXTRA_FLAGS:-} >&2
  local tools=("$@")
  # shellcheck disable=SC2206 # one word per tool
  [ ${#tools[@]} -gt 0 ] || tools=($defaults)
  cmake --build "$build" --target "${tools[@]}" -j "$jobs" >&2
  mkdir -p "$out"
  local tool
  for tool in "${tools[@]}"; do
    # Replace (new inode), not overwrite, in case a benchmark is running the old binary.
    cp "$build/bin/$tool" "$out/$tool.part" && mv "$out/$tool.part" "$out/$tool"
  done
  git -C "$src" describe --tags --always 2>/dev/null > "$out/SOURCE_REVISION" || true
  echo "${tools[*]} ready in $out" >&2
}

case "${1:-}" in
  libs) build_libs "${2:-cpu}" ;;
  libs-and-tools) build_libs "${2:-cpu}" with-tools ;;
  portable-libs) build_portable_libs ;;
  tools) shift; build_tools "$native/build-tools" "$native/tools" "llama-bench llama-batched-bench llama-server llama-mtmd-cli" "" "$@" ;;
  oracles) shift; build_tools "$native/build-oracles" "$native/oracles" "llama-mtmd-cli llama-server llama-tts" "-DGGML_OPENMP=ON" "$@" ;;
  *) echo "usage: $0 libs [cpu|cuda|vulkan] | libs-and-tools [cpu|cuda|vulkan] | portable-libs | tools [TOOL ...] | oracles [TOOL ...]" >&2; exit 2 ;;
esac
