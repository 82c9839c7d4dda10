#!/usr/bin/env bash
# Tests a built signupd .deb on this machine: its contents, lintian, the unit's hardening score,
# then install, upgrade and purge for real, and the guides as written: every command block of
# docs/install.md and of the webhooks and the destinations ("Handing subscribers to your
# sender") in docs/operations.md that is marked <!-- ci: run --> (tests/package/guide.py), in
# order, as root, on the installed package, against a test SMTP relay
# (tests/package/smtp_catcher.py), the guide's webhook receiver and a fake listmonk
# (tests/package/fake_listmonk.py) on 127.0.0.1; then a real signup and confirmation through the
# installed service, which must reach the receiver and listmonk. Run as root through .ci/package,
# which builds the package and installs the tools; the guides' step installs sudo and the
# receiver's Python library if they are missing.
#
# It replaces whatever signupd is installed here, with its configuration, credentials and data:
# run it on a CI or test machine only.
#
# Usage: packaging/test-package.sh PATH/TO/signupd_*.deb [--no-install]
#
# --no-install: a package for another architecture (arm64, armhf), which this machine cannot
# install: the checks up to the unit's hardening score, and that its binary is for the package's
# architecture.
set -uo pipefail

deb="$(realpath "$1")"
install=true
[ "${2:-}" = --no-install ] && install=false
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

step "the guides' command blocks are marked (tests/package/guide.py)"
python3 "$repo/tests/package/guide.py" selftest
check "the guide reader accepts and refuses what it should" test $? -eq 0
python3 "$repo/tests/package/guide.py" check "$repo/docs/install.md" "$repo/docs/operations.md#webhooks" \
    "$repo/docs/operations.md#handing-subscribers-to-your-sender" 2>"$work/markers"
markers_status=$?
sed 's/^/      /' "$work/markers"
check "every shell block of docs/install.md and of the webhooks and destinations in docs/operations.md says whether CI runs it" \
    test "$markers_status" -eq 0

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
        usr/share/man usr/share/man/man8 usr/share/man/man8/signupd.8.gz \
        usr/share/signupd usr/share/signupd/grafana usr/share/signupd/grafana/signupd.json
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
check "the shipped Grafana dashboard is packaging/grafana/signupd.json" \
    cmp -s "$repo/packaging/grafana/signupd.json" "$work/root/usr/share/signupd/grafana/signupd.json"
check "the Grafana dashboard is -rw-r--r-- root/root" \
    test "$(entry_mode usr/share/signupd/grafana/signupd.json)" = "-rw-r--r-- root/root"
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

arch="$(dpkg-deb -f "$deb" Architecture)"
# What `file` would say, from the ELF header's e_machine (bytes 18-19, little-endian).
machine="$(od -An -tx1 -j18 -N2 "$work/root/usr/bin/signupd" | tr -d ' \n')"
case "$arch" in
    amd64) want_machine=3e00 ;;
    arm64) want_machine=b700 ;;
    armhf) want_machine=2800 ;;
    *) want_machine="?" ;;
esac
check "/usr/bin/signupd is an ELF binary for the package's architecture $arch (e_machine $machine)" \
    test "$machine" = "$want_machine"
if ! $install; then
    echo
    echo "package ($arch, not installed here): $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

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
check_mode /etc/signupd/credentials/destination "0700 root:root"
check_mode /etc/signupd/credentials/relay "0700 root:root"
check_mode /etc/signupd/credentials/api_token "0700 root:root"
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
# The filled-in username needs the relay's password, which check-config looks for (install.md).
(umask 077 && printf 'password of the relay\n' >/etc/signupd/credentials/smtp/password)
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

step "the guides, as written: docs/install.md, and the webhooks and the destinations of docs/operations.md"
# An operator's day one on this machine: install, fill in the shipped configuration, then every
# block the guides mark <!-- ci: run --> (tests/package/guide.py reads them), in order, as root,
# in a clean environment, from a working directory of their own. The guides are not edited: what
# an operator must replace goes through the table of substitutions below, what they type through
# the table of inputs. Where a block needs systemd as PID 1, the test does what systemd would
# (start_as_unit) between the parts of the guides.
#
# Substitutions: placeholder as the guides write it -> what this test puts there. guide.py
# refuses a run block that still holds a placeholder, and a substitution that matches nothing.
listmonk_port=8098
listmonk_user="signupd-package-test"
listmonk_token="lmk_9pV2rXc7QeT4wYb8NzK3sDf6"
guide_substitutions=(
    # send-test-mail's recipient, "an address of yours": the test relay takes any.
    "you@your-domain.net" "postmaster@newsletter-operator.net"
    # The webhook endpoint: the receiver of docs/operations.md, started by its "Run it with" line.
    "https://crm.example.com/hooks/signupd" "http://127.0.0.1:8099/"
    # listmonk's base URL: the fake listmonk (tests/package/fake_listmonk.py), started below.
    "https://lists.example.com" "http://127.0.0.1:$listmonk_port"
)
# Inputs: what the operator types where a block reads the terminal (<!-- ci: run, input: NAME -->),
# with the Enter they press before Ctrl-D.
declare -A guide_input=(
    [smtp-password]=$'smtp password of the package test\n'
    [webhook-secret]=$'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n'
    [answer-yes]=$'Y\n'
    # The listmonk API user and its token, as the destination's credential ("user:token"); the
    # fake listmonk answers any other Authorization with 403, as listmonk does.
    [listmonk-credential]="$listmonk_user:$listmonk_token"$'\n'
)
# The filled-in configuration: the shipped line -> the line the test writes (as sudoedit would).
# The SMTP relay is the test relay on 127.0.0.1 (tests/package/smtp_catcher.py), which accepts
# mail only after a login with this user name and the typed smtp-password.
guide_user="news@newsletter-operator.net"
guide_fill=(
    'public_url = "https://signup.example.com"' 'public_url = "https://signup.newsletter-operator.net"'
    'host = "smtp.example.com"' 'host = "127.0.0.1"'
    'port = 587' 'port = @SMTP_PORT@'
    'security = "starttls"' 'security = "none"'
    'username = "newsletter@example.com"' "username = \"$guide_user\""
    'from = "Newsletter <newsletter@example.com>"' "from = \"Newsletter <$guide_user>\""
    'site_name = ""' 'site_name = "Newsletter Operator"'
    'site_url = ""' 'site_url = "https://www.newsletter-operator.net/"'
    'accent_color = ""' 'accent_color = "#0b6e4f"'
)
guide="$work/guide"
operator_dir="$work/operator"
mailbox="$work/mailbox"
backup_today="/var/backups/signupd-$(date +%F).sqlite3"
mkdir -p "$guide" "$operator_dir"
# A clean environment for every block: no SIGNUPD_*, no CREDENTIALS_DIRECTORY; this PATH, so that
# python3 is the one with the standardwebhooks package.
guide_env=(PATH="$PATH" HOME="${HOME:-/root}" USER=root LOGNAME=root LANG=C.UTF-8 TERM=dumb)
guide_bg=()

# What the guides use: sudo (as root it runs the command as root, with sudo's clean
# environment and secure path) and the receiver's library.
if ! command -v sudo >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sudo >/dev/null 2>&1
fi
check "sudo is installed (the guides write it)" command -v sudo
if ! python3 -c 'import standardwebhooks' 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore standardwebhooks==1.1.0
fi
check "python3 has the standardwebhooks package (the receiver of docs/operations.md)" python3 -c 'import standardwebhooks'

printf '%s\t%s\n' "${guide_substitutions[@]}" >"$work/substitutions.tsv"
inputs="$(IFS=,; echo "${!guide_input[*]}")"
# The section "Release files" installs from the tarball instead of the package: its blocks are
# run by tests/release/install_as_written.py, in a scratch directory, not on this machine.
python3 "$repo/tests/package/guide.py" extract --out "$guide" --substitutions "$work/substitutions.tsv" \
    --inputs "$inputs" \
    "$repo/docs/install.md#:start" \
    "$repo/docs/install.md#start:remove-and-purge" \
    "$repo/docs/operations.md#webhooks" \
    "$repo/docs/operations.md#handing-subscribers-to-your-sender" \
    "$repo/docs/install.md#remove-and-purge:release-files" 2>"$work/extract.log"
extract_status=$?
sed 's/^/      /' "$work/extract.log"
check "the blocks CI runs are read, with every placeholder in the table of substitutions" test "$extract_status" -eq 0

# run_guide_part N: the blocks of part N, in order. A block that fails is a failed check, and
# the run goes on (as the rest of this test does), so one report shows every broken block.
run_guide_part() {
    local dir="$guide/$1" name kind arg where block first status input
    [ -f "$dir/manifest" ] || { bad "part $1 of the guides was not extracted"; return; }
    while IFS=$'\t' read -r -u 4 name kind arg where; do
        block="$dir/$name"
        where="${where#"$repo/"}"
        first="$(grep -m1 -vE '^\s*(#|$)' "$block" | cut -c1-70)"
        case "$kind" in
        run)
            input=/dev/null
            if [ "$arg" != "-" ]; then
                printf '%s' "${guide_input[$arg]}" >"$work/typed"
                input="$work/typed"
            fi
            (cd "$operator_dir" && timeout 120 env -i "${guide_env[@]}" bash -euxo pipefail "$block" <"$input" >"$block.log" 2>&1)
            status=$?
            awk '{ print "      | " $0 }' "$block.log" | head -40
            check "$where ($first…) runs as written" test "$status" -eq 0
            ;;
        background)
            (cd "$operator_dir" && exec setsid env -i "${guide_env[@]}" bash -euxo pipefail "$block" </dev/null >"$block.log" 2>&1) &
            guide_bg+=("$!:$block.log")
            local host="${arg%:*}" port="${arg##*:}" up=no pid=$!
            for _ in $(seq 1 200); do
                if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then up=yes; break; fi
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            [ "$up" = yes ] || sed 's/^/      | /' "$block.log" | head -20
            check "$where ($first…) runs as written, in the background, and listens on $arg" test "$up" = yes
            ;;
        file)
            cp "$block" "$operator_dir/$arg"
            ok "$where is saved as $arg"
            ;;
        append)
            { echo; cat "$block"; } >>"$arg"
            ok "$where is added to $arg"
            ;;
        esac
    done 4<"$dir/manifest"
}
stop_guide_background() {
    local entry
    for entry in "${guide_bg[@]}"; do
        kill -TERM -- "-${entry%%:*}" 2>/dev/null
        wait "${entry%%:*}" 2>/dev/null
    done
    guide_bg=()
}

# start_as_unit: what `systemctl start signupd` does, read from the installed unit so the two
# cannot drift: LoadCredential= copies each file, or each file of a directory as <id>_<file
# name>, into the service's credentials directory (a missing one fails the start); Environment=,
# WorkingDirectory=, StateDirectory=, UMask= and NoNewPrivileges=; ExecStart= runs as an
# unprivileged user of its own, as DynamicUser= would. (systemd keeps a dynamic user's state in
# /var/lib/private/signupd and mounts it at /var/lib/signupd; here it is a plain directory.)
unit_uid=61184
unit_credentials=/run/credentials/signupd.service
unit_pid=""
start_as_unit() {
    local unit=/lib/systemd/system/signupd.service id source file ready=no
    local -a environment exec_start
    rm -rf "$unit_credentials"
    install -d -m 0755 /run/credentials
    install -d -m 0700 "$unit_credentials"
    while IFS= read -r line; do
        id="${line%%:*}"
        source="${line#*:}"
        if [ -d "$source" ]; then
            for file in "$source"/*; do
                [ -f "$file" ] && cp "$file" "$unit_credentials/${id}_$(basename "$file")"
            done
        elif [ -f "$source" ]; then
            cp "$source" "$unit_credentials/$id"
        else
            bad "LoadCredential=$line: $source is missing, systemd would not start the service"
            return 1
        fi
    done < <(sed -n 's/^LoadCredential=//p' "$unit")
    chown -R "$unit_uid:$unit_uid" "$unit_credentials"
    chmod 0500 "$unit_credentials"
    chmod 0400 "$unit_credentials"/*
    mapfile -t environment < <(sed -n 's/^Environment=//p' "$unit")
    read -ra exec_start < <(sed -n 's/^ExecStart=//p' "$unit")
    install -d -m "$(sed -n 's/^StateDirectoryMode=//p' "$unit")" -o "$unit_uid" -g "$unit_uid" \
        "/var/lib/$(sed -n 's/^StateDirectory=//p' "$unit")"
    (
        umask "$(sed -n 's/^UMask=//p' "$unit")"
        cd "$(sed -n 's/^WorkingDirectory=//p' "$unit")" &&
            exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CREDENTIALS_DIRECTORY="$unit_credentials" "${environment[@]}" \
                setpriv --reuid="$unit_uid" --regid="$unit_uid" --clear-groups --no-new-privs -- "${exec_start[@]}"
    ) >>"$work/service.log" 2>&1 &
    unit_pid=$!
    for _ in $(seq 1 300); do
        if [ "$(http_status 8080 GET /readyz 2>/dev/null)" = 200 ]; then ready=yes; break; fi
        kill -0 "$unit_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ "$ready" = yes ] || sed 's/^/      | /' "$work/service.log" | tail -10
    check "the service starts as the unit would (credentials from LoadCredential=, its own user) and is ready on 127.0.0.1:8080" \
        test "$ready" = yes
}
stop_as_unit() {
    [ -n "$unit_pid" ] || return 0
    kill -TERM "$unit_pid" 2>/dev/null
    wait "$unit_pid"
    check "the service stops cleanly on SIGTERM" test $? -eq 0
    unit_pid=""
    rm -rf "$unit_credentials"
}

fresh_machine
rm -f "$backup_today"
dpkg -i "$deb" >"$work/guide-install.log" 2>&1
check "dpkg -i succeeds" test $? -eq 0
check "nothing else listens on 127.0.0.1:8080, the shipped listen address" test "$(http_status 8080 GET /healthz 2>/dev/null)" = 000

# The test relay, then the one edit.
python3 "$repo/tests/package/smtp_catcher.py" --dir "$mailbox" --port-file "$work/smtp.port" \
    --user "$guide_user" --password "${guide_input[smtp-password]%$'\n'}" >"$work/smtp.log" 2>&1 &
smtp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/smtp.port" ] && break; sleep 0.1; done
check "the test relay listens on 127.0.0.1" test -s "$work/smtp.port"
# The fake listmonk of the destination: it takes only the API user and token typed below.
check "nothing else listens on 127.0.0.1:$listmonk_port (the fake listmonk's port)" \
    test "$(http_status "$listmonk_port" GET /)" = 000
python3 "$repo/tests/package/fake_listmonk.py" --port "$listmonk_port" --user "$listmonk_user" \
    --token "$listmonk_token" >"$work/listmonk.log" 2>&1 &
listmonk_pid=$!
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$listmonk_port") 2>/dev/null && break
    sleep 0.1
done
check "the fake listmonk listens on 127.0.0.1:$listmonk_port" test "$(http_status "$listmonk_port" GET /api/lists/3)" = 403
config=/etc/signupd/signupd.toml
for ((i = 0; i < ${#guide_fill[@]}; i += 2)); do
    shipped="${guide_fill[i]}"
    filled="${guide_fill[i + 1]//@SMTP_PORT@/$(cat "$work/smtp.port" 2>/dev/null)}"
    if [ "$(grep -cxF -- "$shipped" "$config")" = 1 ]; then
        awk -v a="$shipped" -v b="$filled" '$0 == a { print b; next } { print }' "$config" >"$work/config.new"
        cat "$work/config.new" >"$config"
    else
        bad "the shipped configuration has the line '$shipped' once (to fill in)"
    fi
done
check "the filled-in configuration names no reserved example domain" \
    bash -c "! grep -vE '^\\s*#' '$config' | grep -qE 'example\\.(com|net|org)'"

run_guide_part 1
check_mode /etc/signupd/credentials/smtp/password "0600 root:root"
check_mode /etc/signupd/credentials/webhook/crm "0600 root:root"

# What `systemctl enable --now signupd` does.
start_as_unit
run_guide_part 2
check "send-test-mail reached the relay, logged in with the typed password, for the substituted address" \
    bash -c "grep -q 'AUTH ok user=$guide_user' '$work/smtp.log' && grep -q 'to=postmaster@newsletter-operator.net' '$work/smtp.log'"
check_mode "$operator_dir/subscribers.csv" "0600 root:root"
check_mode "$backup_today" "0600 root:root"
curl -fsS "http://127.0.0.1:8080/signup?list=default" >"$work/signup-page.html" 2>&1
check "the signup page carries the brand: a link back to site_url, named after site_name" \
    grep -q 'href="https://www.newsletter-operator.net/"[^>]*>← Back to Newsletter Operator' "$work/signup-page.html"

run_guide_part 3
receiver_log="$(for entry in "${guide_bg[@]}"; do echo "${entry#*:}"; done | head -1)"
check "the documented receiver verified send-test-webhook's signed test event and printed it" \
    grep -qE '^[^ ]+ test ' "$receiver_log"

run_guide_part 4
check_mode /etc/signupd/credentials/destination/newsletter "0600 root:root"
check "send-test-destination's call reached the fake listmonk with the typed credential (token user:token)" \
    grep -qx 'GET /api/lists/3' "$work/listmonk.log"
check "... and it printed the list listmonk described" \
    grep -hqE '^newsletter \(listmonk\): list 3 "Newsletter" \(double opt-in, 0 subscribers\), in [0-9]+ ms$' "$guide"/4/*.log
grep -q '^GET /api/lists/3$' "$work/listmonk.log" || sed 's/^/      | /' "$work/listmonk.log" | tail -5
# A real confirmation through the service: after the restart the guides ask for, the service has
# the new endpoint and its secret (the credential webhook_crm) and the destination with its
# credential (destination_newsletter); the confirmation mail goes through the relay with the
# SMTP password (the credential smtp_password).
stop_as_unit
start_as_unit
signup="$(http_status 8080 POST /api/signup "CF-Connecting-IP: 198.51.100.23" -- "email=reader%40example.net&consent=yes&list=default")"
check "a visitor's signup is accepted (303)" test "$signup" = 303
token=""
for _ in $(seq 1 200); do
    token="$(grep -ho 'newsletter-operator.net/confirm?token=[A-Za-z0-9_-]*' "$mailbox"/*.txt 2>/dev/null | head -1 | sed 's/.*token=//')"
    [ -n "$token" ] && break
    sleep 0.1
done
check "the confirmation mail went through the relay, with the SMTP password the service got as a credential" test -n "$token"
check "the visitor confirms (303)" test "$(http_status 8080 POST /api/confirm -- "token=$token")" = 303
delivered=no
for _ in $(seq 1 200); do
    if grep -q 'subscriber.confirmed.*reader@example.net' "$receiver_log"; then delivered=yes; break; fi
    sleep 0.1
done
check "the receiver verified and printed subscriber.confirmed (the service signed it with the credential webhook_crm)" \
    test "$delivered" = yes
[ "$delivered" = yes ] || sed 's/^/      | /' "$receiver_log" | tail -5
handed=no
for _ in $(seq 1 200); do
    if grep -qx 'POST /api/subscribers email=reader@example.net lists=\[3\] preconfirm_subscriptions=true' "$work/listmonk.log"; then
        handed=yes
        break
    fi
    sleep 0.1
done
check "the fake listmonk got the confirmed subscriber, on list 3, preconfirmed (the service read the credential destination_newsletter)" \
    test "$handed" = yes
[ "$handed" = yes ] || sed 's/^/      | /' "$work/listmonk.log" | tail -5

# What `apt purge` does first (prerm: stop the service), then the end of the guide.
stop_as_unit
stop_guide_background
run_guide_part 5
check "nothing of signupd is left after the guide's purge and rm" \
    bash -c "! dpkg-query -W -f='\${Status}' signupd 2>/dev/null | grep -q installed && [ ! -e /etc/signupd ] && [ ! -e /var/lib/signupd ] && [ ! -e /var/lib/private/signupd ]"
kill "$smtp_pid" "$listmonk_pid" 2>/dev/null
wait "$smtp_pid" "$listmonk_pid" 2>/dev/null
rm -f "$backup_today"

step "clean up"
dpkg --purge signupd >/dev/null 2>&1
rm -rf /etc/signupd /var/lib/signupd /var/lib/private/signupd
check "nothing of signupd is left" bash -c "[ ! -e /etc/signupd ] && [ ! -e /var/lib/private/signupd ]"

echo
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
