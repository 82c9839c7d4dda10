//! The mail path (docs/operations.md "Mail delivery", docs/http-api.md "Tokens and links") against a real SMTP server
//! on 127.0.0.1 (`smtp_server.rs`) and the file transport: what a confirmation mail looks like, that its links match
//! the stored hashes and nothing else, the resend cooldown, retries with backoff, giving up (row deleted, operator
//! alerted without the address), outages, the hourly budget and privacy of errors.
//!
//! Both queues are driven by hand (`signup::try_execute_task`, then `mail::try_execute_task`)
//! with a manual clock, so nothing here races background work — except the tests that run the
//! real mail workers side by side on purpose, to see what only a race shows (the budget).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use futures_util::future::join_all;
use signupd::clock::Clock;
use signupd::outbound::mail::{MailOutcome, try_execute_task};

use crate::helpers::{START, TestApp, is_whole_link_token, link_token_at, spawn_app_with};
use crate::signup::{RAISED_LIMITS, count, db, drain, post_form, strings, valid};
use crate::smtp_server::{SmtpServer, free_port, smtp_config};

/// The default confirm link lifetime (48 h).
const CONFIRM_TTL: i64 = 48 * 3600;
/// Longer than the first backoffs (30 s, then 60 s, each +20 % at most).
const PAST_BACKOFF: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// Driving the queues

/// Runs the mail worker until it reports `EmptyQueue` or `RelayRefusing` (not included) or
/// `BudgetExhausted` (included: the queue is not empty, but nothing more will be sent this hour).
pub async fn run_mail(app: &TestApp) -> Vec<MailOutcome> {
    let mut outcomes = Vec::new();
    for _ in 0..1_000 {
        match try_execute_task(&app.state.mailer()).await.unwrap() {
            MailOutcome::EmptyQueue | MailOutcome::RelayRefusing => return outcomes,
            MailOutcome::BudgetExhausted => {
                outcomes.push(MailOutcome::BudgetExhausted);
                return outcomes;
            }
            outcome => outcomes.push(outcome),
        }
    }
    panic!("the mail queue never ran empty: {outcomes:?}");
}

/// Signs `email` up over HTTP (a browser form post) and applies the signup queue.
pub async fn sign_up(app: &TestApp, email: &str) {
    let response = post_form(app, &valid(email)).await;
    assert_eq!(response.status().as_u16(), 303, "signup of {email}");
    drain(app).await;
}

pub fn all_sent(outcomes: &[MailOutcome]) -> bool {
    outcomes.iter().all(|outcome| *outcome == MailOutcome::Sent)
}

fn now(app: &TestApp) -> i64 {
    app.clock.now()
}

/// Runs sixteen background mail workers, as `serve` runs them, all starting at once, until `done`
/// (polled every 100 ms, for 30 s at most), then three seconds more — a few ticks of every
/// worker, for any claim over a bound or out of order to show — and stops them. What only a
/// race shows is tested here, not by driving the queue step by step.
pub async fn race_mail_workers(app: &TestApp, done: impl Fn() -> bool) {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let mut stopped = stopped.clone();
            let shutdown = async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            actix_web::rt::spawn(signupd::outbound::mail::run_worker(app.state.mailer(), shutdown))
        })
        .collect();
    for _ in 0..300 {
        if done() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.send(true).unwrap();
    for worker in workers {
        worker.await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Reading mail

/// A received mail: unfolded top-level headers and its decoded MIME parts.
#[derive(Debug)]
pub struct Mail {
    headers: Vec<(String, String)>,
    /// (content type, decoded text) of each leaf part; one entry for a single-part mail.
    parts: Vec<(String, String)>,
}

impl Mail {
    pub fn parse(raw: &[u8]) -> Self {
        let raw = String::from_utf8(raw.to_vec()).expect("a mail is 7-bit or UTF-8 text");
        let (headers, body) = split_entity(&raw);
        let mut parts = Vec::new();
        collect_parts(&headers, body, &mut parts);
        Self { headers, parts }
    }

    /// The value of the one header `name`; fails if it is missing or repeated.
    fn header(&self, name: &str) -> &str {
        let values: Vec<&str> = self
            .headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect();
        assert_eq!(values.len(), 1, "header {name}: {values:?} in {:?}", self.headers);
        values[0]
    }

    fn has_header(&self, name: &str) -> bool {
        self.headers.iter().any(|(key, _)| key.eq_ignore_ascii_case(name))
    }

    pub fn part(&self, content_type: &str) -> &str {
        let found: Vec<&str> = self
            .parts
            .iter()
            .filter(|(kind, _)| kind.to_ascii_lowercase().starts_with(content_type))
            .map(|(_, text)| text.as_str())
            .collect();
        assert_eq!(found.len(), 1, "one {content_type} part in {:?}", self.parts);
        found[0]
    }

    /// The token of the `{public_url}{path}?token=` link, the same in every part.
    fn token(&self, path: &str) -> String {
        let needle = format!("http://127.0.0.1:8080{path}?token=");
        let tokens: BTreeSet<String> = self.parts.iter().flat_map(|(_, text)| tokens_after(text, &needle)).collect();
        assert_eq!(tokens.len(), 1, "one {path} token in all parts, found {tokens:?}");
        tokens.into_iter().next().unwrap()
    }

    pub fn confirm_token(&self) -> String {
        self.token("/confirm")
    }

    pub fn manage_token(&self) -> String {
        self.token("/manage")
    }

    pub fn to(&self) -> String {
        self.header("To").to_owned()
    }

    /// The one header `name`, its RFC 2047 words decoded.
    pub fn decoded_header(&self, name: &str) -> String {
        decode_words(self.header(name))
    }
}

/// A header with RFC 2047 `=?utf-8?b?…?=` words decoded (what lettre writes for non-ASCII).
pub fn decode_words(header: &str) -> String {
    use base64::Engine;
    header
        .split(' ')
        .map(|word| match word.strip_prefix("=?utf-8?b?").and_then(|rest| rest.strip_suffix("?=")) {
            Some(encoded) => {
                String::from_utf8(base64::engine::general_purpose::STANDARD.decode(encoded).unwrap()).unwrap()
            }
            None => word.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn tokens_after(text: &str, needle: &str) -> Vec<String> {
    text.match_indices(needle)
        .map(|(at, _)| {
            let token = link_token_at(&text[at + needle.len()..]);
            assert!(is_whole_link_token(&token), "a whole token after {needle}: {token:?}");
            token
        })
        .collect()
}

/// Headers (unfolded) and body of a MIME entity.
fn split_entity(entity: &str) -> (Vec<(String, String)>, &str) {
    let (head, body) = entity.split_once("\r\n\r\n").unwrap_or((entity, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in head.split("\r\n") {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    (headers, body)
}

fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
}

fn collect_parts(headers: &[(String, String)], body: &str, parts: &mut Vec<(String, String)>) {
    let content_type = header_of(headers, "Content-Type").unwrap_or("text/plain").to_owned();
    if content_type.to_ascii_lowercase().starts_with("multipart/") {
        let boundary = content_type
            .split(';')
            .find_map(|param| param.trim().strip_prefix("boundary="))
            .expect("a multipart boundary")
            .trim_matches('"');
        let delimiter = format!("--{boundary}");
        let close = format!("--{boundary}--");
        let mut current: Option<String> = None;
        for line in body.split("\r\n") {
            if line == delimiter || line == close {
                if let Some(part) = current.take() {
                    let (part_headers, part_body) = split_entity(&part);
                    collect_parts(&part_headers, part_body, parts);
                }
                if line == close {
                    break;
                }
                current = Some(String::new());
            } else if let Some(part) = current.as_mut() {
                part.push_str(line);
                part.push_str("\r\n");
            }
        }
        return;
    }
    let encoding = header_of(headers, "Content-Transfer-Encoding").unwrap_or("7bit").to_ascii_lowercase();
    let text = match encoding.as_str() {
        "quoted-printable" => quoted_printable(body),
        "base64" => {
            let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD.decode(compact).expect("a base64 body");
            String::from_utf8(bytes).expect("a UTF-8 body")
        }
        _ => body.to_owned(),
    };
    parts.push((content_type, text));
}

fn quoted_printable(body: &str) -> String {
    let bytes = body.replace("=\r\n", "").into_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'=' && at + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[at + 1..at + 3]).unwrap_or("");
            if let Ok(byte) = u8::from_str_radix(hex, 16) {
                decoded.push(byte);
                at += 3;
                continue;
            }
        }
        decoded.push(bytes[at]);
        at += 1;
    }
    String::from_utf8(decoded).expect("a UTF-8 body")
}

fn sha256_hex(text: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, text.as_bytes())
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The database

/// (confirm_hash, confirm_expires_at, removal_hash, confirmation_sent_at) of `email`'s row.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    confirm_hash: Option<String>,
    confirm_expires_at: Option<i64>,
    removal_hash: String,
    confirmation_sent_at: Option<i64>,
    status: String,
}

fn row(app: &TestApp, email: &str) -> Row {
    db(app)
        .query_row(
            "SELECT confirm_hash, confirm_expires_at, removal_hash, confirmation_sent_at, status
             FROM subscribers WHERE email = ?1",
            [email],
            |row| {
                Ok(Row {
                    confirm_hash: row.get(0)?,
                    confirm_expires_at: row.get(1)?,
                    removal_hash: row.get(2)?,
                    confirmation_sent_at: row.get(3)?,
                    status: row.get(4)?,
                })
            },
        )
        .unwrap_or_else(|error| panic!("the row of {email}: {error}"))
}

/// The token would confirm the row now: its hash is stored and the link has not expired.
fn assert_token_confirms(app: &TestApp, email: &str, token: &str, case: &str) {
    let row = row(app, email);
    assert_eq!(
        row.confirm_hash.as_deref(),
        Some(sha256_hex(token).as_str()),
        "{case}: confirm_hash is the SHA-256 hex of the mailed token"
    );
    assert!(row.confirm_expires_at.is_some_and(|at| at > now(app)), "{case}: the link has not expired: {row:?}");
}

/// Every text and blob value of every table, with its place, to search for secrets.
fn every_stored_value(app: &TestApp) -> Vec<(String, String)> {
    let conn = db(app);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut values = Vec::new();
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for column in 0..columns {
                let text = match row.get_ref(column).unwrap() {
                    rusqlite::types::ValueRef::Text(bytes) | rusqlite::types::ValueRef::Blob(bytes) => {
                        String::from_utf8_lossy(bytes).into_owned()
                    }
                    _ => continue,
                };
                values.push((format!("{table}.{column}"), text));
            }
        }
    }
    values
}

/// GETs a mailed link's path and query from the app, if the route exists yet. `GET` must never
/// change state; the caller checks that.
async fn follow(app: &TestApp, path_and_query: &str) -> Option<u16> {
    let response = app.client.get(app.url(path_and_query)).send().await.unwrap();
    let status = response.status().as_u16();
    (status != 404).then_some(status)
}

// ---------------------------------------------------------------------------------------------
// An alert webhook receiver

/// A tiny HTTP receiver on 127.0.0.1 that records every request (request head, body) and
/// answers 204. It records before it answers, so a request the app awaited is already here.
/// A request as received: its head (request line and headers) and its body.
pub type Request = (String, Vec<u8>);

pub struct Webhook {
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Webhook {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}/alert", listener.local_addr().unwrap().port());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                recorded.lock().unwrap().push((head, body));
                let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        Self { url, requests }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

// ---------------------------------------------------------------------------------------------
// The confirmation mail

#[actix_web::test]
async fn a_signup_sends_one_multipart_confirmation_whose_links_match_only_stored_hashes() {
    // Arrange
    let smtp = SmtpServer::start();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
    sign_up(&app, "Jane.Doe@Example.COM").await;

    // Act
    let outcomes = run_mail(&app).await;

    // Assert
    assert_eq!(outcomes, [MailOutcome::Sent]);
    let received = smtp.received();
    assert_eq!(received.len(), 1, "exactly one mail");
    let mail = Mail::parse(&received[0]);
    assert_eq!(mail.header("From"), "Newsletter <no-reply@example.com>");
    assert_eq!(mail.header("To"), "jane.doe@example.com", "the normalised address");
    assert_eq!(mail.header("Subject"), "Please confirm your signup");
    assert!(chrono::DateTime::parse_from_rfc2822(mail.header("Date")).is_ok(), "Date: {}", mail.header("Date"));
    let message_id = mail.header("Message-ID");
    assert!(
        message_id.starts_with('<') && message_id.ends_with("@example.com>"),
        "Message-ID on the sender's domain: {message_id}"
    );
    assert_eq!(mail.header("Auto-Submitted"), "auto-generated");
    let list_id = mail.header("List-Id");
    assert!(list_id.starts_with("\"News\" <news.") && list_id.ends_with('>'), "List-Id: {list_id}");
    assert!(!mail.has_header("List-Unsubscribe"), "a confirmation is not list mail");
    assert!(
        mail.header("Content-Type").starts_with("multipart/alternative"),
        "Content-Type: {}",
        mail.header("Content-Type")
    );
    assert_eq!(mail.parts.len(), 2, "plain text and HTML: {:?}", mail.parts);
    let text = mail.part("text/plain");
    let html = mail.part("text/html");
    assert!(text.contains("3 January 2026, 00:00 UTC"), "the text says when the link expires:\n{text}");
    assert!(!html.contains("<img"), "no remote images:\n{html}");

    let confirm = mail.confirm_token();
    let manage = mail.manage_token();
    let stored = row(&app, "jane.doe@example.com");
    assert_eq!(stored.status, "pending");
    assert_eq!(stored.confirm_hash, Some(sha256_hex(&confirm)), "confirm link ↔ confirm_hash");
    assert_eq!(stored.confirm_expires_at, Some(START + CONFIRM_TTL), "confirm_ttl from the send");
    assert_eq!(stored.confirmation_sent_at, Some(START));
    let (subscriber_id, removal_secret) = manage.split_once('.').expect("<id>.<secret>");
    assert_eq!(
        stored.removal_hash,
        format!("v2:{subscriber_id}:{}", sha256_hex(removal_secret)),
        "manage link ↔ removal_hash"
    );
    for (place, value) in every_stored_value(&app) {
        assert!(!value.contains(&confirm), "{place} holds the raw confirm token");
        assert!(!value.contains(&manage), "{place} holds the raw removal token");
        assert!(!value.contains(removal_secret), "{place} holds the removal token's secret");
    }
    assert_eq!(count(&app, "outbox"), 0, "the sent item is gone");

    // Following the link (if /confirm exists yet) shows the page and changes nothing.
    if let Some(status) = follow(&app, &format!("/confirm?token={confirm}")).await {
        assert_eq!(status, 200, "GET /confirm with the mailed token");
        assert_eq!(row(&app, "jane.doe@example.com"), stored, "GET never writes");
    }
}

#[actix_web::test]
async fn both_mails_of_a_branded_german_list_speak_german_and_carry_its_name_colour_and_privacy_link() {
    // Arrange
    let smtp = SmtpServer::start();
    let lists = "[[lists]]\nid = \"news\"\nname = \"Brotbrief\"\nsite_name = \"Bäckerei Korn\"\n\
        site_url = \"https://baeckerei.test/\"\naccent_color = \"#0b1f5c\"\nlanguage = \"de\"\n";
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}{lists}", smtp.config())).await;
    sign_up(&app, "anna@example.com").await;

    // Act
    assert!(all_sent(&run_mail(&app).await));
    let confirmation = Mail::parse(&smtp.received()[0]);
    // The pages the links open are the list's too.
    for path in [
        format!("/confirm?token={}", confirmation.confirm_token()),
        format!("/manage?token={}", confirmation.manage_token()),
    ] {
        let html = app.client.get(app.url(&path)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("<html lang=\"de\" dir=\"ltr\">"), "{html}");
        assert!(html.contains("<a href=\"https://baeckerei.test/\">← Zurück zu Bäckerei Korn</a>"), "{html}");
        assert!(html.contains("href=\"/static/list.css?list=news\""), "{html}");
    }
    let confirmed = app
        .client
        .post(app.url("/api/confirm"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("token={}", confirmation.confirm_token()))
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.status().as_u16(), 303);
    assert!(all_sent(&run_mail(&app).await));
    let welcome = Mail::parse(&smtp.received()[1]);

    // Assert
    let subjects = [decode_words(confirmation.header("Subject")), decode_words(welcome.header("Subject"))];
    assert_eq!(subjects, ["Bitte bestätigen Sie Ihre Anmeldung", "Sie sind angemeldet"]);
    for (kind, mail) in [("confirmation", &confirmation), ("welcome", &welcome)] {
        assert_eq!(mail.header("Content-Language"), "de", "{kind}");
        let text = mail.part("text/plain");
        let html = mail.part("text/html");
        assert!(
            text.starts_with("Hallo,") && html.contains("<html lang=\"de\" dir=\"ltr\">"),
            "{kind}:\n{text}\n{html}"
        );
        assert!(
            text.contains("Bäckerei Korn · https://baeckerei.test/"),
            "{kind}: the site in the text footer:\n{text}"
        );
        assert!(html.contains("<a href=\"https://baeckerei.test/\""), "{kind}: the site linked:\n{html}");
        assert!(
            text.contains("Was gespeichert wird und wie lange: http://127.0.0.1:8080/privacy?list=news"),
            "{kind}:\n{text}"
        );
        assert!(html.contains("href=\"http://127.0.0.1:8080/privacy?list=news\""), "{kind}:\n{html}");
    }
    let text = confirmation.part("text/plain");
    assert!(text.contains("Der Link gilt bis 3. Januar 2026, 00:00 UTC."), "a German date:\n{text}");
    assert!(text.contains("„Anmeldung bestätigen“"), "names the page's button:\n{text}");
    let html = confirmation.part("text/html");
    assert!(html.contains("background: #0b1f5c; color: #ffffff;"), "the accent on the button, white text:\n{html}");
    assert!(welcome.part("text/plain").contains("Ihre Adresse ist jetzt für Brotbrief angemeldet."));
}

#[actix_web::test]
async fn a_resubmission_within_the_cooldown_sends_nothing_and_one_after_it_replaces_the_link() {
    // Arrange
    let smtp = SmtpServer::start();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
    sign_up(&app, "jane@example.com").await;
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent]);
    let first = Mail::parse(&smtp.received()[0]);
    let removal_hash = row(&app, "jane@example.com").removal_hash;

    // Act: 5 minutes later (within the 10-minute cooldown)
    app.clock.advance(Duration::from_secs(5 * 60));
    sign_up(&app, "jane@example.com").await;
    let within = run_mail(&app).await;

    // Assert
    assert_eq!(within, [], "nothing is sent within the cooldown");
    assert_eq!(smtp.received().len(), 1);
    assert_token_confirms(&app, "jane@example.com", &first.confirm_token(), "within the cooldown");

    // Act: 11 minutes after the first mail
    app.clock.advance(Duration::from_secs(6 * 60));
    sign_up(&app, "jane@example.com").await;
    let after = run_mail(&app).await;

    // Assert
    assert_eq!(after, [MailOutcome::Sent], "a new mail after the cooldown");
    let received = smtp.received();
    assert_eq!(received.len(), 2);
    let second = Mail::parse(&received[1]);
    assert_ne!(second.confirm_token(), first.confirm_token(), "a new confirm token");
    let stored = row(&app, "jane@example.com");
    assert_ne!(stored.confirm_hash, Some(sha256_hex(&first.confirm_token())), "the old link is dead");
    assert_token_confirms(&app, "jane@example.com", &second.confirm_token(), "after the cooldown");
    assert_eq!(stored.confirm_expires_at, Some(START + 11 * 60 + CONFIRM_TTL));
    assert_eq!(stored.removal_hash, removal_hash, "a resend keeps the removal token");
    assert_eq!(second.manage_token(), first.manage_token());
}

#[actix_web::test]
async fn fifty_concurrent_signups_of_one_address_send_one_mail() {
    // Arrange
    let smtp = SmtpServer::start();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
    let fields = valid("jane@example.com");
    let requests = (0..50).map(|_| post_form(&app, &fields));

    // Act: concurrent requests, then two mail workers at once
    let statuses: Vec<u16> = join_all(requests).await.iter().map(|r| r.status().as_u16()).collect();
    drain(&app).await;
    let (first, second) = (app.state.mailer(), app.state.mailer());
    let (a, b) = futures_util::join!(try_execute_task(&first), try_execute_task(&second));
    let mut outcomes = vec![a.unwrap(), b.unwrap()];
    outcomes.extend(run_mail(&app).await);

    // Assert
    assert!(statuses.iter().all(|s| *s == 303), "{statuses:?}");
    assert_eq!(outcomes.iter().filter(|o| **o == MailOutcome::Sent).count(), 1, "{outcomes:?}");
    assert_eq!(smtp.received().len(), 1, "one mail");
    assert_eq!(count(&app, "subscribers"), 1);
    assert_token_confirms(&app, "jane@example.com", &Mail::parse(&smtp.received()[0]).confirm_token(), "the one mail");
}

// ---------------------------------------------------------------------------------------------
// Failures and retries

#[actix_web::test]
async fn temporary_smtp_failures_are_retried_with_backoff_until_the_mail_is_sent() {
    // Arrange
    let smtp = SmtpServer::start();
    smtp.answer_data_with(&[451, 451, 250]);
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
    sign_up(&app, "jane@example.com").await;

    // Act + Assert, attempt by attempt
    let first = try_execute_task(&app.state.mailer()).await.unwrap();
    assert!(matches!(&first, MailOutcome::Retrying { detail } if detail.contains("451")), "first attempt: {first:?}");
    assert_eq!(
        try_execute_task(&app.state.mailer()).await.unwrap(),
        MailOutcome::EmptyQueue,
        "the retry waits for its backoff"
    );
    assert_eq!(row(&app, "jane@example.com").confirmation_sent_at, None, "a failed send is not a sent mail");
    app.clock.advance(PAST_BACKOFF);
    let second = try_execute_task(&app.state.mailer()).await.unwrap();
    assert!(
        matches!(&second, MailOutcome::Retrying { detail } if detail.contains("451")),
        "second attempt: {second:?}"
    );
    app.clock.advance(PAST_BACKOFF);
    let third = run_mail(&app).await;
    assert_eq!(third, [MailOutcome::Sent], "third attempt");

    assert_eq!(smtp.data_attempts(), 3);
    let received = smtp.received();
    assert_eq!(received.len(), 1, "exactly one mail delivered");
    assert_eq!(count(&app, "outbox"), 0, "the outbox is empty");
    let mail = Mail::parse(&received[0]);
    assert_token_confirms(&app, "jane@example.com", &mail.confirm_token(), "the delivered mail");
    assert_eq!(row(&app, "jane@example.com").confirmation_sent_at, Some(START + 2 * PAST_BACKOFF.as_secs() as i64));
}

#[actix_web::test]
async fn a_failed_resend_leaves_the_link_already_mailed_working() {
    // Arrange: a first mail went out; after the cooldown the address is entered again, and
    // the relay refuses the resend for now
    let smtp = SmtpServer::start();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
    sign_up(&app, "jane@example.com").await;
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent]);
    let first = Mail::parse(&smtp.received()[0]).confirm_token();
    app.clock.advance(Duration::from_secs(11 * 60));
    sign_up(&app, "jane@example.com").await;
    smtp.answer_data_with(&[451]);

    // Act
    let outcome = try_execute_task(&app.state.mailer()).await.unwrap();

    // Assert: no new mail was sent, so the old one still confirms (docs/http-api.md: the old token
    // stops working when a new one is sent)
    assert!(matches!(outcome, MailOutcome::Retrying { .. }), "{outcome:?}");
    assert_eq!(smtp.received().len(), 1);
    assert_token_confirms(&app, "jane@example.com", &first, "the first mail after a failed resend");
    assert_eq!(row(&app, "jane@example.com").confirmation_sent_at, Some(START));
}

#[actix_web::test]
async fn a_relay_that_stops_answering_is_a_temporary_failure_after_the_smtp_timeout() {
    // Arrange: a relay that accepts connections and never says a word (the kernel completes
    // the handshake for a listener that never calls accept)
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let mail_config = smtp_config(port).replace("timeout = \"5s\"", "timeout = \"1s\"");
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{mail_config}")).await;
    sign_up(&app, "jane@example.com").await;

    // Act: bounded from outside, so a hang fails the test instead of stalling the suite
    let outcome = tokio::time::timeout(Duration::from_secs(20), try_execute_task(&app.state.mailer())).await;

    // Assert
    let outcome = outcome
        .expect("the mail worker hung on a silent relay: mail.smtp.timeout must bound the whole conversation")
        .unwrap();
    assert!(
        matches!(&outcome, MailOutcome::Retrying { detail } if detail.starts_with("timed out waiting for 127.0.0.1 (")),
        "a silence is named as one: {outcome:?}"
    );
    assert_eq!(count(&app, "outbox"), 1, "the mail waits for a retry");
    drop(silent);
}

#[actix_web::test]
async fn a_permanent_smtp_failure_deletes_the_pending_row_and_alerts_without_the_address() {
    // Arrange: the relay knows no zelda (550 5.1.1) and takes the next visitor
    let smtp = SmtpServer::start();
    smtp.refuse_recipients_saying(Some("zelda"), 550, "5.1.1 <{to}>: Recipient address rejected: no such user");
    let webhook = Webhook::start();
    let mail_config = smtp.config().replacen("[mail]\n", &format!("[mail]\nalert_webhook = \"{}\"\n", webhook.url), 1);
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{mail_config}")).await;
    sign_up(&app, "zelda.unique@mail.example.org").await;
    sign_up(&app, "next@example.com").await;

    // Act: zelda's mail, settled by the next one, sent at once after it
    let outcome = try_execute_task(&app.state.mailer()).await.unwrap();

    // Assert
    assert!(
        matches!(&outcome, MailOutcome::GaveUp { detail } if detail.contains("550")),
        "a refusal of the recipient, with the relay taking another, gives up at once: {outcome:?}"
    );
    assert_eq!(
        strings(&app, "SELECT email FROM subscribers"),
        ["next@example.com"],
        "nothing is kept for an address that never got a link"
    );
    assert_eq!(count(&app, "outbox"), 0);
    assert_eq!(run_mail(&app).await, [], "nothing left to retry");
    assert_eq!(smtp.received().len(), 1, "the next visitor's mail");

    let requests = webhook.requests();
    assert_eq!(requests.len(), 1, "one alert: {requests:?}");
    let (head, body) = &requests[0];
    assert!(head.starts_with("POST /alert "), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{head}");
    let body = String::from_utf8(body.clone()).unwrap();
    let alert: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(alert["list"], "news", "{body}");
    assert_eq!(alert["smtp_code"], 550, "{body}");
    assert_eq!(alert["recipient_domain"], "mail.example.org", "{body}");
    assert!(!body.contains("zelda"), "no local part in the alert: {body}");
    assert!(!body.contains('@'), "no address in the alert: {body}");
}

#[actix_web::test]
async fn signups_accepted_while_the_smtp_server_is_down_are_all_delivered_once_it_is_back() {
    // Arrange: nothing listens on the port yet
    let port = free_port();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp_config(port))).await;
    let addresses: Vec<String> = (0..20).map(|n| format!("person{n}@example.com")).collect();
    let fields: Vec<_> = addresses.iter().map(|email| valid(email)).collect();

    // Act: signups during the outage
    let statuses: Vec<u16> = join_all(fields.iter().map(|fields| post_form(&app, fields)))
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    drain(&app).await;
    let during = run_mail(&app).await;

    // Assert: accepted and queued; one try met the outage, and the rest of the queue waits
    // rather than burn a try each
    assert_eq!(statuses, vec![303; 20], "every signup is accepted during the outage");
    assert!(matches!(during.as_slice(), [MailOutcome::Retrying { .. }]), "{during:?}");
    assert_eq!(try_execute_task(&app.state.mailer()).await.unwrap(), MailOutcome::RelayRefusing);
    assert_eq!(count(&app, "outbox"), 20, "nothing is dropped");
    assert_eq!(count(&app, "subscribers"), 20);

    // Act: the server comes back
    let smtp = SmtpServer::start_on(port);
    app.clock.advance(PAST_BACKOFF);
    let after = run_mail(&app).await;

    // Assert: every address got exactly one mail
    assert_eq!(after.len(), 20, "{after:?}");
    assert!(all_sent(&after), "{after:?}");
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(run_mail(&app).await, [], "nothing is sent twice");
    let mut per_address: BTreeMap<String, usize> = BTreeMap::new();
    for raw in smtp.received() {
        let mail = Mail::parse(&raw);
        assert_token_confirms(&app, &mail.to(), &mail.confirm_token(), &mail.to());
        *per_address.entry(mail.to()).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = addresses.iter().map(|a| (a.clone(), 1)).collect();
    assert_eq!(per_address, expected);
    assert_eq!(count(&app, "outbox"), 0);
}

#[actix_web::test]
async fn a_relay_down_past_the_confirm_window_deletes_nothing_and_the_signup_expires_as_never_mailed() {
    // Arrange: the server is down for good; links live one hour
    let port = free_port();
    let webhook = Webhook::start();
    let mail_config =
        smtp_config(port).replacen("[mail]\n", &format!("[mail]\nalert_webhook = \"{}\"\n", webhook.url), 1);
    let app = spawn_app_with(&format!(
        "[signup]\nrate_limits = [{{ window = \"10m\", max = 1000 }}]\nconfirm_ttl = \"1h\"\n{mail_config}"
    ))
    .await;
    sign_up(&app, "jane@example.com").await;

    // Act: keep time moving past the window, a minute at a time
    let mut tries = 0;
    while now(&app) < START + 3600 + 600 {
        match try_execute_task(&app.state.mailer()).await.unwrap() {
            MailOutcome::Retrying { detail } => {
                assert!(detail.contains(&format!("connection refused by 127.0.0.1:{port}")), "{detail}");
                tries += 1;
            }
            MailOutcome::EmptyQueue | MailOutcome::RelayRefusing => app.clock.advance(Duration::from_secs(60)),
            other => panic!("the worker never gives up on a relay it cannot reach: {other:?}"),
        }
    }

    // Assert: tried again and again, at most five minutes apart, and nothing deleted by the worker
    assert!(tries >= 12, "it tried at least every five minutes ({tries} tries)");
    assert_eq!(count(&app, "subscribers"), 1, "the worker deletes nothing");
    let alerts = webhook.requests();
    assert_eq!(alerts.len(), 1, "one relay_refused alert for the whole outage: {alerts:?}");
    let alert: serde_json::Value = serde_json::from_slice(&alerts[0].1).unwrap();
    assert_eq!((alert["event"].as_str(), alert["stage"].as_str()), (Some("relay_refused"), Some("connect")), "{alert}");

    // Act: the hourly cleanup
    let report = signupd::app::scheduler::run_cleanup(&app.state).await.unwrap();

    // Assert: the signup expired like any unconfirmed one; its mail goes with it
    assert_eq!(report.expired_never_mailed + report.expired_pending, 1, "{report:?}");
    assert_eq!(count(&app, "subscribers"), 0);
    app.clock.advance(Duration::from_secs(600));
    let _ = SmtpServer::start_on(port);
    assert_eq!(run_mail(&app).await.iter().filter(|o| **o == MailOutcome::Sent).count(), 0, "nothing is mailed");
    assert_eq!(count(&app, "outbox"), 0);
}

#[actix_web::test]
async fn the_stored_smtp_error_never_contains_the_address() {
    struct Case {
        name: &'static str,
        arrange: fn(&SmtpServer),
    }
    let cases = [
        Case { name: "451 at the end of DATA, quoting the recipient", arrange: |smtp| smtp.answer_data_with(&[451]) },
        Case { name: "450 at RCPT, quoting the recipient", arrange: |smtp| smtp.refuse_recipients_with(450) },
    ];
    for case in cases {
        // Arrange
        let smtp = SmtpServer::start();
        (case.arrange)(&smtp);
        let app = spawn_app_with(&format!("{RAISED_LIMITS}{}", smtp.config())).await;
        sign_up(&app, "zelda.unique@mail.example.org").await;

        // Act
        let outcome = try_execute_task(&app.state.mailer()).await.unwrap();

        // Assert
        let MailOutcome::Retrying { detail } = outcome else {
            panic!("{}: a 4xx is retried: {outcome:?}", case.name);
        };
        let stored: Option<String> = db(&app).query_row("SELECT last_error FROM outbox", [], |row| row.get(0)).unwrap();
        let stored = stored.unwrap_or_else(|| panic!("{}: last_error is stored", case.name));
        for text in [&stored, &detail] {
            assert!(text.contains("45"), "{}: the code is kept: {text}", case.name);
            assert!(!text.contains("zelda"), "{}: no local part: {text}", case.name);
            assert!(!text.contains('@'), "{}: no address: {text}", case.name);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Budget and file transport

#[actix_web::test]
async fn the_paced_budget_sends_its_burst_then_one_mail_per_share_of_the_hour() {
    // Arrange: 360 an hour is one mail every 10 s, after a burst of 3
    let smtp = SmtpServer::start();
    let mail_config = smtp.config().replacen("[mail]\n", "[mail]\nmax_mails_per_hour = 360\nburst = 3\n", 1);
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{mail_config}")).await;
    for n in 0..6 {
        sign_up(&app, &format!("person{n}@example.com")).await;
    }

    // Act
    let at_once = run_mail(&app).await;

    // Assert: the burst, and the rest waits
    assert_eq!(at_once, [MailOutcome::Sent, MailOutcome::Sent, MailOutcome::Sent, MailOutcome::BudgetExhausted]);
    assert_eq!(count(&app, "outbox"), 3, "mail over budget waits, it is not dropped");

    // Act and assert: nine seconds refill less than a mail; the tenth refills one
    app.clock.advance(Duration::from_secs(9));
    assert_eq!(run_mail(&app).await, [MailOutcome::BudgetExhausted]);
    app.clock.advance(Duration::from_secs(1));
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent, MailOutcome::BudgetExhausted]);

    // Act and assert: an idle hour refills the bucket to its burst, no further
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent, MailOutcome::Sent]);
    let recipients: BTreeSet<String> = smtp.received().iter().map(|raw| Mail::parse(raw).to()).collect();
    assert_eq!(recipients.len(), 6, "each address once: {recipients:?}");
    assert_eq!(smtp.received().len(), 6);
}

#[actix_web::test]
async fn the_paced_budget_holds_exactly_when_sixteen_real_workers_race_for_the_queue() {
    // Arrange: 40 confirmations queued; a burst of 5, then one mail every 10 s; and a relay that
    // fails some sends (a failed send gives its mail back, which must not let the next claims
    // overshoot)
    let smtp = SmtpServer::start();
    smtp.answer_data_with(&[451, 250, 451]);
    let mail_config = smtp.config().replacen("[mail]\n", "[mail]\nmax_mails_per_hour = 360\nburst = 5\n", 1);
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{mail_config}")).await;
    for n in 0..40 {
        assert_eq!(post_form(&app, &valid(&format!("person{n}@example.com"))).await.status().as_u16(), 303);
    }
    drain(&app).await;
    assert_eq!(count(&app, "outbox"), 40);

    // Act: until the burst went out and the rest waits (or the budget was overshot)
    race_mail_workers(&app, || smtp.received().len() >= 5 && count(&app, "outbox") <= 35).await;

    // Assert
    assert_eq!(smtp.received().len(), 5, "exactly the burst, however the workers raced");
    assert_eq!(count(&app, "outbox"), 35, "the rest waits for the pace; nothing is dropped");
    assert!(smtp.data_attempts() >= 7, "the two failed sends happened: {}", smtp.data_attempts());

    // Act: 25 seconds later the pace has refilled two mails (and half of a third)
    app.clock.advance(Duration::from_secs(25));
    race_mail_workers(&app, || smtp.received().len() >= 7 && count(&app, "outbox") <= 33).await;

    // Assert: burst + 25 s × 360 / 3600, whole mails only
    assert_eq!(smtp.received().len(), 7, "the burst plus the pace, however the workers raced");
    assert_eq!(count(&app, "outbox"), 33);
    let tally: i64 = db(&app)
        .query_row("SELECT sum(count) FROM rate_limits WHERE key LIKE 'mail-budget/%'", [], |row| row.get(0))
        .unwrap();
    assert_eq!(tally, 7, "failed sends took their count back");
}

#[actix_web::test]
async fn the_file_transport_writes_one_private_eml_file_per_mail_with_the_confirm_link() {
    // Arrange: the default transport
    let app = spawn_app_with(RAISED_LIMITS).await;
    sign_up(&app, "ann@example.com").await;
    sign_up(&app, "bob@example.com").await;

    // Act
    let outcomes = run_mail(&app).await;

    // Assert
    assert_eq!(outcomes, [MailOutcome::Sent, MailOutcome::Sent]);
    let dir = app.data_dir().join("mail");
    let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o077, 0, "the mail folder is private: {dir_mode:o}");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2, "one file per mail: {files:?}");
    let mut recipients = BTreeSet::new();
    for file in &files {
        assert_eq!(file.extension().and_then(|e| e.to_str()), Some("eml"), "{}", file.display());
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}: mode {mode:o}", file.display());
        let mail = Mail::parse(&std::fs::read(file).unwrap());
        let to = mail.to();
        assert_token_confirms(&app, &to, &mail.confirm_token(), &file.display().to_string());
        recipients.insert(to);
    }
    assert_eq!(recipients, BTreeSet::from(["ann@example.com".to_owned(), "bob@example.com".to_owned()]));
}
