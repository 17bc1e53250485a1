#!/usr/bin/env bash
# make image: builds llamux's profile-b OCI image offline. The root filesystem is the executable plus
# the files of the Debian packages it needs, taken from this machine's installation (no base image and
# no registry), then `podman build` (or `docker build`, or `buildah bud`) turns container/Containerfile
# into the image. LLAMUX_GPU=cuda builds the CUDA executable's image instead of the CPU one.
#   IMAGE_TAG     the image name (default llamux:<version>, with -cuda for the CUDA variant)
#   BUILD_FLAGS   extra flags for the builder (e.g. a runtime the machine needs)
set -euo pipefail
cd "$(dirname "$0")/../.."

gpu="${LLAMUX_GPU:-cpu}"
version=$(node -p 'require("./package.json").version')
work=dist/image-$gpu
packages=(libc6 libstdc++6 libgcc-s1 tzdata)

case "$gpu" in
  # The CPU image holds the release executable (the portable libraries unless RELEASE_LIBS=prebuilt).
  cpu)  make --no-print-directory LLAMUX_GPU=cpu release RELEASE_VARIANTS=cpu; exe="dist/llamux-$version-linux-x64"
        libdir=.native/lib-portable; [ "${RELEASE_LIBS:-portable}" = prebuilt ] && libdir=.native/lib
        tag="${IMAGE_TAG:-llamux:$version}" ;;
  cuda) make --no-print-directory LLAMUX_GPU=cpu release RELEASE_VARIANTS=cuda; exe="dist/llamux-$version-linux-x64-cuda"; libdir=.native/variants/cuda/lib; tag="${IMAGE_TAG:-llamux:$version-cuda}" ;;
  *)    echo "make image: LLAMUX_GPU must be cpu or cuda, got \"$gpu\"" >&2; exit 2 ;;
esac

builder=()
if command -v podman >/dev/null; then builder=(podman build --format docker)
elif command -v docker >/dev/null; then builder=(docker build)
elif command -v buildah >/dev/null; then builder=(buildah bud --format docker)
else echo "make image: needs podman, docker or buildah (Debian: apt-get install podman)" >&2; exit 1
fi

rm -rf "$work"
rootfs="$work/rootfs"
mkdir -p "$rootfs"/{usr/local/bin,etc/ssl/certs,tmp,root/.cache,home/llamux,opt/llamux} "$work/model-cache"
chmod 1777 "$rootfs/tmp"
chmod 755 "$rootfs/root"

# /lib, /lib64, /bin and /sbin are links into /usr on Debian: the same links, so paths under either work.
for link in lib lib64 bin sbin; do
  if [ -L "/$link" ]; then mkdir -p "$rootfs/$(readlink "/$link" | sed 's|^/||')"; cp -a "/$link" "$rootfs/"; fi
done
# The packages' files (no documentation), as installed here by Debian.
for package in "${packages[@]}"; do
  dpkg -L "$package" >/dev/null 2>&1 || { echo "make image: Debian package $package is not installed here" >&2; exit 1; }
done
dpkg -L "${packages[@]}" | grep -Ev '^/usr/share/(doc|man|lintian|locale|bug)(/|$)' | while read -r path; do
  if [ -f "$path" ] || [ -L "$path" ]; then echo "${path#/}"; fi
done | tar -C / --no-recursion -cf - -T - | tar -C "$rootfs" --keep-directory-symlink -xf -
# Anything else the executable or its libraries link to (for the CUDA variant: its runtime libraries are
# inside the executable; libcuda comes from the host through the NVIDIA container toolkit).
{ ldd "$exe"; for lib in "$libdir"/*.so*; do ldd "$lib" 2>/dev/null || true; done; } |
  awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | grep -v "^$(realpath "$libdir")" | sort -u | while read -r dep; do
    [ -e "$rootfs$dep" ] || { mkdir -p "$rootfs$(dirname "$dep")"; cp -L "$dep" "$rootfs$dep"; }
  done
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nllamux:x:1000:1000:llamux:/home/llamux:/usr/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nllamux:x:1000:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
cp "$exe" "$rootfs/usr/local/bin/llamux"
# The executable's libraries, extracted now rather than at every container start.
LLAMUX_CACHE_DIR="$rootfs/opt/llamux/libraries" "$rootfs/usr/local/bin/llamux" --version >/dev/null
chmod -R a+rX "$rootfs/opt/llamux"
cp container/Containerfile "$work/Containerfile"

echo "building $tag with ${builder[*]}" >&2
# shellcheck disable=SC2086 # BUILD_FLAGS is a list of flags
"${builder[@]}" ${BUILD_FLAGS:-} -t "$tag" -f "$work/Containerfile" "$work"
size=$("${builder[0]}" image inspect --format '{{.Size}}' "$tag" 2>/dev/null || echo 0)
echo "image $tag: $((size / 1024 / 1024)) MiB (rootfs $(du -sm "$rootfs" | cut -f1) MiB)"
