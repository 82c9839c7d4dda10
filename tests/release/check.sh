#!/usr/bin/env bash
# The release files as an install script would use them: packaging/release.sh builds them, then
# the checksum file verifies the tarball, the tarball holds exactly the files the guide lists in
# one directory of its own name, a second run gives the same bytes (reproducible), and the binary
# from the tarball runs: its version is Cargo.toml's, and its zero-setup serve answers its own
# healthcheck. Run from the repository; BUILD=0 packs the release binary already in
# target/release (CI: .ci/run, the image's binary, which the Debian package holds too).
set -euo pipefail
cd "$(dirname "$0")/../.."

failures=0
check() { # DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then echo "release: ok   $what"; else echo "release: FAIL $what"; failures=$((failures + 1)); fi
}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
target=$(rustc -vV | sed -n 's/^host: //p')
name="signupd-$version-$target"
tarball="dist/$name.tar.gz"
work=$(mktemp -d)
server=""
cleanup() {
    if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

rm -f dist/signupd-*.tar.gz dist/SHA256SUMS
bash packaging/release.sh
check "the tarball has the stable name $tarball" test -f "$tarball"
check "dist/SHA256SUMS verifies it (sha256sum -c)" bash -c 'cd dist && sha256sum --quiet -c SHA256SUMS'
check "dist/SHA256SUMS names exactly the tarball" \
    test "$(awk '{print $2}' dist/SHA256SUMS)" = "$name.tar.gz"

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

first=$(sha256sum "$tarball" | cut -d' ' -f1)
BUILD=0 bash packaging/release.sh >/dev/null
check "a second run gives the same bytes (reproducible)" test "$(sha256sum "$tarball" | cut -d' ' -f1)" = "$first"

tar -xzf "$tarball" -C "$work"
binary="$work/$name/signupd"
check "the binary is executable" test -x "$binary"
check "signupd --version says $version" test "$("$binary" --version)" = "signupd $version"

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
