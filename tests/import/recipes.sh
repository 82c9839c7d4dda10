#!/usr/bin/env bash
# The conversion recipes of docs/operations.md ("Importing an existing list") are tests: each
# block between `<!-- import-<tool>:start -->` and `<!-- import-<tool>:end -->` is run exactly as
# the guide shows it, on the sample export beside this script, and its output is imported into a
# fresh database by the real binary, first with --dry-run, then for real; the counts must be the
# expected ones (only confirmed subscribers of the chosen list come over).
#
#   bash tests/import/recipes.sh        # SIGNUPD=path/to/signupd to test another binary
#
# Needs jq and csvkit (csvcut, csvjson); .ci/run installs them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
signupd=${SIGNUPD:-${CARGO_TARGET_DIR:-$root/target}/debug/signupd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The lines between the markers, without the fences.
recipe() {
    awk -v start="<!-- $1:start -->" -v end="<!-- $1:end -->" '
        $0 == start { inside = 1; found = 1; next }
        $0 == end { inside = 0 }
        inside && !/^```/ { print }
        END { if (!found) exit 1 }' "$root/docs/operations.md"
}

cp "$root/tests/import/listmonk-subscribers.json" "$root/tests/import/mailchimp-subscribed.csv" "$work/"
cat > "$work/signupd.toml" <<EOF
[storage]
data_dir = "$work/data"
[[lists]]
id = "news"
EOF
"$signupd" migrate --config "$work/signupd.toml" > /dev/null 2>&1
for secret in token_secret hash_key; do
    (umask 077 && "$signupd" gen-secret > "$work/data/$secret")
done

# import FILE EXPECTED: a dry run, then the import, each must print EXPECTED as its counts.
import() {
    local counts
    for dry in --dry-run ""; do
        counts=$("$signupd" import --config "$work/signupd.toml" "$work/$1" --list news \
            --consent-text "Send me the newsletter." $dry | tail -n 1)
        if [ "$counts" != "$2" ]; then
            echo "FAIL: import ${dry:-(real)} of $1 printed \"$counts\", expected \"$2\"" >&2
            exit 1
        fi
    done
    echo "ok: $1: $2"
}

(cd "$work" && recipe import-listmonk > listmonk.sh && bash -euo pipefail listmonk.sh)
import listmonk.jsonl "imported 3, skipped 0 (existing 0, suppressed 0), refused 0"

(cd "$work" && recipe import-mailchimp > mailchimp.sh && bash -euo pipefail mailchimp.sh)
# ann@example.com came over from listmonk already.
import mailchimp.jsonl "imported 3, skipped 1 (existing 1, suppressed 0), refused 0"

emails=$("$signupd" export --config "$work/signupd.toml" --format jsonl 2> /dev/null | jq -r .email | sort | tr '\n' ' ')
expected="ann@example.com fay@example.org gus@example.org hugo@example.net ida@example.de jon@example.com "
if [ "$emails" != "$expected" ]; then
    echo "FAIL: exported [$emails], expected [$expected]" >&2
    exit 1
fi
methods=$("$signupd" export --config "$work/signupd.toml" --format jsonl 2> /dev/null | jq -r .confirm_method | sort -u)
[ "$methods" = "import" ] || { echo "FAIL: confirm_method [$methods]" >&2; exit 1; }
echo "ok: the recipes of docs/operations.md"
