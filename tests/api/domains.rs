//! Domain policy at signup (docs/http-api.md, the order of checks, end of step 4): the blocked
//! domains file (`signup.blocked_domains_file`: matching, refusal, reload on SIGHUP, refusal at
//! start) and the MX check (`signup.check_mx`) against a name server this file runs on
//! 127.0.0.1, which answers per domain and counts what it is asked.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hickory_resolver::proto::op::{Message, ResponseCode};
use hickory_resolver::proto::rr::rdata::{A, MX, SOA};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use serde_json::json;

use crate::helpers::{TestApp, files_under, spawn_app_with, write_config};
use crate::process;
use crate::signup::{
    RAISED_LIMITS, assert_json_accepted, assert_json_error, assert_nothing_saved, assert_redirected_to_check_inbox,
    count, post_form, post_json, strings, valid, valid_json,
};

// ---------------------------------------------------------------------------------------------
// A name server for the tests

/// How the test name server answers for one domain.
#[derive(Debug, Clone, Copy)]
enum Zone {
    /// `MX 10 mail.<domain>`; no address records.
    Mx,
    /// No MX; `A 192.0.2.1` (RFC 5321 §5.1's implicit MX).
    AddressOnly,
    /// `MX 0 .` (RFC 7505).
    NullMx,
    /// Exists, but has no MX, A or AAAA record; answers without an SOA, so the answer carries
    /// no negative TTL (the check caches it for its minimum).
    Empty,
    /// NXDOMAIN, with an SOA as a real server sends.
    Missing,
    /// Never answers.
    Silent,
    /// These MX records (preference, host); no address records.
    Hosted(&'static [(u16, &'static str)]),
}

/// A UDP name server on 127.0.0.1 port 0, answering per [`Zone`]; a name it does not know is
/// answered SERVFAIL (which the check must take as "cannot tell" and accept). It runs as a
/// task of the test's runtime and ends with it.
struct NameServer {
    address: SocketAddr,
    /// Every query received: (domain without the final dot, record type).
    queries: Arc<Mutex<Vec<(String, RecordType)>>>,
}

impl NameServer {
    async fn start(zones: &[(&str, Zone)]) -> Self {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let address = socket.local_addr().unwrap();
        let zones: HashMap<String, Zone> = zones.iter().map(|(name, zone)| ((*name).to_owned(), *zone)).collect();
        let queries = Arc::new(Mutex::new(Vec::new()));
        let log = queries.clone();
        tokio::spawn(async move {
            let mut buffer = [0_u8; 4096];
            loop {
                let Ok((len, peer)) = socket.recv_from(&mut buffer).await else { return };
                let Ok(request) = Message::from_vec(&buffer[..len]) else { continue };
                let Some(reply) = answer(&zones, &request, &log) else { continue };
                let _ = socket.send_to(&reply.to_vec().unwrap(), peer).await;
            }
        });
        Self { address, queries }
    }

    /// How many queries of `record_type` for `domain` arrived.
    fn asked(&self, domain: &str, record_type: RecordType) -> usize {
        self.queries.lock().unwrap().iter().filter(|(name, kind)| name == domain && *kind == record_type).count()
    }

    fn total(&self) -> usize {
        self.queries.lock().unwrap().len()
    }

    /// `[signup]` with the MX check on, asking this server only.
    fn config(&self) -> String {
        format!("{RAISED_LIMITS}check_mx = true\ndns_servers = [\"{}\"]\n", self.address)
    }
}

fn name(text: &str) -> Name {
    Name::from_ascii(text).unwrap()
}

/// The reply to one query, or `None` to stay silent.
fn answer(zones: &HashMap<String, Zone>, request: &Message, log: &Mutex<Vec<(String, RecordType)>>) -> Option<Message> {
    let query = request.queries.first()?;
    let domain = query.name().to_ascii().trim_end_matches('.').to_ascii_lowercase();
    let kind = query.query_type();
    log.lock().unwrap().push((domain.clone(), kind));

    let mut reply = Message::response(request.metadata.id, request.metadata.op_code);
    reply.metadata.authoritative = true;
    reply.metadata.recursion_desired = request.metadata.recursion_desired;
    reply.metadata.recursion_available = true;
    reply.add_query(query.clone());
    let owner = query.name().clone();
    let soa = Record::from_rdata(
        owner.clone(),
        300,
        RData::SOA(SOA::new(name("ns.test."), name("hostmaster.test."), 1, 3600, 600, 86_400, 300)),
    );
    let Some(zone) = zones.get(&domain) else {
        reply.metadata.response_code = ResponseCode::ServFail;
        return Some(reply);
    };
    if let (Zone::Hosted(hosts), RecordType::MX) = (zone, kind) {
        for (preference, host) in *hosts {
            reply.add_answer(Record::from_rdata(owner.clone(), 300, RData::MX(MX::new(*preference, name(host)))));
        }
        return Some(reply);
    }
    let record = match (zone, kind) {
        (Zone::Silent, _) => return None,
        (Zone::Missing, _) => {
            reply.metadata.response_code = ResponseCode::NXDomain;
            None
        }
        (Zone::Mx, RecordType::MX) => Some(RData::MX(MX::new(10, name(&format!("mail.{domain}."))))),
        (Zone::NullMx, RecordType::MX) => Some(RData::MX(MX::new(0, Name::root()))),
        (Zone::AddressOnly, RecordType::A) => Some(RData::A(A::new(192, 0, 2, 1))),
        _ => None,
    };
    match record {
        Some(data) => {
            reply.add_answer(Record::from_rdata(owner, 300, data));
        }
        None if matches!(zone, Zone::Empty) => {}
        None => {
            reply.add_authority(soa);
        }
    }
    Some(reply)
}

const WITH_MX: &str = "with-mx.example";
const ADDRESS_ONLY: &str = "address-only.example";
const NULL_MX: &str = "null-mx.example";
const EMPTY: &str = "empty.example";
const MISSING: &str = "missing.example";
const SILENT: &str = "silent.example";

async fn name_server() -> NameServer {
    NameServer::start(&[
        (WITH_MX, Zone::Mx),
        (ADDRESS_ONLY, Zone::AddressOnly),
        (NULL_MX, Zone::NullMx),
        (EMPTY, Zone::Empty),
        (MISSING, Zone::Missing),
        (SILENT, Zone::Silent),
    ])
    .await
}

async fn app_asking(dns: &NameServer) -> TestApp {
    spawn_app_with(&dns.config()).await
}

// ---------------------------------------------------------------------------------------------
// check_mx

#[actix_web::test]
async fn a_domain_with_an_mx_record_is_accepted() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;

    let response = post_form(&app, &valid(&format!("jane@{WITH_MX}"))).await;

    assert_redirected_to_check_inbox(&response, "news", "domain with MX");
    assert_eq!(strings(&app, "SELECT email FROM intake"), [format!("jane@{WITH_MX}")]);
    assert_eq!(dns.asked(WITH_MX, RecordType::MX), 1, "the MX was asked");
    assert_eq!(dns.asked(WITH_MX, RecordType::A), 0, "an MX is enough; no address lookup");
}

#[actix_web::test]
async fn with_check_mx_a_domain_of_its_own_gets_the_inbox_link_of_the_provider_its_mx_names() {
    const WORKSPACE: &str = "workspace.example";
    const SPLIT: &str = "split.example";
    let dns = NameServer::start(&[
        (WORKSPACE, Zone::Hosted(&[(1, "aspmx.l.google.com."), (5, "alt1.aspmx.l.google.com.")])),
        (SPLIT, Zone::Hosted(&[(10, "aspmx.l.google.com."), (10, "mx.split.example.")])),
        (WITH_MX, Zone::Mx),
        ("gmail.com", Zone::Hosted(&[(5, "gmail-smtp-in.l.google.com.")])),
    ])
    .await;
    let app = app_asking(&dns).await;

    let workspace = post_form(&app, &valid(&format!("jane@{WORKSPACE}"))).await;
    let location = workspace.headers().get("location").unwrap().to_str().unwrap().to_owned();
    assert_eq!(location, "/check-inbox?list=news&inbox=gmail", "Google Workspace's MX hosts are Gmail's");
    assert_eq!(dns.asked(WORKSPACE, RecordType::MX), 1, "the provider comes from the check's own answer");
    let split = post_json(&app, valid_json(&format!("jane@{SPLIT}"))).await;
    assert_json_accepted(split, "a known and an unknown host at one preference: no link").await;
    let own = post_json(&app, valid_json(&format!("jane@{WITH_MX}"))).await;
    assert_json_accepted(own, "a mail host of its own: no link").await;
    let known = post_json(&app, valid_json("jane@gmail.com")).await;
    let known: serde_json::Value = known.json().await.unwrap();
    assert_eq!(known["inbox"]["name"], "Gmail", "{known}");
    assert_eq!(dns.asked("gmail.com", RecordType::MX), 1, "a known domain is still checked, once");
}

#[actix_web::test]
async fn a_domain_with_only_an_address_record_is_accepted() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;

    let response = post_json(&app, valid_json(&format!("jane@{ADDRESS_ONLY}"))).await;

    assert_json_accepted(response, "A record, no MX").await;
    assert_eq!(count(&app, "intake"), 1);
    assert_eq!(dns.asked(ADDRESS_ONLY, RecordType::A), 1, "without an MX, the address records count");
}

#[actix_web::test]
async fn domains_that_receive_no_mail_are_refused_as_invalid_email_and_nothing_is_stored() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;
    let cases = [("NXDOMAIN", MISSING), ("null MX (RFC 7505)", NULL_MX), ("neither MX nor A/AAAA", EMPTY)];

    for (case, domain) in cases {
        let response = post_json(&app, valid_json(&format!("jane@{domain}"))).await;

        assert_json_error(response, 400, "invalid_email", case).await;
        assert!(dns.asked(domain, RecordType::MX) > 0, "{case}: the DNS was asked");
    }
    assert_nothing_saved(&app, false, "refused by the MX check");
    assert_eq!(dns.asked(NULL_MX, RecordType::A), 0, "a null MX is final: no address lookup");
}

#[actix_web::test]
async fn a_browser_refused_by_the_mx_check_gets_the_form_back_with_its_address() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;

    let response = post_form(&app, &valid(&format!("jane@{MISSING}"))).await;

    assert_eq!(response.status().as_u16(), 400);
    let page = response.text().await.unwrap();
    assert!(page.contains("Please enter a valid email address"), "{page}");
    assert!(page.contains(&format!("value=\"jane@{MISSING}\"")), "the typed address is kept: {page}");
}

#[actix_web::test]
async fn a_name_server_that_never_answers_accepts_the_address_within_seconds() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;
    let started = Instant::now();

    let response = post_json(&app, valid_json(&format!("jane@{SILENT}"))).await;

    let waited = started.elapsed();
    assert_json_accepted(response, "DNS timeout").await;
    assert!(waited < Duration::from_secs(6), "the check gave up after {waited:?}");
    assert!(dns.asked(SILENT, RecordType::MX) >= 1, "the DNS was asked");
    assert_eq!(count(&app, "intake"), 1);
}

#[actix_web::test]
async fn a_flood_of_made_up_domains_asks_the_dns_about_a_bounded_number_at_once() {
    // Arrange: sixty domains whose name server never answers
    let domains: Vec<String> = (0..60).map(|n| format!("s{n}.{SILENT}")).collect();
    let zones: Vec<(&str, Zone)> = domains.iter().map(|domain| (domain.as_str(), Zone::Silent)).collect();
    let dns = NameServer::start(&zones).await;
    let app = app_asking(&dns).await;

    // Act: sixty signups at once, each with its own domain
    let signups = domains.iter().map(|domain| post_json(&app, valid_json(&format!("jane@{domain}"))));
    let responses = futures_util::future::join_all(signups).await;

    // Assert: everyone is accepted; the DNS heard about no more domains than the bound
    for response in responses {
        assert_json_accepted(response, "unchecked or timed out").await;
    }
    let asked: std::collections::BTreeSet<String> =
        dns.queries.lock().unwrap().iter().map(|(name, _)| name.clone()).collect();
    assert!(!asked.is_empty(), "the DNS was asked");
    assert!(
        asked.len() <= signupd::door::domain_policy::MAX_LOOKUPS_IN_FLIGHT,
        "{} domains asked at once, more than {}",
        asked.len(),
        signupd::door::domain_policy::MAX_LOOKUPS_IN_FLIGHT
    );
    assert_eq!(count(&app, "intake"), 60);
}

#[actix_web::test]
async fn a_server_failure_accepts_the_address() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;

    // The test server answers SERVFAIL for names it does not know.
    let response = post_json(&app, valid_json("jane@unknown-to-the-server.example")).await;

    assert_json_accepted(response, "SERVFAIL").await;
    assert!(dns.total() >= 1, "the DNS was asked");
}

#[actix_web::test]
async fn answers_found_or_not_are_cached() {
    let dns = name_server().await;
    let app = app_asking(&dns).await;

    for local in ["jane", "john"] {
        assert_json_accepted(post_json(&app, valid_json(&format!("{local}@{WITH_MX}"))).await, WITH_MX).await;
        assert_json_accepted(post_json(&app, valid_json(&format!("{local}@{ADDRESS_ONLY}"))).await, ADDRESS_ONLY).await;
        let refused = post_json(&app, valid_json(&format!("{local}@{MISSING}"))).await;
        assert_json_error(refused, 400, "invalid_email", MISSING).await;
        let refused = post_json(&app, valid_json(&format!("{local}@{EMPTY}"))).await;
        assert_json_error(refused, 400, "invalid_email", EMPTY).await;
    }

    let asked_once = [
        (WITH_MX, RecordType::MX),
        (ADDRESS_ONLY, RecordType::MX),
        (ADDRESS_ONLY, RecordType::A),
        (MISSING, RecordType::MX),
        (EMPTY, RecordType::MX),
        (EMPTY, RecordType::A),
        (EMPTY, RecordType::AAAA),
    ];
    for (domain, kind) in asked_once {
        assert_eq!(dns.asked(domain, kind), 1, "{domain} {kind}: the second signup used the cache");
    }
}

#[actix_web::test]
async fn the_dns_is_asked_only_for_addresses_that_passed_every_other_check() {
    let dns = name_server().await;
    let blocked = BlockedFile::new("blocked.example\n");
    let app = spawn_app_with(&format!("{}blocked_domains_file = {:?}\n", dns.config(), blocked.path())).await;

    let no_consent = post_json(&app, json!({"email": format!("jane@{MISSING}"), "list": "news"})).await;
    assert_json_error(no_consent, 400, "consent_required", "no consent").await;
    let no_list = post_json(&app, json!({"email": format!("jane@{MISSING}"), "consent": true, "list": "nope"})).await;
    assert_json_error(no_list, 400, "unknown_list", "unknown list").await;
    let blocked_domain = post_json(&app, valid_json("jane@blocked.example")).await;
    assert_json_error(blocked_domain, 400, "domain_not_allowed", "blocked domain").await;

    assert_eq!(dns.total(), 0, "no DNS query for a request refused before");
    assert_nothing_saved(&app, false, "refused before the DNS");
}

#[actix_web::test]
async fn without_check_mx_the_dns_is_never_asked() {
    let dns = name_server().await;
    let app = spawn_app_with(&format!("{RAISED_LIMITS}dns_servers = [\"{}\"]\n", dns.address)).await;

    assert_json_accepted(post_json(&app, valid_json(&format!("jane@{MISSING}"))).await, "check_mx off").await;

    assert_eq!(dns.total(), 0);
}

// ---------------------------------------------------------------------------------------------
// blocked_domains_file, in process

/// A blocked domains file in its own temporary directory.
struct BlockedFile {
    dir: tempfile::TempDir,
}

impl BlockedFile {
    fn new(text: &str) -> Self {
        let file = Self { dir: tempfile::tempdir().unwrap() };
        file.write(text);
        file
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("blocked-domains.txt")
    }

    fn write(&self, text: &str) {
        std::fs::write(self.path(), text).unwrap();
    }
}

const BLOCKLIST: &str = "# Disposable mail\n\
    blocked.example\n\
    Bücher.example   # an IDN, written in Unicode\n\
    \n\
    SHOUTY.Example\n\
    # commented.example\n";

async fn app_blocking(file: &BlockedFile) -> TestApp {
    spawn_app_with(&format!("{RAISED_LIMITS}blocked_domains_file = {:?}\n", file.path())).await
}

#[actix_web::test]
async fn a_blocked_domain_and_its_subdomains_are_refused_and_nothing_is_stored() {
    let file = BlockedFile::new(BLOCKLIST);
    let app = app_blocking(&file).await;
    let cases = [
        ("exact", "jane@blocked.example"),
        ("subdomain", "jane@mail.blocked.example"),
        ("deeper subdomain", "jane@a.b.blocked.example"),
        ("address in capitals", "JANE@BLOCKED.EXAMPLE"),
        ("entry in capitals", "jane@shouty.example"),
        ("IDN entry, Unicode address", "jane@bücher.example"),
        ("IDN entry, punycode address", "jane@xn--bcher-kva.example"),
        ("IDN entry, address in capitals", "jane@BÜCHER.example"),
    ];

    for (case, email) in cases {
        let response = post_json(&app, valid_json(email)).await;

        assert_json_error(response, 400, "domain_not_allowed", case).await;
    }
    assert_nothing_saved(&app, false, "blocked domains");
}

#[actix_web::test]
async fn similar_domains_and_commented_out_lines_are_not_blocked() {
    let file = BlockedFile::new(BLOCKLIST);
    let app = app_blocking(&file).await;
    let cases = [
        ("same ending, other label", "jane@notblocked.example"),
        ("the parent", "jane@example.example"),
        ("the blocked name as a subdomain elsewhere", "jane@blocked.example.org"),
        ("commented out", "jane@commented.example"),
    ];

    for (case, email) in cases {
        assert_json_accepted(post_json(&app, valid_json(email)).await, case).await;
    }
    assert_eq!(count(&app, "intake"), 4);
}

#[actix_web::test]
async fn a_browser_with_a_blocked_domain_gets_the_form_back_with_a_plain_message() {
    let file = BlockedFile::new(BLOCKLIST);
    let app = app_blocking(&file).await;

    let response = post_form(&app, &valid("jane@blocked.example")).await;

    assert_eq!(response.status().as_u16(), 400);
    let page = response.text().await.unwrap();
    assert!(page.contains("Addresses at this domain cannot be used to sign up here"), "{page}");
    assert!(page.contains("value=\"jane@blocked.example\""), "the typed address is kept: {page}");
    assert_nothing_saved(&app, false, "blocked, HTML");
}

#[actix_web::test]
async fn a_german_list_explains_the_refusal_in_german() {
    let file = BlockedFile::new(BLOCKLIST);
    let app = spawn_app_with(&format!(
        "{RAISED_LIMITS}blocked_domains_file = {:?}\n[[lists]]\nid = \"news\"\nlanguage = \"de\"\n",
        file.path()
    ))
    .await;

    let response = post_form(&app, &valid("jane@blocked.example")).await;

    assert_eq!(response.status().as_u16(), 400);
    let page = response.text().await.unwrap();
    assert!(page.contains("Adressen dieser Domain"), "{page}");
}

#[actix_web::test]
async fn a_reload_swaps_the_list_and_a_bad_file_keeps_the_old_one() {
    let file = BlockedFile::new("blocked.example\n");
    let app = app_blocking(&file).await;
    assert_json_accepted(post_json(&app, valid_json("jane@later.example")).await, "not blocked yet").await;

    file.write("blocked.example\nlater.example\n");
    assert_eq!(app.state.domains.reload().await.unwrap(), Some(2));
    let refused = post_json(&app, valid_json("john@later.example")).await;
    assert_json_error(refused, 400, "domain_not_allowed", "blocked after the reload").await;

    file.write("blocked.example\nthis line is wrong\n");
    let error = format!("{:#}", app.state.domains.reload().await.unwrap_err());
    assert!(error.contains(&file.path().display().to_string()) && error.contains("line 2"), "{error}");
    let still = post_json(&app, valid_json("joan@later.example")).await;
    assert_json_error(still, 400, "domain_not_allowed", "the old list stays").await;

    std::fs::remove_file(file.path()).unwrap();
    assert!(app.state.domains.reload().await.is_err(), "a missing file is an error");
    assert_eq!(app.state.domains.blocked_count(), 2, "and the old list stays");
}

// ---------------------------------------------------------------------------------------------
// blocked_domains_file, the real binary

async fn signup_code(client: &reqwest::Client, serving: &process::Served, email: &str) -> (u16, serde_json::Value) {
    let response = client
        .post(serving.url("/api/signup"))
        .header("Content-Type", "application/json")
        .body(valid_json(email).to_string())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[actix_web::test]
async fn sighup_reloads_the_blocked_domains_and_a_bad_file_keeps_the_old_list() {
    let dir = tempfile::tempdir().unwrap();
    let file = BlockedFile::new("blocked.example\n");
    let config = write_config(
        dir.path(),
        &format!(
            "[server]\nmetrics_listen = \"127.0.0.1:0\"\n[mail]\nfile_dir = {:?}\n\
             {RAISED_LIMITS}blocked_domains_file = {:?}\n",
            dir.path().join("data").join("mail"),
            file.path()
        ),
    );
    let mut serving = process::serve(&config);
    assert!(
        serving
            .seen()
            .iter()
            .any(|line| line.contains("read signup.blocked_domains_file") && line.contains("domains=1"))
    );
    let client = process::client();
    let refused = json!({"ok": false, "error": "domain_not_allowed"});
    assert_eq!(signup_code(&client, &serving, "jane@later.example").await.0, 202, "not blocked yet");

    file.write("blocked.example\nlater.example # added\n");
    serving.signal("HUP");
    let reloaded = serving.wait_for(|line| line.contains("SIGHUP"));
    assert!(reloaded.contains("reloaded") && reloaded.contains("domains=2"), "{reloaded}");
    assert_eq!(signup_code(&client, &serving, "john@later.example").await, (400, refused.clone()));

    file.write("blocked.example\nnot a domain\n");
    serving.signal("HUP");
    let failed = serving.wait_for(|line| line.contains("SIGHUP"));
    assert!(failed.contains("ERROR") && failed.contains("previous list stays"), "{failed}");
    assert!(failed.contains(&file.path().display().to_string()) && failed.contains("line 2"), "{failed}");
    assert_eq!(signup_code(&client, &serving, "joan@later.example").await, (400, refused.clone()), "old list");
    assert!(serving.is_running(), "a bad file on SIGHUP does not stop the server");

    let metrics = client
        .get(format!("http://127.0.0.1:{}/metrics", serving.metrics_port.expect("serve logs metrics_port")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.lines().any(|line| line.starts_with("signupd_signups_total")
            && line.contains("outcome=\"domain_not_allowed\"")
            && line.contains("list=\"news\"")
            && line.ends_with(" 2")),
        "{metrics}"
    );

    serving.signal("TERM");
    assert_eq!(serving.wait(), Some(0));
    let log = serving.log();
    // The mail worker logs the one address it mailed masked, domain included (`j***@later.example`),
    // whenever it gets to it: that line is not the list's, every other is checked.
    let naming: Vec<&str> =
        log.lines().filter(|line| line.contains("later.example") || line.contains("blocked.example")).collect();
    assert!(
        naming.iter().all(|line| line.contains("mail written to file") && line.contains("j***@later.example")),
        "no domain of the list logged:\n{log}"
    );
}

#[actix_web::test]
async fn a_blocked_domains_file_that_cannot_be_read_or_has_a_bad_line_stops_the_start() {
    let missing = PathBuf::from("/nonexistent/blocked-domains.txt");
    let bad = BlockedFile::new("ok.example\n# a comment\nexample.com/path\n");
    let cases = [("missing file", missing, None), ("bad line", bad.path(), Some("line 3"))];

    for (case, path, line) in cases {
        let dir = tempfile::tempdir().unwrap();
        let config = write_config(dir.path(), &format!("[signup]\nblocked_domains_file = {path:?}\n"));
        let mut served = process::spawn_serve(&config);

        let status = served.exit_within(Duration::from_secs(30)).await.expect("serve exits");

        assert_eq!(status.code(), Some(1), "{case}");
        let stderr = served.remaining_stderr().join("\n");
        assert!(stderr.contains("signup.blocked_domains_file"), "{case}: the key is named: {stderr}");
        assert!(stderr.contains(&path.display().to_string()), "{case}: the file is named: {stderr}");
        if let Some(line) = line {
            assert!(stderr.contains(line), "{case}: the line is named: {stderr}");
        }
        assert_eq!(files_under(dir.path()), ["signupd.toml"], "{case}: nothing written");
    }
}
