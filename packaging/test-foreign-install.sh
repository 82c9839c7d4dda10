#!/usr/bin/env bash
# A Debian package for another architecture (arm64, armhf), installed where this machine can: in
# a working container of that architecture's debian:bookworm-slim (tests/container/stand-ins.sh),
# its maintainer scripts and the binary run by the kernel through qemu-user (.ci/cross binfmt).
# No systemd runs there, so this is the install's own part: dpkg accepts the package's Depends
# from that architecture's libraries, postinst generates both secrets with the ARM binary, the
# binary answers, and a purge removes the binary and the configuration and keeps the secrets. packaging/test-package.sh does the
# rest (contents, lintian, the unit) on this machine.
#
# Usage: packaging/test-foreign-install.sh PATH/TO/signupd_*_ARCH.deb TARGET
set -euo pipefail
deb=$(realpath "${1:?usage: test-foreign-install.sh DEB TARGET}")
target=${2:?usage: test-foreign-install.sh DEB TARGET}
cd "$(dirname "$0")/.."

arch=$(dpkg-deb -f "$deb" Architecture)
version=$(dpkg-deb -f "$deb" Version)
bash .ci/cross binfmt "$target"
bash tests/container/stand-ins.sh "$arch"
# shellcheck source=tests/container/stand-ins.sh
source tests/container/stand-ins.sh
base=docker.io/${PER_ARCH_REPOSITORY[$arch]}/debian:bookworm-slim
# shellcheck disable=SC2086 # the platform's options, split
ctr=$(buildah from --pull=never ${PER_ARCH_PLATFORM[$arch]} "$base")
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah copy --quiet "$ctr" "$deb" /tmp/signupd.deb
echo "== install $(basename "$deb") in a container of $arch ($base, under qemu-user)"
# One shell inside: each step says what it checks, and the first failure ends it.
# shellcheck disable=SC2016 # expanded by that shell
buildah run --isolation chroot "$ctr" -- sh -euc '
    ok() { echo "foreign install: ok   $1"; }
    [ "$(dpkg --print-architecture)" = "$1" ]; ok "the container is $1 (uname -m: $(uname -m))"
    dpkg -i /tmp/signupd.deb >/tmp/install.log 2>&1 || { cat /tmp/install.log; exit 1; }
    ok "dpkg -i installs it, its Depends met by the $1 libraries"
    [ "$(dpkg-query -W -f "\${Status} \${Version}" signupd)" = "install ok installed $2" ]
    ok "dpkg says signupd $2 is installed"
    for secret in hash_key token_secret; do
        [ -s /etc/signupd/credentials/$secret ] && [ "$(stat -c %a /etc/signupd/credentials/$secret)" = 600 ]
    done
    ok "postinst generated hash_key and token_secret (the ARM binary ran), mode 0600"
    signupd --version | grep -qx "signupd ${2%-*}"; ok "signupd --version says ${2%-*}"
    dpkg --purge signupd >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; exit 1; }
    [ ! -e /usr/bin/signupd ] && [ ! -e /etc/signupd/signupd.toml ] && [ -s /etc/signupd/credentials/hash_key ]
    ok "dpkg --purge removes the binary and the configuration, and keeps the secrets"
' sh "$arch" "$version"
echo "foreign install ($arch): passed"
