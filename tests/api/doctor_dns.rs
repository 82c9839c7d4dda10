//! `signupd doctor`'s DNS checks (`operator::doctor::dns`) against a loopback name server that
//! publishes good, missing and wrong SPF, DMARC and DKIM records: SPF evaluated for the relay's
//! addresses, records with escape sequences and line breaks printed escaped, and the real
//! binary asking every question — the public URL's host too — through `signup.dns_servers`.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hickory_resolver::proto::op::{Message, ResponseCode};
use hickory_resolver::proto::rr::rdata::{A, SOA, TXT};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};
use signupd::operator::doctor::dns::checks;
use signupd::operator::doctor::{Check, Report, Verdict, print};

use crate::helpers::{signupd, write_config};
use crate::smtp_server::SmtpServer;

const DOMAIN: &str = "bakery.test";
const DKIM_AT: &str = "s1._domainkey.bakery.test";
const GOOD_SPF: &str = "v=spf1 include:_spf.relay.test ~all";
const GOOD_DMARC: &str = "v=DMARC1; p=reject; rua=mailto:dmarc@bakery.test";

/// What the test name server answers for one name.
#[derive(Debug, Clone)]
enum Zone {
    /// These TXT records (each one character string, or several when longer than 255).
    Txt(Vec<String>),
    /// SERVFAIL.
    Failing,
    /// This IPv4 address (`A`); no other record.
    Address(Ipv4Addr),
}

/// A UDP name server on 127.0.0.1 port 0: TXT records per name, NXDOMAIN (with an SOA) for a
/// name it does not know, an empty answer for any other record type. It runs as a task of the
/// test's runtime and ends with it.
async fn name_server(zones: Vec<(&str, Zone)>) -> SocketAddr {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    let zones: HashMap<String, Zone> = zones.into_iter().map(|(name, zone)| (name.to_owned(), zone)).collect();
    tokio::spawn(async move {
        let mut buffer = [0_u8; 4096];
        loop {
            let Ok((len, peer)) = socket.recv_from(&mut buffer).await else { return };
            let Ok(request) = Message::from_vec(&buffer[..len]) else { continue };
            let Some(reply) = answer(&zones, &request) else { continue };
            let _ = socket.send_to(&reply.to_vec().unwrap(), peer).await;
        }
    });
    address
}

fn answer(zones: &HashMap<String, Zone>, request: &Message) -> Option<Message> {
    let query = request.queries.first()?;
    let domain = query.name().to_ascii().trim_end_matches('.').to_ascii_lowercase();
    let mut reply = Message::response(request.metadata.id, request.metadata.op_code);
    reply.metadata.authoritative = true;
    reply.metadata.recursion_desired = request.metadata.recursion_desired;
    reply.metadata.recursion_available = true;
    reply.add_query(query.clone());
    let owner = query.name().clone();
    let soa = RData::SOA(SOA::new(
        Name::from_ascii("ns.test.").unwrap(),
        Name::from_ascii("hostmaster.test.").unwrap(),
        1,
        3600,
        600,
        86_400,
        300,
    ));
    match zones.get(&domain) {
        None => {
            reply.metadata.response_code = ResponseCode::NXDomain;
            reply.add_authority(Record::from_rdata(owner, 300, soa));
        }
        Some(Zone::Failing) => reply.metadata.response_code = ResponseCode::ServFail,
        Some(Zone::Txt(records)) if query.query_type() == RecordType::TXT => {
            for text in records {
                let strings = text.as_bytes().chunks(255).map(|chunk| String::from_utf8(chunk.to_vec()).unwrap());
                reply.add_answer(Record::from_rdata(owner.clone(), 300, RData::TXT(TXT::new(strings.collect()))));
            }
        }
        Some(Zone::Address(address)) if query.query_type() == RecordType::A => {
            reply.add_answer(Record::from_rdata(owner, 300, RData::A(A(*address))));
        }
        Some(Zone::Txt(_) | Zone::Address(_)) => {
            reply.add_authority(Record::from_rdata(owner, 300, soa));
        }
    }
    Some(reply)
}

fn txt(records: &[&str]) -> Zone {
    Zone::Txt(records.iter().map(|record| (*record).to_owned()).collect())
}

/// A fresh Ed25519 key: the base64 32-byte seed `[mail.dkim]` reads, and the DKIM record that
/// publishes its public key.
fn ed25519_key() -> (String, String) {
    let mut seed = [0_u8; 32];
    SystemRandom::new().fill(&mut seed).unwrap();
    let pair = Ed25519KeyPair::from_seed_unchecked(&seed).unwrap();
    (STANDARD.encode(seed), format!("v=DKIM1; k=ed25519; p={}", STANDARD.encode(pair.public_key().as_ref())))
}

/// The DNS checks of a config whose one list sends from `news@bakery.test`, asking `server`;
/// with `dkim_seed`, `[mail.dkim]` signs with that key as selector `s1` of `bakery.test`.
async fn doctor(server: SocketAddr, dkim_seed: Option<&str>) -> Vec<Check> {
    doctor_sending_to(server, dkim_seed, None).await
}

/// [`doctor`], with mail going to the SMTP relay `relay_host` (a name or an address) when given.
async fn doctor_sending_to(server: SocketAddr, dkim_seed: Option<&str>, relay_host: Option<&str>) -> Vec<Check> {
    let dir = tempfile::tempdir().unwrap();
    let mut toml = format!(
        "[signup]\ndns_servers = [\"{server}\"]\n[mail]\nfile_dir = {:?}\n",
        dir.path().join("mail").display().to_string()
    );
    if let Some(host) = relay_host {
        toml.push_str(&format!("transport = \"smtp\"\n[mail.smtp]\nhost = \"{host}\"\nport = 587\n"));
    }
    if let Some(seed) = dkim_seed {
        let key = dir.path().join("dkim.key");
        std::fs::write(&key, seed).unwrap();
        toml.push_str(&format!(
            "[mail.dkim]\nselector = \"s1\"\ndomain = \"{DOMAIN}\"\nalgorithm = \"ed25519\"\nprivate_key_file = {:?}\n",
            key.display().to_string()
        ));
    }
    toml.push_str("[[lists]]\nid = \"news\"\nfrom = \"Bakery <news@bakery.test>\"\n");
    let config = signupd::config::Config::from_toml(&toml).unwrap();
    checks(&config).await
}

fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|check| check.name == name).unwrap_or_else(|| panic!("no check {name:?} in {checks:#?}"))
}

/// `check` came out `verdict`, and, when not ok, says what to do with `todo` among its words.
fn assert_check(check: &Check, verdict: Verdict, saw: &str, todo: &str) {
    assert_eq!(check.area, "dns", "{check:#?}");
    assert_eq!(check.verdict, verdict, "{check:#?}");
    assert!(check.saw.contains(saw), "saw should mention {saw:?}: {check:#?}");
    match verdict {
        Verdict::Ok => assert_eq!(check.todo, None, "{check:#?}"),
        _ => assert!(
            check.todo.as_deref().is_some_and(|text| text.contains(todo)),
            "todo should say {todo:?}: {check:#?}"
        ),
    }
}

#[tokio::test]
async fn good_spf_dmarc_and_a_matching_dkim_key_are_all_ok() {
    let (seed, record) = ed25519_key();
    let server = name_server(vec![
        (DOMAIN, txt(&["google-site-verification=abc", GOOD_SPF])),
        ("_dmarc.bakery.test", txt(&[GOOD_DMARC])),
        (DKIM_AT, txt(&[&record])),
    ])
    .await;
    let checks = doctor(server, Some(&seed)).await;
    assert_eq!(checks.len(), 3, "{checks:#?}");
    assert_check(find(&checks, "SPF of bakery.test"), Verdict::Ok, GOOD_SPF, "");
    assert_check(find(&checks, "DMARC of bakery.test"), Verdict::Ok, "p=reject", "");
    assert_check(find(&checks, "DKIM key s1._domainkey.bakery.test"), Verdict::Ok, "verifies", "");
}

#[tokio::test]
async fn missing_spf_and_dmarc_are_warnings_that_say_what_to_publish() {
    let (seed, record) = ed25519_key();
    // The domain exists (its TXT is unrelated); `_dmarc` does not (NXDOMAIN).
    let server = name_server(vec![(DOMAIN, txt(&["google-site-verification=abc"])), (DKIM_AT, txt(&[&record]))]).await;
    let checks = doctor(server, Some(&seed)).await;
    assert_check(find(&checks, "SPF of bakery.test"), Verdict::Warning, "no SPF record", "v=spf1 include:");
    assert_check(
        find(&checks, "DMARC of bakery.test"),
        Verdict::Warning,
        "no DMARC record",
        "v=DMARC1; p=none; rua=mailto:",
    );
    assert_check(find(&checks, "DKIM key s1._domainkey.bakery.test"), Verdict::Ok, "verifies", "");
}

#[tokio::test]
async fn spf_plus_all_is_a_problem_and_question_all_a_warning() {
    for (spf, verdict, saw, todo) in [
        ("v=spf1 include:_spf.relay.test +all", Verdict::Problem, "anyone may send", "~all or -all"),
        ("v=spf1 a mx all", Verdict::Problem, "anyone may send", "~all or -all"),
        ("v=spf1 include:_spf.relay.test ?all", Verdict::Warning, "?all", "~all or -all"),
        ("v=spf1 ip4:192.0.2.0/24 -all", Verdict::Ok, "-all", ""),
        ("v=spf1 redirect=_spf.relay.test", Verdict::Ok, "redirect", ""),
        ("v=spf1 include:_spf.relay.test ~all foo:bar:baz/", Verdict::Problem, "does not parse", "RFC 7208"),
    ] {
        let server = name_server(vec![(DOMAIN, txt(&[spf])), ("_dmarc.bakery.test", txt(&[GOOD_DMARC]))]).await;
        let checks = doctor(server, None).await;
        assert_check(find(&checks, "SPF of bakery.test"), verdict, saw, todo);
    }
}

#[tokio::test]
async fn two_spf_records_are_a_problem() {
    let server =
        name_server(vec![(DOMAIN, txt(&[GOOD_SPF, "v=spf1 -all"])), ("_dmarc.bakery.test", txt(&[GOOD_DMARC]))]).await;
    let checks = doctor(server, None).await;
    assert_check(find(&checks, "SPF of bakery.test"), Verdict::Problem, "2 SPF records", "merge them");
}

#[tokio::test]
async fn dmarc_p_none_is_a_warning_and_quarantine_is_ok() {
    for (dmarc, verdict, saw, todo) in [
        ("v=DMARC1; p=none; rua=mailto:dmarc@bakery.test", Verdict::Warning, "p=none", "p=quarantine"),
        ("v=DMARC1; p=quarantine", Verdict::Ok, "p=quarantine", ""),
    ] {
        let server = name_server(vec![(DOMAIN, txt(&[GOOD_SPF])), ("_dmarc.bakery.test", txt(&[dmarc]))]).await;
        let checks = doctor(server, None).await;
        assert_check(find(&checks, "DMARC of bakery.test"), verdict, saw, todo);
    }
}

#[tokio::test]
async fn a_dkim_record_with_another_key_is_a_problem() {
    let (seed, _) = ed25519_key();
    let (_, other_record) = ed25519_key();
    let server = name_server(vec![
        (DOMAIN, txt(&[GOOD_SPF])),
        ("_dmarc.bakery.test", txt(&[GOOD_DMARC])),
        (DKIM_AT, txt(&[&other_record])),
    ])
    .await;
    let checks = doctor(server, Some(&seed)).await;
    assert_check(
        find(&checks, "DKIM key s1._domainkey.bakery.test"),
        Verdict::Problem,
        "is not the public key",
        "p=<base64",
    );
}

#[tokio::test]
async fn a_missing_or_revoked_dkim_record_is_a_problem() {
    let (seed, _) = ed25519_key();
    for (zone, saw) in [
        (None, "no DKIM key at s1._domainkey.bakery.test"),
        (Some(txt(&["v=DKIM1; k=ed25519; p="])), "revoked"),
        (Some(txt(&["some unrelated text"])), "is a DKIM key"),
    ] {
        let mut zones = vec![(DOMAIN, txt(&[GOOD_SPF])), ("_dmarc.bakery.test", txt(&[GOOD_DMARC]))];
        zones.extend(zone.map(|zone| (DKIM_AT, zone)));
        let checks = doctor(name_server(zones).await, Some(&seed)).await;
        assert_check(
            find(&checks, "DKIM key s1._domainkey.bakery.test"),
            Verdict::Problem,
            saw,
            "TXT record at s1._domainkey.bakery.test: \"v=DKIM1; k=ed25519; p=",
        );
    }
}

#[tokio::test]
async fn without_mail_dkim_a_warning_says_the_relay_must_sign() {
    let server = name_server(vec![(DOMAIN, txt(&[GOOD_SPF])), ("_dmarc.bakery.test", txt(&[GOOD_DMARC]))]).await;
    let checks = doctor(server, None).await;
    assert_check(find(&checks, "DKIM"), Verdict::Warning, "no [mail.dkim]: the relay must sign", "[mail.dkim]");
}

#[tokio::test]
async fn a_failing_name_server_is_a_warning_naming_the_failure_not_a_crash() {
    let (seed, _) = ed25519_key();
    let server =
        name_server(vec![(DOMAIN, Zone::Failing), ("_dmarc.bakery.test", Zone::Failing), (DKIM_AT, Zone::Failing)])
            .await;
    let checks = doctor(server, Some(&seed)).await;
    for name in ["SPF of bakery.test", "DMARC of bakery.test", "DKIM key s1._domainkey.bakery.test"] {
        let check = find(&checks, name);
        assert_check(check, Verdict::Warning, "cannot ask for the TXT record", "signup.dns_servers");
    }
}

#[tokio::test]
async fn spf_is_evaluated_for_each_address_of_the_relay_and_a_record_that_leaves_it_out_is_a_problem() {
    // Regression: "v=spf1 ip4:192.0.2.25 -all" was ok although the relay is not 192.0.2.25.
    for (case, spf, relay, verdict, saw, todo) in [
        (
            "a record that leaves the relay out",
            "v=spf1 ip4:192.0.2.25 -all",
            "relay.bakery.test",
            Verdict::Problem,
            "does not let the relay relay.bakery.test send for bakery.test: 198.51.100.25 (fail: it may not send)",
            "add the relay to the SPF record at bakery.test",
        ),
        (
            "a softfail for the relay",
            "v=spf1 ip4:192.0.2.25 ~all",
            "198.51.100.25",
            Verdict::Problem,
            "198.51.100.25 (softfail",
            "ip4:/ip6:",
        ),
        (
            "a record that names the relay's address",
            "v=spf1 ip4:198.51.100.0/24 -all",
            "relay.bakery.test",
            Verdict::Ok,
            "lets the relay relay.bakery.test (198.51.100.25) send",
            "",
        ),
    ] {
        let server = name_server(vec![
            (DOMAIN, txt(&[spf])),
            ("_dmarc.bakery.test", txt(&[GOOD_DMARC])),
            ("relay.bakery.test", Zone::Address(Ipv4Addr::new(198, 51, 100, 25))),
        ])
        .await;
        let checks = doctor_sending_to(server, None, Some(relay)).await;
        let check = find(&checks, "SPF of bakery.test");
        assert_eq!(check.verdict, verdict, "{case}: {check:#?}");
        assert!(check.saw.contains(saw), "{case}: {check:#?}");
        assert!(check.todo.as_deref().unwrap_or_default().contains(todo), "{case}: {check:#?}");
    }
}

#[tokio::test]
async fn records_with_escape_sequences_and_line_breaks_are_printed_escaped() {
    // Regression: a TXT record with escape sequences cleared the terminal, and one with CR LF
    // printed a fake `ok dns: DKIM key verified` line.
    let fake = "v=spf1 -all\u{1b}[2J\u{1b}[H\r\nok       dns: DKIM key verified\u{7}";
    let server = name_server(vec![
        (DOMAIN, txt(&[fake])),
        ("_dmarc.bakery.test", txt(&["v=DMARC1; p=none\u{1b}]0;owned\u{7}"])),
    ])
    .await;
    let checks = doctor(server, None).await;

    let report = Report { checks: checks.clone(), problems: 0, warnings: 0 };
    let mut text = Vec::new();
    print(&report, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let json = serde_json::to_string(&report).unwrap();
    for (form, printed) in [("text", &text), ("json", &json)] {
        let raw: Vec<char> = printed.chars().filter(|c| c.is_control() && *c != '\n').collect();
        assert!(raw.is_empty(), "{form}: no raw control character: {raw:?} in {printed}");
    }
    assert!(!text.lines().any(|line| line.starts_with("ok       dns: DKIM")), "no forged line: {text}");
    assert!(text.contains("\\x1b[2J\\x1b[H\\r\\nok       dns: DKIM key verified\\x07"), "shown escaped: {text}");
    let serde_json::Value::Object(parsed) = serde_json::from_str(&json).unwrap() else { panic!("{json}") };
    let saws: Vec<String> = parsed["checks"].as_array().unwrap().iter().map(|check| check["saw"].to_string()).collect();
    assert!(saws.iter().any(|saw| saw.contains("\\\\x1b]0;owned")), "the JSON holds the escaped text: {saws:?}");
}

#[tokio::test]
async fn the_binary_asks_every_question_through_dns_servers_and_says_what_is_wrong() {
    // Arrange: a name server that alone knows bakery.test, its SPF that leaves the relay (on
    // 127.0.0.1) out, the public URL's host; an SMTP password in the credentials directory that
    // others can read
    let server = name_server(vec![
        (DOMAIN, txt(&["v=spf1 ip4:192.0.2.25 -all"])),
        ("_dmarc.bakery.test", txt(&[GOOD_DMARC])),
        ("signup.bakery.test", Zone::Address(Ipv4Addr::new(203, 0, 113, 10))),
    ])
    .await;
    let relay = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("credentials/smtp/password");
    std::fs::create_dir_all(password.parent().unwrap()).unwrap();
    std::fs::write(&password, "relay-password\n").unwrap();
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "[server]\npublic_url = \"https://signup.bakery.test\"\ntrusted_proxies = [\"127.0.0.1\"]\n\
             [signup]\ndns_servers = [\"{server}\"]\n{}\
             [[lists]]\nid = \"news\"\nfrom = \"Bakery <news@bakery.test>\"\n",
            relay.config()
        ),
    );

    // Act: the binary runs on a blocking thread while this runtime answers its DNS questions
    let mut command = signupd();
    command.arg("doctor").arg("--config").arg(&config);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();

    // Assert
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let line = |start: &str, needle: &str| {
        stdout
            .lines()
            .find(|line| line.starts_with(start) && line.contains(needle))
            .unwrap_or_else(|| panic!("no {start} line with {needle:?}:\n{stdout}"))
            .to_owned()
    };
    let spf = line("problem", "SPF of bakery.test");
    assert!(spf.contains("does not let the relay 127.0.0.1 send for bakery.test: 127.0.0.1 (fail"), "{stdout}");
    line("ok", "public URL https://signup.bakery.test/: signup.bakery.test resolves");
    let mode = line("problem", &password.display().to_string());
    assert!(mode.contains("mode 0644: others on the machine can read it"), "{stdout}");
    assert!(!stdout.contains("relay-password"), "no secret printed: {stdout}");
}
