#!/usr/bin/env bash
# What the build and `make test` need from the system, and the Debian package that provides each: the
# one list the README's requirements, `make test`'s check and .ci/run's installer all follow.
#   scripts/test-requirements.sh            says what is missing and how to install it; exit 1 if anything is
#   scripts/test-requirements.sh --missing  prints the missing packages (one line, space-separated), exit 0
#   scripts/test-requirements.sh --missing-for-build  the same, of what `make` and the oracle tools' build
#                                           need (.ci/run installs the tests' own while it builds)
#   scripts/test-requirements.sh --list     prints every package of the list (one line)
set -euo pipefail

# need KIND WHAT PACKAGE WHY: KIND "command" looks WHAT up in PATH, "file" tests that WHAT exists.
# What `make` and the oracle tools' build need, then what the tests themselves drive.
build_requirements=(
  "command make build-essential the build"
  "command cc build-essential the C shim and libmtmd"
  "command g++ build-essential libmtmd"
  "command readelf binutils make binary (library dependencies)"
  "command cmake cmake make release (llama.cpp's portable CPU libraries, built from the pinned source)"
  "command git git the llama.cpp source bundle"
  "command openssl openssl checksums of the npm tarballs"
  "command tar tar the npm tarballs"
  "command gzip gzip the npm tarballs"
  "command node nodejs npm and the set-up scripts"
  "command npm npm the npm packages (Bun comes from npm)"
  "file /etc/ssl/certs/ca-certificates.crt ca-certificates HTTPS to the npm registry"
)
test_requirements=(
  "command tmux tmux the interactive run tests (a real terminal)"
  "command systemd-analyze systemd the service test (verifies the unit install-service writes)"
  "file /usr/bin/chromium chromium the web UI tests (a real browser)"
  "command ip iproute2 the RPC test (two network namespaces joined by a veth pair)"
  "command podman podman the container image test (builds and runs the image)"
  "command runc runc podman's runtime for the image test (crun fails on hybrid cgroups)"
  "command catatonit catatonit the pause process of the pods podman kube play starts (the generate kube test)"
  "file /usr/sbin/haproxy haproxy the HAProxy recipe test (session affinity over two replicas)"
  "command espeak-ng espeak-ng the audio tests (a real spoken WAV)"
  "command sox sox the audio tests (conversions, a long file)"
  "command lame lame the audio tests (an MP3 to decode)"
  "command ffmpeg ffmpeg the speech tests (every response_format decoded back to samples)"
)

requirements=("${build_requirements[@]}" "${test_requirements[@]}")
[ "${1:-}" = --missing-for-build ] && requirements=("${build_requirements[@]}")

missing=()
all=()
reasons=()
for entry in "${requirements[@]}"; do
  read -r kind what package why <<<"$entry"
  all+=("$package")
  present=1
  if [ "$kind" = command ]; then command -v "$what" >/dev/null 2>&1 || present=0; else [ -e "$what" ] || present=0; fi
  if [ "$present" = 0 ]; then
    missing+=("$package")
    reasons+=("  $what (Debian package $package): $why")
  fi
done

# the packages once each, in order, on one line (bash alone: the check must run where little else does)
unique() {
  local seen=" " out=() package
  for package in "$@"; do [[ "$seen" == *" $package "* ]] || { seen+="$package "; out+=("$package"); }; done
  echo "${out[*]}"
}

case "${1:-}" in
  --list) unique "${all[@]}"; exit 0 ;;
  --missing|--missing-for-build) unique ${missing[@]+"${missing[@]}"}; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--missing|--missing-for-build|--list]" >&2; exit 2 ;;
esac

[ "${#missing[@]}" -eq 0 ] && exit 0
{
  echo "make test needs what this machine lacks:"
  printf '%s\n' "${reasons[@]}"
  echo "On Debian, install it with:"
  echo "  sudo apt-get install -y $(unique "${missing[@]}")"
} >&2
exit 1
