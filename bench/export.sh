#!/usr/bin/env bash
# Peak memory of `signupd export` over 1,000,000 subscribers: it must stream (constant memory).
#
#   bash bench/export.sh            # ROWS=1000000 by default; ~3 min on 2 cores after the build
#
# Builds the release binary, creates a database with `signupd migrate` and the secrets with one
# short `serve`, seeds ROWS subscribers with bench/seed_tool.py (20 % pending), then runs the
# export in each format to a file under GNU time, and prints rows, seconds and peak RSS. A
# second run over ROWS/10 shows whether memory grows with the table.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
export DEBIAN_FRONTEND=noninteractive
command -v /usr/bin/time >/dev/null || apt-get install -y -q time

cargo build --release --locked --bin signupd --quiet
TMP=$(mktemp -d /tmp/signupd-export.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cp target/release/signupd "$TMP/signupd"
SIGNUPD="$TMP/signupd"

prepare() { # DIR ROWS
    local dir=$1 rows=$2
    mkdir -p "$dir/data"
    cat >"$dir/signupd.toml" <<TOML
[server]
listen = "127.0.0.1:0"
[storage]
data_dir = "$dir/data"
[mail]
file_dir = "$dir/data/mail"
[[lists]]
id = "news"
TOML
    # One short serve creates the database, the secrets and the consent text row.
    RUST_LOG=warn "$SIGNUPD" serve --config "$dir/signupd.toml" 2>/dev/null &
    local pid=$!
    for _ in $(seq 1 100); do [[ -f "$dir/data/hash_key" ]] && break; sleep 0.1; done
    sleep 1
    kill -TERM "$pid"; wait "$pid" || true
    python3 bench/seed_tool.py subscribers --data-dir "$dir/data" -n "$rows" --pending-share 0.2 >/dev/null
}

measure() { # DIR FORMAT
    local dir=$1 format=$2 out="$1/export.$2"
    rm -f "$out"
    /usr/bin/time -f "%e %M" -o "$dir/time.txt" \
        "$SIGNUPD" export --config "$dir/signupd.toml" --status all --format "$format" --output "$out" 2>/dev/null
    read -r seconds rss_kib <"$dir/time.txt"
    printf '%-8s rows %8s  %6.2f s  peak RSS %6.1f MiB  (%s bytes written)\n' \
        "$format" "$3" "$seconds" "$(awk -v kib="$rss_kib" 'BEGIN { print kib / 1024 }')" "$(stat -c %s "$out")"
    rm -f "$out"
}

echo "== export: commit $(git rev-parse --short HEAD), $(nproc) CPUs, $(date -u +%FT%TZ)"
for rows in "$ROWS" $((ROWS / 10)); do
    dir="$TMP/rows-$rows"
    prepare "$dir" "$rows"
    for format in csv json jsonl; do
        measure "$dir" "$format" "$rows"
    done
done
