#!/usr/bin/env bash
# The base images the Dockerfile names, made on this machine when no registry can be reached:
# docker.io/library/debian:bookworm-slim (a minbase Debian bookworm from the configured mirror,
# stripped like the official slim image) and docker.io/library/rust:<RUST_VERSION>-bookworm (that
# rootfs with a C toolchain and this machine's Rust toolchain, laid out as the official image has
# it). Both go into local containers storage under the real names, so the real Dockerfile builds
# unchanged with `buildah bud --pull=never`.
#
# What only CI needs lives in the rust stand-in, never in the Dockerfile: this machine's CA bundle
# (a TLS-inspecting proxy may stand between cargo and crates.io) and its cargo configuration
# (a registry mirror, if one is configured).
#
# Reuses an image that is present and was made by this recipe (label signupd.ci.stand-in); remakes
# it when the recipe changed. A debian image without the label (pulled from a registry, say) is
# kept; a rust image without it is replaced, since it lacks this machine's CAs and cargo setup. Runs as root, non-interactively; installs buildah, podman and
# mmdebstrap when missing.
#
#   bash tests/container/stand-ins.sh          # the host's debian and rust images
#   bash tests/container/stand-ins.sh arm64    # docker.io/arm64v8/debian:bookworm-slim (armhf:
#                                              # arm32v7/), for .ci/container cross
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export DEBIAN_FRONTEND=noninteractive

# The machine cache .ci/run keeps (CI_CACHE_DIR), beside its build directory and tool builds.
CACHE=${CI_CACHE_DIR:-/var/cache/signupd-ci}
DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim
# The toolchain the Dockerfile's ARG RUST_VERSION names (Cargo.toml's rust-version).
RUST_VERSION=$(sed -n 's/^ARG RUST_VERSION=//p' Dockerfile)
RUST_IMAGE=docker.io/library/rust:${RUST_VERSION}-bookworm
# Bump when a recipe below changes: images with another value are remade, from a root file
# system made by this recipe (the cached tar is named by it, so an older recipe's is never reused).
RECIPE=4
ROOTFS_TAR=$CACHE/debian-bookworm-recipe$RECIPE.tar
# An ARM image (.ci/container cross) is built on the official image's per-architecture name,
# which a local store can hold beside the host's: docker.io/arm64v8/debian:bookworm-slim, from a
# root file system of that architecture (mmdebstrap runs its maintainer scripts under qemu-user).
# Debian architecture → that repository, and the image's platform as OCI names it.
declare -A PER_ARCH_REPOSITORY=([arm64]=arm64v8 [armhf]=arm32v7)
declare -A PER_ARCH_PLATFORM=([arm64]="--arch arm64" [armhf]="--arch arm --variant v7")
BUILD_PACKAGES=(gcc libc6-dev make pkg-config ca-certificates)

install_tools() {
    local missing=()
    command -v buildah >/dev/null || missing+=(buildah)
    command -v podman >/dev/null || missing+=(podman)
    command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
    # mmdebstrap's check that the kernel runs a foreign architecture (an ARM root file system).
    command -v arch-test >/dev/null || missing+=(arch-test)
    # Rootless helpers are not needed as root, but podman's package recommends them and some
    # storage setups without native overlay need fuse-overlayfs.
    [[ -x /usr/bin/newuidmap ]] || missing+=(uidmap)
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "stand-ins: installing ${missing[*]}"
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" fuse-overlayfs >/dev/null
    fi
}

# The value of our label on IMAGE, empty when the image is missing or not ours.
stand_in_recipe() {
    buildah inspect --type image --format '{{index .OCIv1.Config.Labels "signupd.ci.stand-in"}}' "$1" 2>/dev/null || true
}

image_exists() {
    buildah inspect --type image "$1" >/dev/null 2>&1
}

# Whether IMAGE must be (re)made: missing, or ours from another recipe. With "--ours-only", also
# when it is not ours: the rust image must carry this machine's CAs and cargo configuration.
needs_making() {
    local image=$1 label
    image_exists "$image" || return 0
    label=$(stand_in_recipe "$image")
    if [[ ${2:-} == --ours-only ]]; then
        [[ $label != "$RECIPE" ]]
    else
        [[ -n $label && $label != "$RECIPE" ]]
    fi
}

# The first Debian mirror this machine's apt uses (deb822 or one-line sources), so mmdebstrap
# fetches from wherever apt here is allowed to.
debian_mirror() {
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)
    [[ -n $uri ]] || uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

debian_security_mirror() {
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep security | head -n1 || true)
    echo "${uri:-http://deb.debian.org/debian-security}"
}

# A minbase bookworm as a tar, cached: the slim image's contents (no docs, man pages, locales or
# apt lists), with the sources a container's apt-get needs.
# With a Debian architecture (arm64, armhf), that architecture's, in a tar of its own.
rootfs_tar() { # [ARCH]
    echo "${ROOTFS_TAR%.tar}${1:+-$1}.tar"
}

make_rootfs_tar() { # [ARCH]
    local arch=${1:-} tar
    tar=$(rootfs_tar "$arch")
    if [[ -f $tar && -s $tar ]]; then
        echo "stand-ins: reusing $tar"
        return
    fi
    # mmdebstrap picks the output format by the name's extension: keep .tar last.
    local mirror security partial=${tar%.tar}.partial.tar
    mirror=$(debian_mirror)
    security=$(debian_security_mirror)
    echo "stand-ins: mmdebstrap bookworm${arch:+ ($arch)} from $mirror"
    mkdir -p "$CACHE"
    # The hook's $1 is the new root, expanded by mmdebstrap, not here.
    # shellcheck disable=SC2016
    # The merged-usr hook sets up the merged /usr itself; without it mmdebstrap 1.3 installs
    # usrmerge, which drags in perl (50 MB the slim image does not have).
    mmdebstrap --variant=minbase --quiet ${arch:+--architectures=$arch} \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log' \
        bookworm "$partial" \
        "deb $mirror bookworm main" \
        "deb $mirror bookworm-updates main" \
        "deb $security bookworm-security main"
    mv "$partial" "$tar"
}

# With a Debian architecture (arm64, armhf), that architecture's debian:bookworm-slim under its
# per-architecture name; the kernel must then run its binaries (.ci/cross binfmt).
make_debian() { # [ARCH]
    local arch=${1:-} image=$DEBIAN_IMAGE
    [[ -z $arch ]] || image=docker.io/${PER_ARCH_REPOSITORY[$arch]}/debian:bookworm-slim
    if ! needs_making "$image"; then
        echo "stand-ins: reusing $image"
        return
    fi
    make_rootfs_tar "$arch"
    echo "stand-ins: importing $image"
    # shellcheck disable=SC2086 # the platform's options, split
    podman import --quiet ${arch:+${PER_ARCH_PLATFORM[$arch]}} \
        --change 'CMD ["bash"]' \
        --change "LABEL signupd.ci.stand-in=$RECIPE" \
        "$(rootfs_tar "$arch")" "$image" >/dev/null
}

# This machine's toolchain for RUST_VERSION (1.95 matches 1.95.0-<host triple>), resolved: rustup
# may keep it as a symbolic link to stable-<host triple>. Its rustc must say that version.
host_toolchain() {
    local home dir version
    home=$(rustup show home 2>/dev/null || echo "$HOME/.rustup")
    for dir in "$home"/toolchains/"$RUST_VERSION"-* "$home"/toolchains/"$RUST_VERSION".[0-9]*-*; do
        [[ -x $dir/bin/cargo ]] || continue
        version=$("$dir/bin/rustc" --version)
        if [[ $version == "rustc $RUST_VERSION."* || $version == "rustc $RUST_VERSION "* ]]; then
            echo "$dir"
            return
        fi
    done
    echo "stand-ins: no Rust $RUST_VERSION toolchain in $home/toolchains (rustup toolchain install $RUST_VERSION)" >&2
    return 1
}

make_rust() {
    if ! needs_making "$RUST_IMAGE" --ours-only; then
        echo "stand-ins: reusing $RUST_IMAGE"
        return
    fi
    local toolchain name real rustup_bin ctr mnt
    toolchain=$(host_toolchain)
    name=$(basename "$toolchain")
    real=$(readlink -f "$toolchain")
    rustup_bin=$(command -v rustup)
    echo "stand-ins: building $RUST_IMAGE from $DEBIAN_IMAGE and $name"
    ctr=$(buildah from --pull=never "$DEBIAN_IMAGE")
    # Removed however this function ends; the image is committed only at the end.
    trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' RETURN
    buildah run --isolation chroot "$ctr" -- sh -c \
        "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${BUILD_PACKAGES[*]} >/dev/null \
         && rm -rf /var/lib/apt/lists/*"
    mnt=$(buildah mount "$ctr")
    mkdir -p "$mnt/usr/local/rustup/toolchains" "$mnt/usr/local/cargo/bin"
    # The toolchain without its offline docs (hundreds of MB no build reads).
    mkdir "$mnt/usr/local/rustup/toolchains/$name"
    tar -C "$real" --exclude=./share/doc -cf - . | tar -C "$mnt/usr/local/rustup/toolchains/$name" -xf -
    printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\n' "$name" \
        > "$mnt/usr/local/rustup/settings.toml"
    # The update hash tells rustup the channel's state; without one it still runs the toolchain.
    local home hash
    home=$(dirname "$(dirname "$toolchain")")
    for hash in "$home/update-hashes/$name" "$home/update-hashes/$(basename "$real")"; do
        if [[ -f $hash ]]; then
            install -D -m 0644 "$hash" "$mnt/usr/local/rustup/update-hashes/$name"
            break
        fi
    done
    install -m 0755 "$rustup_bin" "$mnt/usr/local/cargo/bin/rustup"
    local proxy
    for proxy in cargo rustc rustdoc; do
        ln -sf rustup "$mnt/usr/local/cargo/bin/$proxy"
    done
    # CI plumbing: the CAs this machine trusts (cargo reaches crates.io through whatever proxy
    # the host's own cargo does), and its cargo configuration when it has one.
    install -m 0644 /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/ca-certificates.crt"
    local cargo_home=${CARGO_HOME:-$HOME/.cargo}
    if [[ -f $cargo_home/config.toml ]]; then
        install -m 0644 "$cargo_home/config.toml" "$mnt/usr/local/cargo/config.toml"
    fi
    buildah umount "$ctr" >/dev/null
    buildah config \
        --env RUSTUP_HOME=/usr/local/rustup \
        --env CARGO_HOME=/usr/local/cargo \
        --env PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env RUST_VERSION="$RUST_VERSION" \
        --label signupd.ci.stand-in="$RECIPE" \
        --cmd bash "$ctr"
    buildah commit --quiet --format docker --rm "$ctr" "$RUST_IMAGE" >/dev/null
    trap - RETURN
}

main() {
    install_tools
    make_debian
    make_rust
    buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E "debian:bookworm-slim|rust:$RUST_VERSION-bookworm"
}

# Sourced (to try one step by hand), it only defines the functions.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    case "${1:-}" in
        "") main ;;
        arm64 | armhf)
            install_tools
            make_debian "$1"
            ;;
        *) echo "usage: bash tests/container/stand-ins.sh [arm64 | armhf]" >&2; exit 2 ;;
    esac
fi
