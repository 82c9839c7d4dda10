//! Webhooks (docs/operations.md "Webhooks"): `subscriber.confirmed` and `subscriber.unsubscribed`
//! queued in the commit of the change they report, signed per Standard Webhooks (checked with the
//! scheme's Python library, and by the receiver example of docs/operations.md), delivered at least once,
//! in order per subscriber, retried on every kind of failure with the same `webhook-id`, dropped
//! with an alert after `mail.webhook_max_age`, and kept across `kill -9`.
//!
//! In-process apps run with the background workers off: the tests deliver with
//! `try_deliver_batch` and move the manual clock past each backoff. The receivers are real HTTP
//! servers on 127.0.0.1 (`webhook_receiver.rs`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use signupd::app::{Application, BuildOptions};
use signupd::clock::{Clock, ManualClock};
use signupd::outbound::webhooks::worker::{DeliveryOutcome, try_deliver_batch};

use crate::confirm::{deliver as send_mail, dump, location, post_token, signed_up_and_mailed, status_of};
use crate::helpers::{
    START, TestApp, guide_example, python_with, run_python, signupd, spawn_app_in, test_config, write_config,
};
use crate::process::{self, read_only, unix_now};
use crate::signup::{RAISED_LIMITS, count, db};
use crate::smtp_server::free_port;
use crate::webhook_receiver::{Receiver, Recorded, Reply};

/// The `public_url` the links in events start with (the default).
const PUBLIC_URL: &str = "http://127.0.0.1:8080";
pub const HOOK_PATH: &str = "/hooks/signupd";
const CONFIRMED: &str = "subscriber.confirmed";
const UNSUBSCRIBED: &str = "subscriber.unsubscribed";

// ---------------------------------------------------------------------------------------------
// Set-up

/// A fresh `whsec_` secret: 32 random bytes, standard base64.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).unwrap();
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// Writes `secret` (with the newline `echo` leaves) to `dir/webhook_secret`.
fn write_secret(dir: &Path, secret: &str) -> PathBuf {
    let path = dir.join("webhook_secret");
    std::fs::write(&path, format!("{secret}\n")).unwrap();
    path
}

/// One `[[webhooks]]` table.
pub fn hook_toml(name: &str, url: &str, secret_file: &Path) -> String {
    format!("[[webhooks]]\nname = \"{name}\"\nurl = \"{url}\"\nsecret_file = {:?}\n", secret_file.display().to_string())
}

/// An in-process app (background workers off) with the endpoints `hooks` (name, URL), all signed
/// with one secret kept in its data directory; `mail` goes into `[mail]` after
/// `webhook_timeout = "1s"`, `lists` (if any) replaces the default list `news`.
pub async fn app_with_hooks(mail: &str, lists: &str, hooks: &[(&str, &str)]) -> (TestApp, String) {
    let dir = tempfile::tempdir().unwrap();
    let secret = new_secret();
    let path = write_secret(dir.path(), &secret);
    let tables: String = hooks.iter().map(|(name, url)| hook_toml(name, url, &path)).collect();
    let extra = format!("{RAISED_LIMITS}[mail]\nwebhook_timeout = \"1s\"\n{mail}\n{tables}{lists}");
    (spawn_app_in(dir, &extra).await, secret)
}

/// Moves the app's clock from [`START`] to the real time, as the CLI's clock is.
pub fn to_real_time(app: &TestApp) {
    let behind = u64::try_from(unix_now() - START).expect("the real time is after START");
    app.clock.advance(Duration::from_secs(behind));
}

/// Signs `email` up, confirms it with the button and sends the welcome mail (so the next signup's
/// mail is the only one); returns the removal token.
async fn confirm(app: &TestApp, email: &str) -> String {
    let (token, removal) = signed_up_and_mailed(app, email).await;
    let response = post_token(app, "/api/confirm", &token).await;
    assert_eq!(location(&response), "/confirmed?list=news", "confirming {email}");
    send_mail(app).await;
    removal
}

/// One batch of the endpoint named `name`, as its background worker would run it; bounded, so a
/// hang fails the test instead of stalling the suite.
pub async fn deliver(app: &TestApp, name: &str) -> Vec<DeliveryOutcome> {
    let endpoint = app
        .state
        .webhooks
        .endpoints()
        .iter()
        .find(|endpoint| endpoint.config.name == name)
        .unwrap_or_else(|| panic!("no endpoint {name}"))
        .clone();
    let deliverer = app.state.deliverer(endpoint);
    let batch = try_deliver_batch(&deliverer, 64, || false);
    tokio::time::timeout(Duration::from_secs(30), batch).await.expect("a delivery batch hung").unwrap()
}

/// A row of `webhook_deliveries`.
#[derive(Debug, Clone)]
struct Queued {
    endpoint: String,
    event_id: String,
    event_type: String,
    subscriber_id: String,
    payload: Value,
    attempts: i64,
    next_attempt_at: i64,
    last_error: Option<String>,
}

fn queued_in(conn: &rusqlite::Connection) -> Vec<Queued> {
    let mut statement = conn
        .prepare(
            "SELECT endpoint, event_id, event_type, subscriber_id, payload, attempts, next_attempt_at, last_error
             FROM webhook_deliveries ORDER BY id",
        )
        .unwrap();
    statement
        .query_map([], |row| {
            Ok(Queued {
                endpoint: row.get(0)?,
                event_id: row.get(1)?,
                event_type: row.get(2)?,
                subscriber_id: row.get(3)?,
                payload: serde_json::from_str(&row.get::<_, String>(4)?).unwrap(),
                attempts: row.get(5)?,
                next_attempt_at: row.get(6)?,
                last_error: row.get(7)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn queued(app: &TestApp) -> Vec<Queued> {
    queued_in(&db(app))
}

fn subscriber_id(app: &TestApp, email: &str) -> String {
    db(app).query_row("SELECT id FROM subscribers WHERE email = ?1", [email], |row| row.get(0)).unwrap()
}

/// `(event type, email)` of each recorded request, in order.
fn types_and_emails(requests: &[Recorded]) -> Vec<(String, String)> {
    requests
        .iter()
        .map(|request| {
            let event = request.json();
            (
                event["type"].as_str().unwrap_or_default().to_owned(),
                event["data"]["email"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// No table holds the address's local part followed by `@` any more.
fn assert_address_gone(app: &TestApp, email: &str) {
    let local = format!("{}@", email.split('@').next().unwrap());
    let found: Vec<String> = dump(app).into_iter().filter(|line| line.to_lowercase().contains(&local)).collect();
    assert!(found.is_empty(), "{email} is still stored: {found:?}");
}

// ---------------------------------------------------------------------------------------------
// Events: what is queued when, and what is posted

#[actix_web::test]
async fn confirming_queues_one_signed_confirmed_event_whose_unsubscribe_url_removes_and_reports_unsubscribed() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let lists = "[[lists]]\nid = \"news\"\nname = \"News\"\nconsent_text = \"Tell me about the news.\"\n";
    let (app, _) = app_with_hooks("", lists, &[("crm", &receiver.url(HOOK_PATH))]).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    app.clock.advance(Duration::from_secs(90));

    // Act: confirm
    let response = post_token(&app, "/api/confirm", &token).await;

    // Assert: the event is queued by the confirm's own commit, before any delivery
    assert_eq!(location(&response), "/confirmed?list=news");
    let rows = queued(&app);
    assert_eq!(rows.len(), 1, "exactly one event: {rows:?}");
    let id = subscriber_id(&app, "jane@example.com");
    assert_eq!(
        (rows[0].endpoint.as_str(), rows[0].event_type.as_str(), rows[0].subscriber_id.as_str(), rows[0].attempts),
        ("crm", CONFIRMED, id.as_str(), 0)
    );
    assert!(receiver.requests().is_empty(), "nothing is posted before a worker delivers");
    let event_id = rows[0].event_id.clone();

    // Act: deliver
    let outcomes = deliver(&app, "crm").await;

    // Assert: one signed POST with the documented body
    assert_eq!(outcomes, [DeliveryOutcome::Delivered]);
    let requests = receiver.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", HOOK_PATH));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.webhook_id(), event_id, "webhook-id is the queued event's id");
    // Receivers compare it with their own clock: the wall-clock time of the attempt.
    let timestamp: i64 = request.header("webhook-timestamp").unwrap_or_default().parse().unwrap();
    assert!((timestamp - unix_now()).abs() <= 5, "webhook-timestamp {timestamp} is not the time of the attempt");
    let signature = request.header("webhook-signature").unwrap_or_default();
    assert!(
        signature.strip_prefix("v1,").is_some_and(|sig| STANDARD.decode(sig).is_ok_and(|mac| mac.len() == 32)),
        "v1,<base64 of an HMAC-SHA256>: {signature:?}"
    );
    let event = request.json();
    assert_eq!(event["type"], CONFIRMED);
    assert_eq!(event["timestamp"], "2026-01-01T00:01:30Z", "the time of the confirm");
    let data = &event["data"];
    let consent_version: String =
        db(&app).query_row("SELECT consent_version FROM subscribers", [], |row| row.get(0)).unwrap();
    assert_eq!(data["list"], "news");
    assert_eq!(data["email"], "jane@example.com");
    assert_eq!(data["subscriber_id"], id.as_str());
    assert_eq!(data["created_at"], "2026-01-01T00:00:00Z", "the signup");
    assert_eq!(data["confirmed_at"], "2026-01-01T00:01:30Z");
    assert_eq!(data["confirm_method"], "button");
    assert_eq!(data["consent_version"], consent_version.as_str());
    assert_eq!(data["consent_text"], "Tell me about the news.");
    let unsubscribe_url = data["unsubscribe_url"].as_str().unwrap_or_default().to_owned();
    let unsubscribe_path = unsubscribe_url
        .strip_prefix(PUBLIC_URL)
        .filter(|path| path.starts_with("/api/unsubscribe?token="))
        .unwrap_or_else(|| panic!("a one-click link under the public URL: {unsubscribe_url:?}"))
        .to_owned();
    assert_eq!(count(&app, "webhook_deliveries"), 0, "delivered: deleted");

    // Act: RFC 8058 one-click on the event's link
    let response = app
        .client
        .post(app.url(&unsubscribe_path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();

    // Assert: removed, and `unsubscribed` queued with it
    assert_eq!(response.status().as_u16(), 200, "{:?}", response.text().await);
    assert_eq!(status_of(&app, "jane@example.com"), None, "the row is gone");
    let rows = queued(&app);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].event_type.as_str(), rows[0].subscriber_id.as_str()), (UNSUBSCRIBED, id.as_str()));
    assert_ne!(rows[0].event_id, event_id, "a new event, a new id");

    // Act: deliver it
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::Delivered]);

    // Assert
    let requests = receiver.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let event = requests[1].json();
    assert_eq!(event["type"], UNSUBSCRIBED);
    assert_eq!(
        event["data"],
        json!({"list": "news", "email": "jane@example.com", "subscriber_id": id, "reason": "unsubscribed", "via": "one_click"})
    );
    assert_eq!(count(&app, "webhook_deliveries"), 0, "the queue is empty");
    assert_address_gone(&app, "jane@example.com");
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::EmptyQueue]);
}

#[actix_web::test]
async fn a_pending_address_removed_produces_no_event_and_signupd_remove_of_a_confirmed_one_reports_via_cli() {
    // Arrange: the CLI below stamps its events with the real time
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    to_real_time(&app);
    let (_, removal) = signed_up_and_mailed(&app, "ann@example.com").await;

    // Act: the pending address removes itself through the manage page
    let response = post_token(&app, "/api/manage", &removal).await;

    // Assert
    assert_eq!(location(&response), "/removed?list=news");
    assert_eq!(status_of(&app, "ann@example.com"), None, "removed");
    assert_eq!(count(&app, "webhook_deliveries"), 0, "a pending address was never known to the receivers");

    // Arrange: a confirmed address, its event delivered
    confirm(&app, "bob@example.com").await;
    let id = subscriber_id(&app, "bob@example.com");
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::Delivered]);
    // The real binary on the same data directory (and so the same secrets and database) while
    // the in-process server runs, as `signupd remove` runs beside `serve`.
    let secret_file = app.data_dir().join("webhook_secret");
    let config = app.data_dir().join("cli.toml");
    std::fs::write(
        &config,
        format!(
            "[storage]\ndata_dir = {:?}\n{}[[lists]]\nid = \"news\"\nname = \"News\"\n",
            app.data_dir().display().to_string(),
            hook_toml("crm", &receiver.url(HOOK_PATH), &secret_file)
        ),
    )
    .unwrap();

    // Act
    let output = tokio::task::spawn_blocking(move || {
        signupd().arg("remove").arg("bob@example.com").arg("--config").arg(&config).output().unwrap()
    })
    .await
    .unwrap();

    // Assert: removed and `unsubscribed` queued via cli
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("removed") && stdout.contains("news"), "{stdout}");
    assert_eq!(status_of(&app, "bob@example.com"), None);
    let rows = queued(&app);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].event_type.as_str(), rows[0].payload["data"]["via"].as_str()), (UNSUBSCRIBED, Some("cli")));

    // Act: deliver it (the CLI's clock ran on while this test's stood still)
    app.clock.advance(Duration::from_secs(600));
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::Delivered]);

    // Assert
    let requests = receiver.requests();
    assert_eq!(
        types_and_emails(&requests),
        [(CONFIRMED.to_owned(), "bob@example.com".to_owned()), (UNSUBSCRIBED.to_owned(), "bob@example.com".to_owned())],
        "nothing about ann"
    );
    assert_eq!(
        requests[1].json()["data"],
        json!({"list": "news", "email": "bob@example.com", "subscriber_id": id, "reason": "unsubscribed", "via": "cli"})
    );
    assert_eq!(count(&app, "webhook_deliveries"), 0);
}

/// The confirm button and the manage link clicked at once, for many addresses: whichever commits
/// first, the events tell the receiver exactly what happened. A removal is prepared from the row
/// as a reader saw it; one prepared from the pending row but written after the confirmation must
/// be prepared again, so the receiver hears the confirmed subscriber leave, and the suppression
/// says `unsubscribed`.
#[actix_web::test]
async fn confirm_and_remove_racing_leave_events_and_suppressions_that_match_what_happened() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    let mut links = Vec::new();
    for i in 0..24 {
        let email = format!("racer{i}@example.com");
        let (token, removal) = signed_up_and_mailed(&app, &email).await;
        links.push((email, token, removal));
    }

    // Act: both clicks of every address at once
    let clicks = links.iter().map(|(_, token, removal)| async {
        futures_util::join!(post_token(&app, "/api/confirm", token), post_token(&app, "/api/manage", removal))
    });
    futures_util::future::join_all(clicks).await;

    // Assert: every address removed, with either nothing reported (removed while pending) or
    // both events (confirmed, then left), never a confirmation alone
    let rows = queued(&app);
    let mut left = 0;
    for (email, _, _) in &links {
        assert_eq!(status_of(&app, email), None, "{email}: removed, whichever came first");
        let events: Vec<&str> = rows
            .iter()
            .filter(|row| row.payload["data"]["email"] == email.as_str())
            .map(|row| row.event_type.as_str())
            .collect();
        match events.as_slice() {
            [] => {}
            [CONFIRMED, UNSUBSCRIBED] => left += 1,
            other => panic!("{email}: {other:?}"),
        }
    }
    let by_reason = |reason: &str| {
        db(&app)
            .query_row("SELECT count(*) FROM suppressions WHERE reason = ?1", [reason], |row| row.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(by_reason("unsubscribed"), left, "one unsubscribed suppression per confirmed subscriber who left");
    assert_eq!(by_reason("not_me"), 24 - left, "one not_me suppression per address removed while pending");
}

// ---------------------------------------------------------------------------------------------
// Signatures, checked by another language's implementation of the scheme

/// `python3` with the Standard Webhooks library (1.1.0, as `.ci/run` installs it).
fn python() -> Command {
    python_with("standardwebhooks.webhooks", &["standardwebhooks==1.1.0"])
}

/// Header names and values, as recorded.
type Headers = [(String, String)];

/// Verifies each `(body, headers)` with `Webhook(secret).verify` of the Python library; one
/// line per case: `verified <type>` or `rejected <exception> <message>`.
fn verify_in_python(secret: &str, cases: &[(Vec<u8>, &Headers)]) -> Vec<String> {
    const SCRIPT: &str = "
import base64, json, sys
from standardwebhooks.webhooks import Webhook
request = json.load(sys.stdin)
webhook = Webhook(request['secret'])
for case in request['cases']:
    try:
        event = webhook.verify(base64.b64decode(case['body']), case['headers'])
        print('verified', event['type'])
    except Exception as error:
        print('rejected', type(error).__name__, error)
";
    let cases: Vec<Value> = cases
        .iter()
        .map(|(body, headers)| {
            let headers: serde_json::Map<String, Value> =
                headers.iter().map(|(name, value)| (name.clone(), Value::from(value.as_str()))).collect();
            json!({"body": STANDARD.encode(body), "headers": headers})
        })
        .collect();
    run_python(python(), SCRIPT, &json!({"secret": secret, "cases": cases}))
}

#[actix_web::test]
async fn signatures_verify_with_the_python_standard_webhooks_library_and_a_tampered_request_does_not() {
    // Arrange (the library checks webhook-timestamp against the real time; the app's clock
    // stands at START)
    let receiver = Receiver::start(Reply::Status(204));
    let (app, secret) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    confirm(&app, "jane@example.com").await;
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::Delivered]);
    let request = receiver.requests().pop().unwrap();
    let tampered_body = request.text().replace("jane@example.com", "mallory@example.com").into_bytes();
    assert_ne!(tampered_body, request.body, "the body names the address");
    let other_id: Vec<(String, String)> = request
        .headers
        .iter()
        .map(|(name, value)| (name.clone(), if name == "webhook-id" { format!("{value}x") } else { value.clone() }))
        .collect();

    // Act
    let verdicts = verify_in_python(
        &secret,
        &[
            (request.body.clone(), &request.headers),
            (tampered_body, &request.headers),
            (request.body.clone(), &other_id),
        ],
    );

    // Assert
    assert_eq!(verdicts.len(), 3, "{verdicts:?}");
    assert_eq!(verdicts[0], format!("verified {CONFIRMED}"), "the request as signupd sent it");
    for (case, verdict) in ["a tampered body", "another webhook-id"].iter().zip(&verdicts[1..]) {
        assert!(
            verdict.starts_with("rejected WebhookVerificationError") && verdict.contains("signature"),
            "{case}: {verdict}"
        );
    }
}

/// A child process killed (SIGKILL) when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Python receiver of the operations guide.
fn documented_receiver() -> String {
    let code = guide_example("receiver-example");
    assert!(code.contains("Webhook(") && code.contains("serve_forever"), "the example is a receiver:\n{code}");
    code
}

#[actix_web::test]
async fn the_documented_receiver_example_accepts_signupd_events_and_refuses_a_wrong_secret_with_401() {
    // Arrange: the documented receiver on a free port, with the app's secret
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("receiver.py");
    std::fs::write(&script, documented_receiver()).unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let (app, secret) = app_with_hooks("", "", &[("crm", &url)]).await;
    let mut child = python()
        .arg(&script)
        .env("SIGNUPD_WEBHOOK_SECRET", &secret)
        .env("PORT", port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let mut receiver = KillOnDrop(child);
    let (sender, printed) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let errors = Arc::new(Mutex::new(String::new()));
    let collected = errors.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            collected.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        let exited = receiver.0.try_wait().unwrap();
        assert!(
            exited.is_none() && Instant::now() < deadline,
            "the documented receiver did not start ({exited:?}): {}",
            errors.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    confirm(&app, "jane@example.com").await;
    let event_id = queued(&app)[0].event_id.clone();

    // Act
    let outcomes = deliver(&app, "crm").await;

    // Assert: verified, printed and answered 204
    assert_eq!(outcomes, [DeliveryOutcome::Delivered], "receiver stderr: {}", errors.lock().unwrap());
    let line = printed.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(line.contains(&event_id) && line.contains(CONFIRMED) && line.contains("jane@example.com"), "{line}");

    // Act: the same body signed with another secret, and (the control) with the right one
    let body = json!({"type": CONFIRMED, "timestamp": "2026-01-01T00:00:00Z", "data": {}}).to_string();
    let mut statuses = Vec::new();
    for (id, secret) in [("evt_forged", new_secret()), ("evt_control", secret.clone())] {
        let key = signupd::outbound::webhooks::parse_secret(&secret).unwrap();
        let now = unix_now();
        let response = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signupd::outbound::webhooks::sign(&key, id, now, &body))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }

    // Assert
    assert_eq!(statuses, [401, 204], "wrong secret refused, right one accepted");
    let line = printed.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(line.starts_with("evt_control "), "the forged request printed nothing: {line}");
    assert!(receiver.0.try_wait().unwrap().is_none(), "still running until killed");
}

// ---------------------------------------------------------------------------------------------
// Failures and retries

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Status500,
    Hang,
    Closed,
    Redirect,
    NotListening,
}

impl Failure {
    /// What `last_error` says about it.
    fn words(self) -> &'static str {
        match self {
            Self::Status500 => "HTTP 500",
            Self::Hang => "no answer within 1s",
            Self::Closed => "closed",
            Self::Redirect => "HTTP 302",
            Self::NotListening => "refused",
        }
    }
}

/// The event of one confirm fails twice as `failure`, waiting for its backoff each time, then
/// the receiver answers 204: delivered exactly once, every attempt with the same webhook-id.
async fn assert_retried_with_the_same_id_until_delivered(failure: Failure) {
    // Arrange
    let elsewhere = Receiver::start(Reply::Status(204));
    let (receiver, port) = match failure {
        Failure::NotListening => (None, free_port()),
        _ => {
            let reply = match failure {
                Failure::Status500 => Reply::Status(500),
                Failure::Hang => Reply::Hang,
                Failure::Closed => Reply::Close,
                _ => Reply::Redirect(elsewhere.url(HOOK_PATH)),
            };
            let receiver = Receiver::start(reply);
            let port = receiver.port;
            (Some(receiver), port)
        }
    };
    let (app, _) = app_with_hooks("", "", &[("crm", &format!("http://127.0.0.1:{port}{HOOK_PATH}"))]).await;
    confirm(&app, "jane@example.com").await;
    let event_id = queued(&app)[0].event_id.clone();

    for attempt in 1..=2 {
        // Act
        let outcomes = deliver(&app, "crm").await;

        // Assert: still queued, counted, with the reason and no address
        let [DeliveryOutcome::Retrying { detail }] = outcomes.as_slice() else {
            panic!("{failure:?}, attempt {attempt}: {outcomes:?}");
        };
        assert!(detail.contains(failure.words()), "{failure:?}: {detail}");
        let rows = queued(&app);
        assert_eq!(rows.len(), 1, "{failure:?}: {rows:?}");
        let row = &rows[0];
        assert_eq!((row.event_id.as_str(), row.attempts), (event_id.as_str(), attempt));
        let lease_until: i64 =
            db(&app).query_row("SELECT lease_until FROM sink_leases WHERE sink = 'crm'", [], |r| r.get(0)).unwrap();
        assert!(lease_until <= app.clock.now(), "{failure:?}: the lease is given back");
        let last_error = row.last_error.clone().unwrap_or_default();
        assert!(last_error.contains(failure.words()), "{failure:?}: last_error {last_error:?}");
        assert!(!last_error.contains('@'), "{failure:?}: an address in last_error {last_error:?}");
        assert!(row.next_attempt_at > app.clock.now(), "{failure:?}: a backoff");
        assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::EmptyQueue], "{failure:?}: waits for its backoff");
        // Past the backoff: retry_base 30 s, doubling, ±20 %.
        app.clock.advance(Duration::from_secs(80 * u64::try_from(attempt).unwrap()));
    }

    // Act: the receiver answers
    let receiver = match receiver {
        Some(receiver) => {
            receiver.reply_with(Reply::Status(204));
            receiver
        }
        None => Receiver::start_on(port, Reply::Status(204)),
    };
    let outcomes = deliver(&app, "crm").await;

    // Assert
    assert_eq!(outcomes, [DeliveryOutcome::Delivered], "{failure:?}");
    assert_eq!(count(&app, "webhook_deliveries"), 0, "{failure:?}");
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::EmptyQueue], "{failure:?}");
    let requests = receiver.requests();
    let expected = if failure == Failure::NotListening { 1 } else { 3 };
    assert_eq!(requests.len(), expected, "{failure:?}: every attempt reached it: {requests:?}");
    assert_eq!(requests.iter().filter(|r| r.reply == Reply::Status(204)).count(), 1, "{failure:?}: delivered once");
    assert_eq!(requests.last().unwrap().reply, Reply::Status(204));
    let ids: Vec<String> = requests.iter().map(Recorded::webhook_id).collect();
    assert!(ids.iter().all(|id| *id == event_id), "{failure:?}: one webhook-id on every attempt: {ids:?}");
    assert!(elsewhere.requests().is_empty(), "{failure:?}: a redirect is never followed");
}

#[actix_web::test]
async fn a_500_is_retried_with_the_same_webhook_id_and_delivered_once_the_receiver_is_back() {
    assert_retried_with_the_same_id_until_delivered(Failure::Status500).await;
}

#[actix_web::test]
async fn no_answer_within_the_timeout_is_retried_with_the_same_webhook_id_and_delivered_once_the_receiver_is_back() {
    assert_retried_with_the_same_id_until_delivered(Failure::Hang).await;
}

#[actix_web::test]
async fn a_connection_closed_without_an_answer_is_retried_and_delivered_once_the_receiver_is_back() {
    assert_retried_with_the_same_id_until_delivered(Failure::Closed).await;
}

#[actix_web::test]
async fn a_302_is_not_followed_but_retried_and_delivered_once_the_receiver_is_back() {
    assert_retried_with_the_same_id_until_delivered(Failure::Redirect).await;
}

#[actix_web::test]
async fn a_receiver_not_listening_is_retried_and_delivered_once_it_listens() {
    assert_retried_with_the_same_id_until_delivered(Failure::NotListening).await;
}

#[actix_web::test]
async fn four_real_workers_racing_for_one_endpoint_post_each_event_once_and_in_order() {
    // Arrange: 24 subscribers confirmed and every third removed again, before any delivery: 32
    // events, eight pairs that must arrive confirmed first
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    let emails: Vec<String> = (0..24).map(|i| format!("reader{i}@example.com")).collect();
    for (i, email) in emails.iter().enumerate() {
        let removal = confirm(&app, email).await;
        if i % 3 == 0 {
            assert_eq!(location(&post_token(&app, "/api/manage", &removal).await), "/removed?list=news");
        }
    }
    assert_eq!(queued(&app).len(), 32);

    // Act: four background workers of the same endpoint, as if two servers shared the file,
    // each with a lease holder of its own
    let endpoint = app.state.webhooks.endpoints()[0].clone();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let mut stopped = stopped.clone();
            let until_stopped = async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            tokio::spawn(signupd::outbound::webhooks::worker::run_worker(
                app.state.deliverer(endpoint.clone()),
                until_stopped,
            ))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.requests().len() < 32 {
        assert!(Instant::now() < deadline, "not delivered: {} of 32", receiver.requests().len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Time for a worker that read the events beside the winner to post them twice
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.send(true).unwrap();
    for worker in workers {
        worker.await.unwrap();
    }

    // Assert: each event posted once; each removed subscriber's confirmed before its unsubscribed
    let requests = receiver.requests();
    let mut ids: Vec<String> = requests.iter().map(|r| r.header("webhook-id").unwrap_or_default().to_owned()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!((requests.len(), ids.len()), (32, 32), "each event once");
    let seen = types_and_emails(&requests);
    for (i, email) in emails.iter().enumerate() {
        let types: Vec<&str> = seen.iter().filter(|(_, e)| e == email).map(|(kind, _)| kind.as_str()).collect();
        let expected: &[&str] = if i % 3 == 0 { &[CONFIRMED, UNSUBSCRIBED] } else { &[CONFIRMED] };
        assert_eq!(types, expected, "{email}");
    }
    assert!(queued(&app).is_empty());
}

/// Keeps the writer busy as a wave of requests would: `threads` loops, each sending one
/// foreground command after another (an erasure request for an address nobody holds, which
/// writes nothing but is one command each), until `stop` is set. Each on a thread and runtime
/// of its own: the removal's future is not `Send` for `tokio::spawn`.
fn busy_writer(app: &TestApp, threads: usize, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<u64>> {
    (0..threads)
        .map(|_| {
            let (state, stop) = (app.state.clone(), stop.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async {
                    let lists = vec![signupd::domain::ListId::parse("news").unwrap()];
                    let nobody = signupd::domain::EmailAddress::parse("nobody@example.com").unwrap();
                    let mut sent = 0;
                    while !stop.load(Ordering::Relaxed) {
                        state.subscriptions().remove_address(&lists, &nobody, None, START).await.unwrap();
                        sent += 1;
                    }
                    sent
                })
            })
        })
        .collect()
}

/// Waits up to `within` for the receiver to have `n` requests; how long it took.
async fn received(receiver: &Receiver, n: usize, within: Duration) -> Duration {
    let started = Instant::now();
    while receiver.requests().len() < n {
        assert!(started.elapsed() < within, "{} of {n} within {within:?}", receiver.requests().len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

#[actix_web::test]
async fn a_real_worker_hands_on_one_batch_then_waits_while_the_writer_is_busy_at_most_max_yield_and_resumes_when_it_is_not()
 {
    use signupd::outbound::webhooks::worker::{BATCH, MAX_YIELD};
    // Arrange: three batches and a bit of due events, queued for a receiver that answers at once
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    let events = 3 * BATCH + 8;
    {
        let conn = db(&app);
        for i in 0..events {
            conn.execute(
                "INSERT INTO webhook_deliveries (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at)
                 VALUES ('crm', ?1, 'subscriber.confirmed', ?1, '{}', ?2, 0)",
                rusqlite::params![format!("e{i}"), START],
            )
            .unwrap();
        }
    }
    let stop_load = Arc::new(AtomicBool::new(false));
    let load = busy_writer(&app, 4, &stop_load);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Act: the real worker, while the writer is kept busy
    let endpoint = app.state.webhooks.endpoints()[0].clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker =
        tokio::spawn(signupd::outbound::webhooks::worker::run_worker(app.state.deliverer(endpoint), async move {
            let _ = stopped.await;
        }));

    // Assert: the first batch at once; the next only after MAX_YIELD, as long as the load lasts
    received(&receiver, BATCH, Duration::from_secs(5)).await;
    let second = received(&receiver, BATCH + 1, MAX_YIELD + Duration::from_secs(5)).await;
    assert!(second >= MAX_YIELD - Duration::from_secs(2), "the second batch after {second:?}, under load");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.requests().len(), 2 * BATCH, "one batch per wait while the load lasts");

    // Act: the load ends
    stop_load.store(true, Ordering::Relaxed);
    let mut sent = 0;
    for task in load {
        sent += task.join().unwrap();
    }

    // Assert: the rest goes out at once, each event once
    let rest = received(&receiver, events, Duration::from_secs(5)).await;
    assert!(rest < Duration::from_secs(3), "the rest {rest:?} after the load ended");
    stop.send(()).unwrap();
    worker.await.unwrap();
    let mut ids: Vec<String> = receiver.requests().iter().map(Recorded::webhook_id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), events, "each event once");
    assert!(queued(&app).is_empty());
    let seconds = (MAX_YIELD + Duration::from_secs(4)).as_secs();
    assert!(sent > seconds * 400, "the load was a busy writer: {sent} commands in about {seconds} s");
}

#[actix_web::test]
async fn unsubscribed_is_never_posted_before_the_confirmed_event_of_the_same_subscriber() {
    // Arrange: confirmed, then removed through the manage page, before any delivery; the
    // receiver fails
    let receiver = Receiver::start(Reply::Status(500));
    let (app, _) = app_with_hooks("", "", &[("crm", &receiver.url(HOOK_PATH))]).await;
    let removal = confirm(&app, "jane@example.com").await;
    assert_eq!(location(&post_token(&app, "/api/manage", &removal).await), "/removed?list=news");
    let types: Vec<String> = queued(&app).into_iter().map(|row| row.event_type).collect();
    assert_eq!(types, [CONFIRMED, UNSUBSCRIBED]);

    for round in 1..=2 {
        // Act: both are due; only the older may go
        let outcomes = deliver(&app, "crm").await;
        let again = deliver(&app, "crm").await;

        // Assert
        assert!(matches!(outcomes.as_slice(), [DeliveryOutcome::Retrying { .. }]), "round {round}: {outcomes:?}");
        assert_eq!(again, [DeliveryOutcome::EmptyQueue], "round {round}: unsubscribed waits behind confirmed");
        let attempts: Vec<(String, i64)> = queued(&app).into_iter().map(|row| (row.event_type, row.attempts)).collect();
        assert_eq!(attempts, [(CONFIRMED.to_owned(), round), (UNSUBSCRIBED.to_owned(), 0)], "never attempted");
        app.clock.advance(Duration::from_secs(80 * u64::try_from(round).unwrap()));
    }

    // Act: the receiver is back
    receiver.reply_with(Reply::Status(204));
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        outcomes.extend(deliver(&app, "crm").await);
    }

    // Assert: confirmed, then unsubscribed
    assert_eq!(outcomes, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered, DeliveryOutcome::EmptyQueue]);
    let requests = receiver.requests();
    let seen: Vec<(String, Reply)> = types_and_emails(&requests)
        .into_iter()
        .map(|(kind, _)| kind)
        .zip(requests.iter().map(|r| r.reply.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (CONFIRMED.to_owned(), Reply::Status(500)),
            (CONFIRMED.to_owned(), Reply::Status(500)),
            (CONFIRMED.to_owned(), Reply::Status(204)),
            (UNSUBSCRIBED.to_owned(), Reply::Status(204)),
        ]
    );
    assert_eq!(count(&app, "webhook_deliveries"), 0);
}

#[actix_web::test]
async fn each_endpoints_unsubscribed_waits_only_for_its_own_confirmed_event() {
    // Arrange: two endpoints; the live one has delivered confirmed, the dead one has not, when
    // the subscriber leaves
    let live = Receiver::start(Reply::Status(204));
    let port = free_port();
    let dead = format!("http://127.0.0.1:{port}{HOOK_PATH}");
    let (app, _) = app_with_hooks("", "", &[("dead", &dead), ("live", &live.url(HOOK_PATH))]).await;
    let removal = confirm(&app, "jane@example.com").await;
    assert_eq!(deliver(&app, "live").await, [DeliveryOutcome::Delivered]);
    assert_eq!(location(&post_token(&app, "/api/manage", &removal).await), "/removed?list=news");

    // Act
    let live_outcomes = deliver(&app, "live").await;
    let dead_outcomes = deliver(&app, "dead").await;

    // Assert: the live endpoint hears of the removal at once; the dead one's unsubscribed waits
    // behind its confirmed, never attempted
    assert_eq!(live_outcomes, [DeliveryOutcome::Delivered]);
    assert_eq!(
        types_and_emails(&live.requests()).into_iter().map(|(kind, _)| kind).collect::<Vec<_>>(),
        [CONFIRMED, UNSUBSCRIBED]
    );
    assert!(matches!(dead_outcomes.as_slice(), [DeliveryOutcome::Retrying { .. }]), "{dead_outcomes:?}");
    let left: Vec<(String, String, i64)> =
        queued(&app).into_iter().map(|row| (row.endpoint, row.event_type, row.attempts)).collect();
    assert_eq!(left, [("dead".into(), CONFIRMED.into(), 1), ("dead".into(), UNSUBSCRIBED.into(), 0)]);

    // Act: the dead endpoint comes up
    let receiver = Receiver::start_on(port, Reply::Status(204));
    app.clock.advance(Duration::from_secs(80));
    let mut outcomes = deliver(&app, "dead").await;
    outcomes.extend(deliver(&app, "dead").await);

    // Assert: confirmed, then unsubscribed
    assert_eq!(outcomes, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered]);
    let kinds: Vec<String> = types_and_emails(&receiver.requests()).into_iter().map(|(kind, _)| kind).collect();
    assert_eq!(kinds, [CONFIRMED, UNSUBSCRIBED]);
    assert_eq!(count(&app, "webhook_deliveries"), 0);
}

#[actix_web::test]
async fn a_dead_endpoint_keeps_its_events_queued_and_holds_up_no_other() {
    // Arrange: the dead one configured first
    let live = Receiver::start(Reply::Status(204));
    let dead = format!("http://127.0.0.1:{}{HOOK_PATH}", free_port());
    let (app, _) = app_with_hooks("", "", &[("dead", &dead), ("live", &live.url(HOOK_PATH))]).await;
    confirm(&app, "ann@example.com").await;
    confirm(&app, "bob@example.com").await;

    // Act
    let dead_outcomes = deliver(&app, "dead").await;
    let live_outcomes = deliver(&app, "live").await;

    // Assert
    assert!(
        dead_outcomes.len() == 2 && dead_outcomes.iter().all(|o| matches!(o, DeliveryOutcome::Retrying { .. })),
        "{dead_outcomes:?}"
    );
    assert_eq!(live_outcomes, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered]);
    let mut received = types_and_emails(&live.requests());
    received.sort();
    assert_eq!(
        received,
        [(CONFIRMED.to_owned(), "ann@example.com".to_owned()), (CONFIRMED.to_owned(), "bob@example.com".to_owned())]
    );
    let left: Vec<(String, i64)> = queued(&app).into_iter().map(|row| (row.endpoint, row.attempts)).collect();
    assert_eq!(left, [("dead".to_owned(), 1), ("dead".to_owned(), 1)], "the dead endpoint's events wait");
    assert_eq!(deliver(&app, "live").await, [DeliveryOutcome::EmptyQueue]);
}

#[actix_web::test]
async fn an_event_still_undelivered_after_webhook_max_age_is_dropped_and_alerted_without_the_address() {
    // Arrange
    let alert = Receiver::start(Reply::Status(204));
    let dead = format!("http://127.0.0.1:{}{HOOK_PATH}", free_port());
    let mail = format!("webhook_max_age = \"1m\"\nalert_webhook = \"{}\"\n", alert.url("/alert"));
    let (app, _) = app_with_hooks(&mail, "", &[("crm", &dead)]).await;
    confirm(&app, "jane.doe@example.com").await;
    let first = deliver(&app, "crm").await;
    assert!(matches!(first.as_slice(), [DeliveryOutcome::Retrying { .. }]), "within the max age: {first:?}");
    assert_eq!(count(&app, "webhook_deliveries"), 1);
    assert!(alert.requests().is_empty(), "no alert while it may still be delivered");

    // Act: past the max age
    app.clock.advance(Duration::from_secs(70));
    let outcomes = deliver(&app, "crm").await;

    // Assert
    assert!(matches!(outcomes.as_slice(), [DeliveryOutcome::Dropped { .. }]), "{outcomes:?}");
    assert_eq!(count(&app, "webhook_deliveries"), 0, "dropped: the address goes with it");
    assert_eq!(deliver(&app, "crm").await, [DeliveryOutcome::EmptyQueue]);
    let requests = alert.requests();
    assert_eq!(requests.len(), 1, "one alert: {requests:?}");
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/alert"));
    assert!(request.header("content-type").is_some_and(|value| value.starts_with("application/json")));
    let body = request.text();
    let alert: Value = request.json();
    assert_eq!((alert["endpoint"].as_str(), alert["event_type"].as_str()), (Some("crm"), Some(CONFIRMED)), "{body}");
    assert!(!body.contains('@') && !body.contains("jane"), "no address in the alert: {body}");
}

// ---------------------------------------------------------------------------------------------
// Secrets at start

/// Secret files that must stop the start: (case, contents or `None` for no file, the reason).
fn bad_secrets() -> Vec<(&'static str, Option<String>, &'static str)> {
    vec![
        ("missing file", None, "cannot read"),
        ("without whsec_", Some(format!("{}\n", STANDARD.encode([7u8; 32]))), "whsec_"),
        ("16 bytes", Some(format!("whsec_{}\n", STANDARD.encode([7u8; 16]))), "at least 24"),
    ]
}

#[actix_web::test]
async fn a_missing_or_malformed_webhook_secret_stops_the_start_naming_webhooks_0_secret_file() {
    for (case, contents, reason) in bad_secrets() {
        // Arrange
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("webhook_secret");
        if let Some(contents) = &contents {
            std::fs::write(&path, contents).unwrap();
        }
        let config = test_config(dir.path(), &hook_toml("crm", "http://127.0.0.1:9/", &path));
        let options = BuildOptions {
            clock: Arc::new(ManualClock::starting_at(START)),
            credentials_dir: None,
            background_workers: false,
        };

        // Act
        let built = Application::build_with(config, options).await;

        // Assert
        let Err(error) = built else { panic!("{case}: the app started") };
        let message = format!("{error:#}");
        assert!(message.contains("webhooks[0].secret_file") && message.contains(reason), "{case}: {message}");
        if let Some(contents) = contents {
            let encoded = contents.trim_end().trim_start_matches("whsec_");
            assert!(!message.contains(encoded), "{case}: the secret in the error: {message}");
        }
    }
}

#[test]
fn check_config_names_a_bad_webhook_secret_file_and_never_prints_a_secret() {
    // Arrange: a good secret
    let dir = tempfile::tempdir().unwrap();
    let secret = new_secret();
    let path = write_secret(dir.path(), &secret);
    let config = write_config(dir.path(), &hook_toml("crm", "http://127.0.0.1:9/", &path));

    // Act
    let output = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();

    // Assert
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("[[webhooks]]") && stdout.contains("name = \"crm\""), "{stdout}");
    let encoded = secret.trim_start_matches("whsec_");
    assert!(!stdout.contains(encoded), "the secret is printed: {stdout}");

    for (case, contents, reason) in bad_secrets() {
        // Arrange
        let _ = std::fs::remove_file(&path);
        if let Some(contents) = &contents {
            std::fs::write(&path, contents).unwrap();
        }

        // Act
        let output = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();

        // Assert
        let stderr = String::from_utf8_lossy(&output.stderr);
        let all = format!("{}{stderr}", String::from_utf8_lossy(&output.stdout));
        assert_eq!(output.status.code(), Some(1), "{case}: {all}");
        assert!(stderr.contains("webhooks[0].secret_file") && stderr.contains(reason), "{case}: {stderr}");
        if let Some(contents) = contents {
            let encoded = contents.trim_end().trim_start_matches("whsec_");
            assert!(!all.contains(encoded), "{case}: the secret is printed: {all}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_queued_when_serve_is_killed_9_is_delivered_after_the_restart() {
    // Arrange: background workers on, retries 4 s apart, a receiver that fails
    let receiver = Receiver::start(Reply::Status(500));
    let dir = tempfile::tempdir().unwrap();
    let secret_file = write_secret(dir.path(), &new_secret());
    let extra = format!(
        "retry_base = \"4s\"\nwebhook_timeout = \"2s\"\n{}",
        hook_toml("crm", &receiver.url(HOOK_PATH), &secret_file)
    );
    let config = process::config(dir.path(), 1000, &extra);
    let database = dir.path().join("data/signupd.sqlite3");
    let client = process::client();
    let mut server = process::serve(&config);
    let signup = client
        .post(server.url("/api/signup"))
        .form(&[("email", "jane@example.com"), ("consent", "yes"), ("list", "news")])
        .send()
        .await
        .unwrap();
    assert_eq!(signup.status().as_u16(), 303);
    let deadline = Instant::now() + Duration::from_secs(20);
    let token = loop {
        let mails = process::tokens_by_recipient(&dir.path().join("data/mail"));
        if let Some(token) = mails.get("jane@example.com").and_then(|tokens| tokens.confirm.clone()) {
            break token;
        }
        assert!(Instant::now() < deadline, "no confirmation mail was written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let confirmed = client.post(server.url("/api/confirm")).form(&[("token", token.as_str())]).send().await.unwrap();
    assert_eq!(confirmed.status().as_u16(), 303);

    // Act: kill -9 once an attempt failed, while the event waits for its retry (not while a
    // worker holds it)
    let deadline = Instant::now() + Duration::from_secs(30);
    let waiting = loop {
        let rows = queued_in(&read_only(&database));
        // An attempt is counted when it is settled, in the commit that gives the lease back.
        if let [row] = rows.as_slice()
            && row.attempts >= 1
            && row.next_attempt_at >= unix_now() + 2
        {
            server.kill_9();
            break row.clone();
        }
        assert!(Instant::now() < deadline, "no failed attempt waiting for its retry: {rows:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let failed = receiver.requests();
    assert!(!failed.is_empty(), "the receiver saw the failed attempt(s)");
    assert_eq!(queued_in(&read_only(&database)).len(), 1, "the event survived the kill");
    receiver.reply_with(Reply::Status(204));
    let server = process::serve(&config);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !queued_in(&read_only(&database)).is_empty() {
        assert!(Instant::now() < deadline, "the event was not delivered after the restart");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await;

    // Assert
    let requests = receiver.requests();
    assert_eq!(requests.iter().filter(|r| r.reply == Reply::Status(204)).count(), 1, "delivered once: {requests:?}");
    assert_eq!(requests.last().unwrap().reply, Reply::Status(204));
    assert!(requests.iter().all(|r| r.webhook_id() == waiting.event_id), "one webhook-id: {requests:?}");
    assert_eq!(requests.last().unwrap().json()["type"], CONFIRMED);
    let statuses = process::strings(&read_only(&database), "SELECT status FROM subscribers");
    assert_eq!(statuses.into_iter().collect::<Vec<_>>(), ["confirmed"], "the confirm survived too");
}

#[test]
fn send_test_webhook_prints_the_endpoint_and_its_204_or_exits_1_with_a_hint_when_nothing_listens() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let dead = format!("http://127.0.0.1:{}{HOOK_PATH}", free_port());
    let dir = tempfile::tempdir().unwrap();
    let secret_file = write_secret(dir.path(), &new_secret());
    let (live_dir, dead_dir) = (dir.path().join("live"), dir.path().join("dead"));
    std::fs::create_dir(&live_dir).unwrap();
    std::fs::create_dir(&dead_dir).unwrap();
    let live_config = write_config(&live_dir, &hook_toml("crm", &receiver.url(HOOK_PATH), &secret_file));
    let dead_config = write_config(&dead_dir, &hook_toml("crm", &dead, &secret_file));

    // Act
    let live = signupd().arg("send-test-webhook").arg("--config").arg(&live_config).output().unwrap();
    let dead = signupd().arg("send-test-webhook").arg("--config").arg(&dead_config).output().unwrap();

    // Assert: the live one
    let stdout = String::from_utf8_lossy(&live.stdout);
    assert_eq!(live.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&live.stderr));
    assert!(stdout.starts_with("crm: 204 in "), "{stdout}");
    let requests = receiver.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].json()["type"], "test");
    assert!(requests[0].header("webhook-signature").is_some_and(|s| s.starts_with("v1,")), "{requests:?}");

    // Assert: the dead one
    let all = format!("{}{}", String::from_utf8_lossy(&dead.stdout), String::from_utf8_lossy(&dead.stderr));
    assert_eq!(dead.status.code(), Some(1), "{all}");
    assert!(all.contains("crm") && all.contains("refused") && all.contains("listening"), "{all}");
}
