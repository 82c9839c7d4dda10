#!/usr/bin/env bash
# Peak memory of `signupd export` over 1,000,000 subscribers: it must stream (constant memory).
#
#   bash bench/export.sh            # ROWS=1000000 by default; ~3 min on 2 cores after the build
#
# Builds the release binary, creates the database and the secrets with one short `serve` (on
# 127.0.0.1:18088, until /healthz answers), seeds ROWS subscribers with bench/seed_tool.py (20 %
# pending), then runs the export in each format to a file under GNU time, and prints rows, seconds
# and peak RSS. A second run over ROWS/10 shows whether memory grows with the table.
# Knobs: ROWS=1000000, and bench/common.sh's BUILD, BENCH_SIGNUPD, BENCH_REVISION, KEEP_TMP.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROWS=${ROWS:-1000000}
PORT=18088
require_tools time:/usr/bin/time python3
bench_tmp export
release_binaries

prepare() { # DATA_DIR ROWS
    init_data "$1"
    python3 bench/seed_tool.py subscribers --data-dir "$1" -n "$2" --pending-share 0.2 >/dev/null
}

measure() { # DIR FORMAT
    local dir=$1 format=$2 out="$1/export.$2"
    rm -f "$out"
    /usr/bin/time -f "%e %M" -o "$dir/time.txt" \
        "$SIGNUPD" export --config "$dir.toml" --status all --format "$format" --output "$out" 2>/dev/null
    read -r seconds rss_kib <"$dir/time.txt"
    printf '%-8s rows %8s  %6.2f s  peak RSS %6.1f MiB  (%s bytes written)\n' \
        "$format" "$3" "$seconds" "$(awk -v kib="$rss_kib" 'BEGIN { print kib / 1024 }')" "$(stat -c %s "$out")"
    rm -f "$out"
}

echo "== export: commit $REVISION, $(nproc) CPUs, $(date -u +%FT%TZ)"
for rows in "$ROWS" $((ROWS / 10)); do
    dir="$TMP/rows-$rows"
    prepare "$dir" "$rows"
    for format in csv json jsonl; do
        measure "$dir" "$format" "$rows"
    done
done
