#!/usr/bin/env bash
# Release files with stable names, for an install script or a Proxmox/LXC helper that fetches by
# pattern:
#
#   dist/signupd-VERSION-TARGET.tar.gz   one directory signupd-VERSION-TARGET/ with the binary,
#                                        the systemd unit, the shipped and the example
#                                        configuration, the man page, the README, the guides
#                                        (docs/, which the README links to) and both licences
#   dist/SHA256SUMS                      sha256sum's lines for every tarball in dist/
#
#   bash packaging/release.sh                 # the host's: builds target/release/signupd first
#   bash packaging/release.sh TARGET...       # each TARGET's, e.g. all three:
#       x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf
#
# VERSION is Cargo.toml's; TARGET is a Rust target triple (x86_64-unknown-linux-gnu on the usual
# VPS, aarch64-unknown-linux-gnu on a 64-bit ARM machine, armv7-unknown-linux-gnueabihf on 32-bit
# Raspberry Pi OS; docs/install.md has the table from `uname -m`). A target other than the host's
# is cross-compiled by .ci/cross (which installs its toolchain where missing) into
# target/TARGET/release. The tarball is reproducible: sorted names, owner root, every mtime the
# last commit's time (SOURCE_DATE_EPOCH overrides it), gzip without a timestamp, so the same
# commit built the same way gives the same checksum. BUILD=0 packs the binaries already built
# (in target/release and target/TARGET/release, or under $CARGO_TARGET_DIR; the other targets'
# under $CROSS_TARGET_DIR when set, as CI keeps the ARM builds apart).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
host=$(rustc -vV | sed -n 's/^host: //p')
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("$host")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p dist
for target in "${targets[@]}"; do
    if [[ $target == "$host" ]]; then
        binary=${CARGO_TARGET_DIR:-target}/release/signupd
        [[ ${BUILD:-1} != 1 ]] || cargo build --release --locked --bin signupd
    else
        cross_dir=${CROSS_TARGET_DIR:-${CARGO_TARGET_DIR:-target}}
        binary=$cross_dir/$target/release/signupd
        [[ ${BUILD:-1} != 1 ]] || CARGO_TARGET_DIR=$cross_dir bash .ci/cross build "$target"
    fi
    name="signupd-$version-$target"
    root="$stage/$name"
    mkdir -p "$root/docs"
    install -m 0755 "$binary" "$root/signupd"
    install -m 0644 packaging/signupd.service packaging/signupd.8 config.example.toml README.md \
        LICENSE-MIT LICENSE-APACHE "$root/"
    install -m 0644 packaging/signupd.toml "$root/signupd.toml"
    install -m 0644 docs/* "$root/docs/"
    tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
        -C "$stage" -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
    echo "dist/$name.tar.gz ($(du -k "dist/$name.tar.gz" | cut -f1) KiB)"
done
(cd dist && sha256sum -- signupd-*.tar.gz >SHA256SUMS)
cat dist/SHA256SUMS
