#!/usr/bin/env bash
# The release files as an install script would use them: packaging/release.sh builds them, then
# the checksum file verifies the tarballs, each tarball holds exactly the files the guide lists in
# one directory of its own name, a second run gives the same bytes (reproducible), and each binary
# from a tarball runs: built for its target, its version Cargo.toml's (an ARM binary under
# qemu-user), and the host's zero-setup serve answers its own healthcheck. Run from the
# repository; BUILD=0 packs the release binaries already built (CI: .ci/run, the image's binary,
# which the Debian package holds too, and .ci/cross's ARM builds).
#
#   bash tests/release/check.sh                 # the host's tarball
#   bash tests/release/check.sh TARGET...       # these targets' (packaging/release.sh TARGET...)
set -euo pipefail
cd "$(dirname "$0")/../.."

failures=0
check() { # DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then echo "release: ok   $what"; else echo "release: FAIL $what"; failures=$((failures + 1)); fi
}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
host=$(rustc -vV | sed -n 's/^host: //p')
# The targets to pack (packaging/release.sh's arguments), the host's by default; the host's
# binary also serves its zero-setup demo below, the others run `--version` under qemu-user.
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("$host")
work=$(mktemp -d)
server=""
cleanup() {
    if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

rm -f dist/signupd-*.tar.gz dist/SHA256SUMS
bash packaging/release.sh "${targets[@]}"
check "dist/SHA256SUMS verifies every tarball (sha256sum -c)" bash -c 'cd dist && sha256sum --quiet -c SHA256SUMS'
check "dist/SHA256SUMS names exactly the tarballs of ${targets[*]}" \
    test "$(awk '{print $2}' dist/SHA256SUMS | sort)" = "$(printf "signupd-$version-%s.tar.gz\n" "${targets[@]}" | sort)"
sums=$(cat dist/SHA256SUMS)
BUILD=0 bash packaging/release.sh "${targets[@]}" >/dev/null
check "a second run gives the same bytes (reproducible)" test "$(cat dist/SHA256SUMS)" = "$sums"

for target in "${targets[@]}"; do
    name="signupd-$version-$target"
    tarball="dist/$name.tar.gz"
    check "the tarball has the stable name $tarball" test -f "$tarball"
    expected=$(
        {
            printf '%s\n' "$name/" "$name/signupd" "$name/signupd.service" "$name/signupd.toml" \
                "$name/config.example.toml" "$name/signupd.8" "$name/README.md" "$name/LICENSE-MIT" \
                "$name/LICENSE-APACHE" "$name/docs/"
            git ls-files docs | sed "s|^|$name/|"
        } | sort
    )
    listed=$(tar -tzf "$tarball" | sort)
    check "the tarball holds the binary, unit, configs, man page, README, guides and licences, in $name/" \
        test "$listed" = "$expected"
    check "every file in it is owned by root (0/0)" \
        test -z "$(tar -tvzf "$tarball" --numeric-owner | awk '$2 != "0/0"')"
    tar -xzf "$tarball" -C "$work"
    binary="$work/$name/signupd"
    check "the binary is executable" test -x "$binary"
    runner=()
    case $target in
        "$host") ;;
        aarch64-*) runner=(qemu-aarch64-static) ;;
        armv7-*) runner=(qemu-arm-static) ;;
    esac
    # The ELF header's machine (bytes 18-19): 3e00 x86_64, b700 aarch64, 2800 arm.
    machine=$(od -An -tx1 -j18 -N2 "$binary" | tr -d ' \n')
    case $target in
        x86_64-*) want=3e00 ;; aarch64-*) want=b700 ;; armv7-*) want=2800 ;; *) want="?" ;;
    esac
    check "$name/signupd is built for $target (ELF machine $machine)" test "$machine" = "$want"
    check "signupd --version says $version${runner:+ (under ${runner[*]})}" \
        test "$("${runner[@]}" "$binary" --version)" = "signupd $version"
done

name="signupd-$version-$host"
if [[ ! -d $work/$name ]]; then
    ((failures == 0)) || exit 1
    echo "release: all checks passed (the zero-setup serve is checked with the host's tarball)"
    exit 0
fi
# The zero-setup quick start, from the unpacked directory, on a free port.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/$name" && exec env -u SIGNUPD_CONFIG SIGNUPD_SERVER__LISTEN="127.0.0.1:$port" ./signupd serve 2>"$work/serve.log") &
server=$!
ready=1
for _ in $(seq 100); do
    if (cd "$work/$name" && env SIGNUPD_SERVER__LISTEN="127.0.0.1:$port" ./signupd healthcheck >"$work/health.out" 2>&1); then
        ready=0
        break
    fi
    sleep 0.1
done
check "its serve answers its own healthcheck ($(cat "$work/health.out"))" test "$ready" = 0
check "its serve made ./data/signupd.sqlite3 where it was unpacked" test -f "$work/$name/data/signupd.sqlite3"
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
check "its serve exits 0 on SIGTERM" test "$status" = 0
(cd "$work/$name" && env SIGNUPD_SERVER__LISTEN="127.0.0.1:$port" ./signupd healthcheck >"$work/health.out" 2>&1) && down=0 || down=$?
check "the healthcheck fails (1) once it stopped: $(cat "$work/health.out")" test "$down" = 1

if ((failures > 0)); then
    echo "release: $failures check(s) failed; serve's log:" >&2
    cat "$work/serve.log" >&2 || true
    exit 1
fi
echo "release: all checks passed"
