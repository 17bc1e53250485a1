#!/usr/bin/env bash
# Puts llama.cpp's prebuilt libraries for this platform and GPU variant into .native/lib and clones the
# matching source out of node-llama-cpp's git bundle into .native/llama.cpp.
# Usage: scripts/fetch-native.sh <cpu|cuda|vulkan>
# LIB=DIR puts the libraries there instead (make release keeps one directory per GPU variant).
# Tarballs come from npm by exact version and are checked against the integrity pinned in
# scripts/native-packages.json; only their files are used (no install scripts, no JavaScript).
set -euo pipefail
cd "$(dirname "$0")/.."
gpu="${1:-cpu}"
pins=scripts/native-packages.json
native=.native
pkgdir="$native/packages"
lib="${LIB:-$native/lib}"
mkdir -p "$pkgdir"

pin() { node -e "const p=require('./$pins');console.log(eval('p.'+process.argv[1]))" "$1"; }
version=$(pin version)

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  Darwin-*) echo "macOS: the prebuilt Metal package lags the pinned llama.cpp; run 'make llama-from-source'" >&2; exit 2 ;;
  *) echo "unsupported platform $(uname -s)-$(uname -m); try 'make llama-from-source'" >&2; exit 2 ;;
esac
variant="$platform-$gpu"

# fetch NAME INTEGRITY -> path of the verified tarball
fetch() {
  local name="$1" integrity="$2" file="$pkgdir/$(echo "$1" | tr -d @ | tr / -)-$version.tgz"
  if [ ! -f "$file" ]; then
    echo "fetching $name@$version" >&2
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
    mv "$tmp"/*.tgz "$file.part" && rm -rf "$tmp"
    local actual="sha512-$(openssl dgst -sha512 -binary "$file.part" | base64 -w0)"
    if [ "$actual" != "$integrity" ]; then
      echo "integrity mismatch for $name@$version: expected $integrity, got $actual" >&2
      rm -f "$file.part"; exit 1
    fi
    mv "$file.part" "$file"
  fi
  echo "$file"
}

# prebuilt libraries of the variant
count=$(node -e "const p=require('./$pins');const v=p.prebuilt['$variant'];if(!v){process.exit(3)};console.log(v.length)") || {
  echo "no prebuilt package for $variant (LLAMUX_GPU=$gpu); use 'make llama-from-source'" >&2; exit 2; }
rm -rf "$lib.part" && mkdir -p "$lib.part"
for i in $(seq 0 $((count - 1))); do
  name=$(pin "prebuilt['$variant'][$i].name"); integrity=$(pin "prebuilt['$variant'][$i].integrity")
  tgz=$(fetch "$name" "$integrity")
  tmp=$(mktemp -d); tar xzf "$tgz" -C "$tmp"
  find "$tmp/package/bins" \( -name '*.so' -o -name '*.so.*' -o -name '*.dylib' \) -exec cp -a {} "$lib.part/" \;
  rm -rf "$tmp"
done
# keep shim and mtmd built earlier for the same variant only if they link to the same libraries
rm -rf "$lib" && mv "$lib.part" "$lib"
echo "$variant" > "$lib/VARIANT"

# source bundle
if [ ! -f "$native/llama.cpp/include/llama.h" ]; then
  tgz=$(fetch node-llama-cpp "$(pin source.integrity)")
  tmp=$(mktemp -d); tar xzf "$tgz" -C "$tmp" package/llama/gitRelease.bundle
  rm -rf "$native/llama.cpp"
  git clone --quiet "$tmp/package/llama/gitRelease.bundle" "$native/llama.cpp" 2>/dev/null
  # llamux --version names the pinned commit: a bundle of another commit means the pin is out of date.
  commit=$(git -C "$native/llama.cpp" rev-parse HEAD)
  if [ "$commit" != "$(pin llamaCppCommit)" ]; then
    echo "the source bundle is at commit $commit, scripts/native-packages.json pins $(pin llamaCppCommit): update llamaCppCommit" >&2
    rm -rf "$native/llama.cpp" "$tmp"; exit 1
  fi
  mkdir -p "$native/llama.cpp/llamux-patches"
  tar xzf "$tgz" -C "$tmp" package/llama/patches && cp "$tmp"/package/llama/patches/* "$native/llama.cpp/llamux-patches/" 2>/dev/null || true
  rm -rf "$tmp"
fi
echo "llama.cpp $(pin llamaCppRelease) ($variant) ready in $lib" >&2
