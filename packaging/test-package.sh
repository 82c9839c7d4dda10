#!/usr/bin/env bash
# Tests a built signupd .deb on this machine: its contents, lintian, the unit's hardening score,
# then install, upgrade and purge for real. Run as root through .ci/package, which builds the
# package and installs the tools.
#
# It replaces whatever signupd is installed here, with its configuration, credentials and data:
# run it on a CI or test machine only.
#
# Usage: packaging/test-package.sh PATH/TO/signupd_*.deb
set -uo pipefail

deb="$(realpath "$1")"
repo="$(cd "$(dirname "$0")/.." && pwd)"
max_exposure="2.0"
passed=0
failed=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

ok() { passed=$((passed + 1)); echo "  ok: $1"; }
bad() { failed=$((failed + 1)); echo "  FAILED: $1"; }
# check DESCRIPTION COMMAND...: the command's exit status decides.
check() {
    local what="$1"
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}
step() { echo; echo "== $1"; }
# mode_owner PATH: "0600 root:root"
mode_owner() { stat -c '%04a %U:%G' "$1" 2>/dev/null; }
check_mode() {
    local path="$1" want="$2" got
    got="$(mode_owner "$path")"
    if [ "$got" = "$want" ]; then ok "$path is $want"; else bad "$path is $want (found: ${got:-missing})"; fi
}
is_generated_secret() {
    # `signupd gen-secret`: 64 base64url characters and a newline.
    grep -qxE '[A-Za-z0-9_-]{64}' "$1" && [ "$(wc -l <"$1")" -eq 1 ]
}
# http_status PORT METHOD PATH [HEADER...] [-- BODY]: the status code of one HTTP/1.1 request to
# 127.0.0.1 (bash's /dev/tcp: no client to install). A form body gets its Content-Type here.
http_status() {
    local port="$1" method="$2" path="$3" body="" request status
    shift 3
    request="$method $path HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    while [ "$#" -gt 0 ]; do
        if [ "$1" = "--" ]; then
            body="$2"
            request+="Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${#body}\r\n"
            break
        fi
        request+="$1\r\n"
        shift
    done
    exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || { echo 000; return 0; }
    printf "$request\r\n%s" "$body" >&3
    read -r _ status _ <&3 || status=000
    exec 3<&- 3>&-
    echo "$status"
}
fresh_machine() {
    if dpkg-query -W -f='${Status}' signupd 2>/dev/null | grep -q "installed\|config-files"; then
        dpkg --purge signupd >/dev/null
    fi
    rm -rf /etc/signupd /var/lib/signupd /var/lib/private/signupd
}

step "package metadata (dpkg-deb --info)"
dpkg-deb --info "$deb" >"$work/info"
check "Package: signupd" grep -qx ' Package: signupd' "$work/info"
check "depends on libc6 (from dpkg-shlibdeps)" grep -qE '^ Depends: .*libc6' "$work/info"
check "maintainer scripts postinst, prerm, postrm are in the control archive" \
    bash -c "grep -qE '\\spostinst\\s' '$work/info' && grep -qE '\\sprerm\\s' '$work/info' && grep -qE '\\spostrm\\s' '$work/info'"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$work/conffiles" 2>/dev/null
check "conffiles lists exactly /etc/signupd/signupd.toml" diff <(echo /etc/signupd/signupd.toml) "$work/conffiles"

step "package contents (dpkg-deb --contents)"
dpkg-deb --contents "$deb" >"$work/contents"
awk '{print $NF}' "$work/contents" | sed 's|^\./||; s|/$||' | grep -v '^$' | sort >"$work/paths"
{
    printf '%s\n' etc etc/signupd etc/signupd/signupd.toml \
        lib lib/systemd lib/systemd/system lib/systemd/system/signupd.service \
        usr usr/bin usr/bin/signupd usr/share usr/share/doc usr/share/doc/signupd \
        usr/share/doc/signupd/README.md usr/share/doc/signupd/changelog.Debian.gz \
        usr/share/doc/signupd/copyright usr/share/doc/signupd/examples \
        usr/share/doc/signupd/examples/config.example.toml \
        usr/share/man usr/share/man/man8 usr/share/man/man8/signupd.8.gz
    for page in "$repo"/docs/*.md; do echo "usr/share/doc/signupd/$(basename "$page")"; done
} | sort >"$work/expected"
if diff "$work/expected" "$work/paths" >"$work/paths.diff"; then
    ok "exactly the expected $(wc -l <"$work/expected") paths, nothing else"
else
    bad "paths differ from the expected list (< expected, > in the package):"
    sed 's/^/      /' "$work/paths.diff"
fi
# Owner as dpkg-deb shows it: root/root, or 0/0 for an archive without names.
entry_mode() { awk -v p="./$1" '$NF == p {print $1, $2}' "$work/contents" | sed 's| 0/0$| root/root|'; }
check "/usr/bin/signupd is -rwxr-xr-x root/root" test "$(entry_mode usr/bin/signupd)" = "-rwxr-xr-x root/root"
check "/etc/signupd/signupd.toml is -rw-r--r-- root/root" test "$(entry_mode etc/signupd/signupd.toml)" = "-rw-r--r-- root/root"
check "the unit is -rw-r--r-- root/root" test "$(entry_mode lib/systemd/system/signupd.service)" = "-rw-r--r-- root/root"
check "no path in the package is writable by group or others" \
    bash -c "! awk '{print \$1}' '$work/contents' | grep -qE '^.....w|^........w'"
mkdir -p "$work/root"
dpkg-deb -x "$deb" "$work/root"
check "the shipped configuration is packaging/signupd.toml" cmp -s "$repo/packaging/signupd.toml" "$work/root/etc/signupd/signupd.toml"
check "the unit points at no web address (Documentation= is a file shipped in the package)" \
    bash -c "! grep -qE 'https?://' '$work/root/lib/systemd/system/signupd.service' && grep -qx 'Documentation=file:/usr/share/doc/signupd/install.md' '$work/root/lib/systemd/system/signupd.service'"

step "lintian (errors fail the package; warnings are listed)"
lintian --allow-root --display-info --fail-on error "$deb" >"$work/lintian" 2>&1
lintian_status=$?
sed 's/^/      /' "$work/lintian"
check "lintian reports no error" test "$lintian_status" -eq 0

step "unit hardening (systemd-analyze security --offline=true, at most $max_exposure)"
unit="$work/root/lib/systemd/system/signupd.service"
systemd-analyze security --offline=true "$unit" >"$work/security" 2>&1
exposure="$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$work/security")"
echo "      overall exposure level: ${exposure:-not found}"
check "exposure ${exposure:-?} <= $max_exposure" awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e != "" && e + 0 <= m + 0) }'

step "first install on a machine without secrets (systemd as PID 1: $([ -d /run/systemd/system ] && echo yes || echo no))"
fresh_machine
dpkg -i "$deb" >"$work/install.log" 2>&1
check "dpkg -i succeeds" test $? -eq 0
sed 's/^/      /' "$work/install.log"
check "dpkg reports signupd installed" bash -c "dpkg-query -W -f='\${Status}' signupd | grep -qx 'install ok installed'"
check_mode /usr/bin/signupd "0755 root:root"
check_mode /etc/signupd/signupd.toml "0644 root:root"
check_mode /lib/systemd/system/signupd.service "0644 root:root"
check_mode /etc/signupd/credentials "0700 root:root"
check_mode /etc/signupd/credentials/smtp "0700 root:root"
check_mode /etc/signupd/credentials/webhook "0700 root:root"
check_mode /etc/signupd/credentials/token_secret "0600 root:root"
check_mode /etc/signupd/credentials/hash_key "0600 root:root"
check "token_secret holds one generated secret (64 base64url characters)" is_generated_secret /etc/signupd/credentials/token_secret
check "hash_key holds one generated secret (64 base64url characters)" is_generated_secret /etc/signupd/credentials/hash_key
check "token_secret and hash_key differ" bash -c "! cmp -s /etc/signupd/credentials/token_secret /etc/signupd/credentials/hash_key"
check "the service is not enabled by the install" test ! -e /etc/systemd/system/multi-user.target.wants/signupd.service
check "postinst tells the operator what to edit" grep -q 'edit /etc/signupd/signupd.toml' "$work/install.log"
systemd-analyze verify /lib/systemd/system/signupd.service >"$work/verify" 2>&1
verify_status=$?
sed 's/^/      /' "$work/verify"
check "systemd-analyze verify of the installed unit is clean" bash -c "[ $verify_status -eq 0 ] && [ ! -s '$work/verify' ]"

step "the shipped configuration is refused until it is filled in"
/usr/bin/signupd check-config --config /etc/signupd/signupd.toml >"$work/check-shipped" 2>&1
shipped_status=$?
sed 's/^/      /' "$work/check-shipped" | head -5
check "check-config refuses the shipped configuration" test "$shipped_status" -ne 0
check "... naming server.public_url" grep -q 'server.public_url' "$work/check-shipped"
check "... and mail.smtp.host and lists[0].from" \
    bash -c "grep -q 'mail.smtp.host' '$work/check-shipped' && grep -qF 'lists[0].from' '$work/check-shipped'"
sed -e 's|https://signup.example.com|https://signup.newsletter-operator.net|' \
    -e 's|smtp.example.com|smtp.newsletter-operator.net|' \
    -e 's|newsletter@example.com|news@newsletter-operator.net|g' \
    /etc/signupd/signupd.toml >"$work/filled.toml"
check "the filled-in copy no longer names a reserved example domain" bash -c "! grep -vE '^\\s*#' '$work/filled.toml' | grep -qE 'example\.(com|net|org)'"
cp "$work/filled.toml" /etc/signupd/signupd.toml
/usr/bin/signupd check-config --config /etc/signupd/signupd.toml >"$work/check-filled" 2>&1
filled_status=$?
check "check-config accepts the filled-in configuration" test "$filled_status" -eq 0
check "... and prints the effective values" grep -q 'public_url = "https://signup.newsletter-operator.net"' "$work/check-filled"
[ "$filled_status" -eq 0 ] || sed 's/^/      /' "$work/check-filled" | head -5
check "... without the loopback warning (the shipped lines trust the local tunnel or proxy)" \
    bash -c "! grep -q 'share one rate-limit budget' '$work/check-filled'"

step "the shipped configuration behind a tunnel: visitors of cloudflared are counted apart"
# The filled-in file as installed, run by the installed binary, with what a test must change:
# a free port, its own data and mail directories (secrets generated there), and one signup per
# client per 10 minutes. The client-identity lines stay as shipped.
cp /etc/signupd/signupd.toml "$work/tunnel.toml"
printf '\n[signup]\nrate_limits = [{ window = "10m", max = 1 }]\n' >>"$work/tunnel.toml"
list="$(sed -n 's/^id = "\(.*\)"$/\1/p' "$work/tunnel.toml" | head -1)"
: >"$work/tunnel.log"
env -u CREDENTIALS_DIRECTORY SIGNUPD_SERVER__LISTEN=127.0.0.1:0 SIGNUPD_STORAGE__DATA_DIR="$work/tunnel-data" \
    SIGNUPD_MAIL__TRANSPORT=file SIGNUPD_MAIL__FILE_DIR="$work/tunnel-data/mail" \
    /usr/bin/signupd serve --config "$work/tunnel.toml" >>"$work/tunnel.log" 2>&1 &
tunnel_pid=$!
tunnel_port=""
for _ in $(seq 1 300); do
    tunnel_port="$(sed -n 's/.*signupd is listening.* port=\([0-9]*\).*/\1/p' "$work/tunnel.log" | head -1)"
    [ -n "$tunnel_port" ] || ! kill -0 "$tunnel_pid" 2>/dev/null && break
    sleep 0.1
done
check "the installed signupd serves the shipped configuration" test -n "$tunnel_port"
[ -n "$tunnel_port" ] || sed 's/^/      /' "$work/tunnel.log" | head -5
check "... without the loopback warning" bash -c "! grep -q 'share one rate-limit budget' '$work/tunnel.log'"
# As cloudflared does: from loopback, with Cloudflare's CF-Connecting-IP naming the visitor.
signup_from() { http_status "$tunnel_port" POST /api/signup "CF-Connecting-IP: $1" -- "email=tunnel-$2%40example.com&consent=yes&list=$list"; }
check "visitor A's first signup is accepted (303)" test "$(signup_from 198.51.100.7 1)" = 303
check "visitor B's first signup is accepted (303): a budget of its own" test "$(signup_from 203.0.113.9 2)" = 303
check "visitor A's second signup is rate limited (429)" test "$(signup_from 198.51.100.7 3)" = 429
check "visitor B's second signup is rate limited (429)" test "$(signup_from 203.0.113.9 4)" = 429
kill -TERM "$tunnel_pid" 2>/dev/null
wait "$tunnel_pid"
check "signupd stops cleanly on SIGTERM" test $? -eq 0

step "upgrade: the same package installed again"
sha256sum /etc/signupd/credentials/token_secret /etc/signupd/credentials/hash_key >"$work/secrets.sha256"
cp /etc/signupd/signupd.toml "$work/edited.toml"
dpkg -i "$deb" >"$work/upgrade.log" 2>&1
check "dpkg -i over the installed package succeeds" test $? -eq 0
check "token_secret and hash_key are byte for byte the same" sha256sum --quiet -c "$work/secrets.sha256"
check "the edited configuration is kept" cmp -s "$work/edited.toml" /etc/signupd/signupd.toml
check "no .dpkg-dist or .dpkg-old copy appeared" bash -c "! ls /etc/signupd/*.dpkg-* >/dev/null 2>&1"
check "nothing was generated again" bash -c "! grep -q 'generated' '$work/upgrade.log'"
check_mode /etc/signupd/credentials "0700 root:root"

step "purge: the configuration goes, the data and the secrets stay"
# What systemd's DynamicUser= leaves: the data in /var/lib/private/signupd, a link beside it.
install -d -m 0700 /var/lib/private /var/lib/private/signupd
ln -sfn private/signupd /var/lib/signupd
echo "subscribers of the package test" >/var/lib/private/signupd/signupd.sqlite3
sha256sum /var/lib/private/signupd/signupd.sqlite3 >"$work/data.sha256"
dpkg --purge signupd >"$work/purge.log" 2>&1
check "dpkg --purge succeeds" test $? -eq 0
sed 's/^/      /' "$work/purge.log"
check "the package is gone" bash -c "! dpkg-query -W -f='\${Status}' signupd 2>/dev/null | grep -q installed"
check "/etc/signupd/signupd.toml is gone" test ! -e /etc/signupd/signupd.toml
check "/usr/bin/signupd and the unit are gone" bash -c "[ ! -e /usr/bin/signupd ] && [ ! -e /lib/systemd/system/signupd.service ]"
check "the data survives byte for byte" sha256sum --quiet -c "$work/data.sha256"
check "the /var/lib/signupd link survives" test -L /var/lib/signupd
check "the credentials survive byte for byte" sha256sum --quiet -c "$work/secrets.sha256"
check "purge says what it kept and how to delete it" grep -q 'purge keeps the data' "$work/purge.log"

step "install on a machine that has secrets already"
rm -rf /etc/signupd
install -d -m 0700 /etc/signupd /etc/signupd/credentials
printf 'known-token-secret-of-the-package-test-0123456789\n' >/etc/signupd/credentials/token_secret
chmod 0600 /etc/signupd/credentials/token_secret
cp /etc/signupd/credentials/token_secret "$work/known_token_secret"
# signupd ran here before the package, with a generated hash key in its state directory.
printf 'hash-key-signupd-generated-before-the-package-0123456789' >/var/lib/private/signupd/hash_key
dpkg -i "$deb" >"$work/install2.log" 2>&1
check "dpkg -i succeeds" test $? -eq 0
sed 's/^/      /' "$work/install2.log"
check "the existing token_secret is kept byte for byte" cmp -s "$work/known_token_secret" /etc/signupd/credentials/token_secret
check "the hash key the data was made with is taken, not a new one" \
    cmp -s /var/lib/private/signupd/hash_key /etc/signupd/credentials/hash_key
check_mode /etc/signupd/credentials/hash_key "0600 root:root"
check_mode /etc/signupd/credentials "0700 root:root"

step "a first install never reads through a link or special file in the data directory"
# The data directory is writable by the service's user: a compromised service could leave there
# what it wants root to copy into the credentials. postinst refuses such a file and stops, rather
# than copy it or generate a key that would void the data's suppressions (docs/install.md).
plant_symlink() { ln -s /etc/shadow /var/lib/private/signupd/hash_key; }
plant_hardlink() { ln /etc/shadow /var/lib/private/signupd/hash_key; }
plant_fifo() { mkfifo -m 0600 /var/lib/private/signupd/hash_key; }
plant_oversized() { head -c 65536 /dev/zero | tr '\0' 'k' >/var/lib/private/signupd/hash_key; }
for plant in symlink hardlink fifo oversized; do
    fresh_machine 2>/dev/null
    install -d -m 0700 /var/lib/private /var/lib/private/signupd
    ln -sfn private/signupd /var/lib/signupd
    if ! "plant_$plant" 2>/dev/null; then
        echo "      (cannot make a $plant here: skipped)"
        continue
    fi
    timeout 120 dpkg -i "$deb" >"$work/plant-$plant.log" 2>&1
    plant_status=$?
    sed 's/^/      /' "$work/plant-$plant.log" | grep 'signupd:'
    check "$plant hash_key: the install stops (postinst fails, nothing hangs)" \
        bash -c "[ $plant_status -ne 0 ] && [ $plant_status -ne 124 ]"
    check "$plant hash_key: the message names the file and what to do" \
        bash -c "grep -q 'refusing to read /var/lib/private/signupd/hash_key' '$work/plant-$plant.log' && grep -q 'dpkg --configure signupd' '$work/plant-$plant.log'"
    check "$plant hash_key: no hash_key credential was written, nor a temporary copy left" \
        bash -c "[ ! -e /etc/signupd/credentials/hash_key ] && [ -z \"\$(ls -A /etc/signupd/credentials | grep '^\.')\" ]"
    check "$plant hash_key: nothing of /etc/shadow is in the credentials" \
        bash -c "! grep -rqxF -f /etc/shadow /etc/signupd/credentials"
    check "$plant hash_key: the planted file is left as it was" \
        bash -c "[ -e /var/lib/private/signupd/hash_key ] || [ -L /var/lib/private/signupd/hash_key ]"
    rm -f /var/lib/private/signupd/hash_key
    dpkg --configure signupd >"$work/plant-$plant-configure.log" 2>&1
    check "$plant hash_key: once it is removed, dpkg --configure finishes the install" test $? -eq 0
    check "$plant hash_key: ... with a generated hash key" is_generated_secret /etc/signupd/credentials/hash_key
done

step "clean up"
dpkg --purge signupd >/dev/null 2>&1
rm -rf /etc/signupd /var/lib/signupd /var/lib/private/signupd
check "nothing of signupd is left" bash -c "[ ! -e /etc/signupd ] && [ ! -e /var/lib/private/signupd ]"

echo
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
