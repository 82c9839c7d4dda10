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
#   bash packaging/release.sh     # builds target/release/signupd first (cargo build --release --locked)
#
# VERSION is Cargo.toml's; TARGET is the host's Rust target triple (x86_64-unknown-linux-gnu on
# the usual VPS). The tarball is reproducible: sorted names, owner root, every mtime the last
# commit's time (SOURCE_DATE_EPOCH overrides it), gzip without a timestamp, so the same commit
# built the same way gives the same checksum. BUILD=0 packs the binary already built (in
# target/release, or $CARGO_TARGET_DIR/release).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
target=$(rustc -vV | sed -n 's/^host: //p')
name="signupd-$version-$target"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

if [[ ${BUILD:-1} == 1 ]]; then
    cargo build --release --locked --bin signupd
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/docs"
install -m 0755 "${CARGO_TARGET_DIR:-target}/release/signupd" "$root/signupd"
install -m 0644 packaging/signupd.service packaging/signupd.8 config.example.toml README.md \
    LICENSE-MIT LICENSE-APACHE "$root/"
install -m 0644 packaging/signupd.toml "$root/signupd.toml"
install -m 0644 docs/* "$root/docs/"

mkdir -p dist
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$stage" -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
(cd dist && sha256sum -- signupd-*.tar.gz >SHA256SUMS)
echo "dist/$name.tar.gz ($(du -k "dist/$name.tar.gz" | cut -f1) KiB)"
cat dist/SHA256SUMS
