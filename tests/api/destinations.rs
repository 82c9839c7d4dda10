//! Destinations (`docs/operations.md` "Handing subscribers to your sender"): a confirmed
//! subscriber handed to listmonk, Buttondown, Mailchimp or Brevo already confirmed, unsubscribed
//! there when they leave and never deleted; duplicates are success; 429 waits for the sender's
//! reset header, 5xx, 401/403 and a closed port are retried, any other 4xx is dropped at once
//! with the alert; at least once across `kill -9`; the credential and the address in no log line,
//! no alert and no `last_error`.
//!
//! The senders are the loopback models of `sender_apis.rs`. In-process apps run with the
//! background workers off: the tests deliver with `try_deliver_batch` and move the manual clock.
//! Every behaviour that every kind shares is one function, run for each kind by `per_kind!`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::OptionalExtension;
use serde_json::{Value, json};
use signupd::clock::Clock;
use signupd::outbound::webhooks::worker::{DeliveryOutcome, try_deliver_batch};

use crate::confirm::{deliver as send_mail, dump, location, post_token, signed_up_and_mailed, status_of};
use crate::helpers::{TestApp, signupd, spawn_app_in, write_config};
use crate::manage::one_click;
use crate::process::{self, read_only, unix_now};
use crate::sender_apis::{Answer, Kind, Recorded, SenderApi, Standing, subscriber_hash};
use crate::signup::{RAISED_LIMITS, count, db};
use crate::webhook_receiver::{Receiver, Reply};

/// The destination's name in every test.
const NAME: &str = "out";
const CONFIRMED: &str = "subscriber.confirmed";
const UNSUBSCRIBED: &str = "subscriber.unsubscribed";
/// An address with a `+` and dots: it travels in URL paths (Buttondown, Brevo) and in listmonk's
/// regular-expression lookup, where both mean something else.
const JANE: &str = "jane.doe+news@example.com";
const ANN: &str = "ann@example.com";
const BOB: &str = "bob@example.com";
const CAT: &str = "cat@example.com";
/// The tags configured where the kind keeps tags.
const TAGS: [&str; 2] = ["signupd", "spring"];

// ---------------------------------------------------------------------------------------------
// Set-up

/// Writes `credential` (with the newline `echo` leaves) to `dir/credential-<name>`.
pub fn write_credential(dir: &Path, name: &str, credential: &str) -> PathBuf {
    let path = dir.join(format!("credential-{name}"));
    std::fs::write(&path, format!("{credential}\n")).unwrap();
    path
}

/// One `[[destinations]]` table for `api`, with the tags where its kind keeps them.
pub fn destination_toml(name: &str, api: &SenderApi, credential_file: &Path) -> String {
    let tags = if api.kind.has_tags() { format!("tags = {TAGS:?}\n") } else { String::new() };
    format!(
        "[[destinations]]\nname = \"{name}\"\nkind = \"{}\"\nurl = \"{}\"\ncredential_file = {:?}\ntarget = \"{}\"\n{tags}",
        api.kind.as_str(),
        api.base_url(),
        credential_file.display().to_string(),
        api.target()
    )
}

/// An in-process app (background workers off) with the destination [`NAME`] on `api`, holding
/// `credential`; `mail` goes into `[mail]` after `webhook_timeout = "1s"`.
async fn app_for(api: &SenderApi, credential: &str, mail: &str) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let path = write_credential(dir.path(), NAME, credential);
    let extra =
        format!("{RAISED_LIMITS}[mail]\nwebhook_timeout = \"1s\"\n{mail}\n{}", destination_toml(NAME, api, &path));
    spawn_app_in(dir, &extra).await
}

/// Signs `email` up, confirms it with the button 90 s later and sends the welcome mail; returns
/// the removal token of the welcome mail's manage link.
async fn confirm(app: &TestApp, email: &str) -> String {
    let (token, _) = signed_up_and_mailed(app, email).await;
    app.clock.advance(Duration::from_secs(90));
    let response = post_token(app, "/api/confirm", &token).await;
    assert_eq!(location(&response), "/confirmed?list=news", "confirming {email}");
    let welcome = send_mail(app).await;
    assert_eq!(welcome.len(), 1, "one welcome mail to {email}");
    welcome[0].manage_token()
}

/// One batch of the destination's worker, as it would run it; bounded, so a hang fails the test.
async fn deliver(app: &TestApp) -> Vec<DeliveryOutcome> {
    let destination = app
        .state
        .webhooks
        .destinations()
        .iter()
        .find(|destination| destination.name() == NAME)
        .expect("the destination is configured")
        .clone();
    let deliverer = app.state.destination_deliverer(destination);
    let batch = try_deliver_batch(&deliverer, 64, || false);
    tokio::time::timeout(Duration::from_secs(30), batch).await.expect("a delivery batch hung").unwrap()
}

/// A row of `webhook_deliveries`.
#[derive(Debug, Clone)]
struct Queued {
    endpoint: String,
    event_id: String,
    event_type: String,
    email: String,
    attempts: i64,
    next_attempt_at: i64,
    last_error: Option<String>,
}

fn queued_in(conn: &rusqlite::Connection) -> Vec<Queued> {
    let mut statement = conn
        .prepare(
            "SELECT endpoint, event_id, event_type, payload, attempts, next_attempt_at, last_error
             FROM webhook_deliveries ORDER BY id",
        )
        .unwrap();
    statement
        .query_map([], |row| {
            let payload: Value = serde_json::from_str(&row.get::<_, String>(3)?).unwrap();
            Ok(Queued {
                endpoint: row.get(0)?,
                event_id: row.get(1)?,
                event_type: row.get(2)?,
                email: payload["data"]["email"].as_str().unwrap_or_default().to_owned(),
                attempts: row.get(4)?,
                next_attempt_at: row.get(5)?,
                last_error: row.get(6)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Until when the worker of `sink` holds its lease, if it ever took it.
fn sink_lease_in(conn: &rusqlite::Connection, sink: &str) -> Option<i64> {
    conn.query_row("SELECT lease_until FROM sink_leases WHERE sink = ?1", [sink], |row| row.get(0)).optional().unwrap()
}

/// The worker gave the sink's lease back when it settled its batch: the next round (or the next
/// start) may deliver at once.
fn assert_lease_given_back(app: &TestApp, sink: &str) {
    let lease_until = sink_lease_in(&db(app), sink).expect("taken for the batch");
    assert!(lease_until <= app.clock.now(), "lease held until {lease_until}");
}

fn queued(app: &TestApp) -> Vec<Queued> {
    queued_in(&db(app))
}

/// `(event type, email)` of each queued row, in order.
fn queued_events(app: &TestApp) -> Vec<(String, String)> {
    queued(app).into_iter().map(|row| (row.event_type, row.email)).collect()
}

/// No table holds the address's local part followed by `@` any more.
fn assert_address_gone(app: &TestApp, email: &str) {
    let local = format!("{}@", email.split('@').next().unwrap());
    let found: Vec<String> = dump(app).into_iter().filter(|line| line.to_lowercase().contains(&local)).collect();
    assert!(found.is_empty(), "{email} is still stored: {found:?}");
}

/// The queue holds nothing, and so no address.
fn assert_queue_empty(app: &TestApp, case: &str) {
    assert_eq!(count(app, "webhook_deliveries"), 0, "{case}: {:?}", queued(app));
}

fn assert_never_deleted(api: &SenderApi) {
    let deletes: Vec<_> = api.requests().into_iter().filter(|r| r.method == "DELETE").collect();
    assert!(deletes.is_empty(), "{:?}: nothing the sender holds is ever deleted: {deletes:?}", api.kind);
}

fn retrying(outcome: &DeliveryOutcome) -> &str {
    match outcome {
        DeliveryOutcome::Retrying { detail } => detail,
        other => panic!("expected a retry, got {other:?}"),
    }
}

/// Runs each named `async fn(Kind)` once per kind, as a test named after it in a module per kind
/// (`destinations::listmonk::…`).
macro_rules! per_kind {
    ($($test:ident),* $(,)?) => {
        mod listmonk {
            $( #[actix_web::test] async fn $test() { super::$test(super::Kind::Listmonk).await; } )*
        }
        mod buttondown {
            $( #[actix_web::test] async fn $test() { super::$test(super::Kind::Buttondown).await; } )*
        }
        mod mailchimp {
            $( #[actix_web::test] async fn $test() { super::$test(super::Kind::Mailchimp).await; } )*
        }
        mod brevo {
            $( #[actix_web::test] async fn $test() { super::$test(super::Kind::Brevo).await; } )*
        }
    };
}

per_kind!(
    a_confirmed_subscriber_is_handed_on_as_confirmed_with_the_tags_and_leaves_the_queue,
    an_address_the_sender_already_holds_even_unsubscribed_there_is_success_and_ends_subscribed,
    a_subscriber_who_leaves_is_unsubscribed_at_the_sender_and_never_deleted,
    a_429_waits_as_long_as_the_sender_asks_and_then_delivers,
    an_outage_delivers_nothing_then_each_subscribers_events_once_and_in_order,
    a_refusal_that_will_not_change_is_dropped_at_once_with_an_alert_naming_neither_address_nor_credential,
    a_wrong_credential_is_retried_not_dropped_and_last_error_names_the_status,
);

// ---------------------------------------------------------------------------------------------
// Each kind

async fn a_confirmed_subscriber_is_handed_on_as_confirmed_with_the_tags_and_leaves_the_queue(kind: Kind) {
    // Arrange
    let api = SenderApi::start(kind);
    let app = app_for(&api, &api.credential(), "").await;
    confirm(&app, JANE).await;
    let rows = queued(&app);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].endpoint.as_str(), rows[0].event_type.as_str()), (NAME, CONFIRMED));
    let event_id = rows[0].event_id.clone();
    assert!(api.requests().is_empty(), "nothing is sent before the worker delivers");

    // Act
    let outcomes = deliver(&app).await;

    // Assert: held as confirmed, once
    assert_eq!(outcomes, [DeliveryOutcome::Delivered], "{:?}", api.requests());
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed), "{}", api.held(JANE));
    assert_eq!(api.history_of(JANE), [Some(Standing::Subscribed)], "one accepted change");
    if kind.has_tags() {
        let mut tags = api.tags(JANE);
        tags.sort();
        assert_eq!(tags, TAGS, "the configured tags");
    }
    // Assert: the call as the vendor documents it
    let requests = api.requests();
    // (Brevo reads the account's attributes first.)
    let create = requests.iter().find(|r| r.method != "GET").expect("a call that hands jane on");
    let body = create.json();
    let held = api.held(JANE);
    match kind {
        Kind::Listmonk => {
            assert_eq!((create.method.as_str(), create.path().as_str()), ("POST", "/api/subscribers"));
            assert_eq!(body["preconfirm_subscriptions"], true, "{body}");
            assert_eq!(body["lists"], json!([3]), "{body}");
            assert_eq!(held["lists"]["3"], "confirmed", "{held}");
            assert_eq!(held["attribs"]["confirmed_at"], "2026-01-01T00:01:30Z", "the consent evidence: {held}");
            assert_eq!(held["attribs"]["confirm_method"], "button", "{held}");
            assert_eq!(held["attribs"]["language"], "en", "the subscriber's language: {held}");
        }
        Kind::Buttondown => {
            assert_eq!((create.method.as_str(), create.path().as_str()), ("POST", "/v1/subscribers"));
            assert_eq!(body["type"], "regular", "Buttondown's own opt-in skipped: {body}");
            assert_eq!(create.header("x-buttondown-collision-behavior"), Some("add"));
            assert_eq!(create.header("x-idempotency-key"), Some(event_id.as_str()), "the event's id");
            assert!(create.header("x-api-version").is_some_and(|v| v.len() == 10), "a pinned version: {create:?}");
            assert_eq!(held["metadata"]["confirmed_at"], "2026-01-01T00:01:30Z", "{held}");
            assert_eq!(held["metadata"]["language"], "en", "the subscriber's language: {held}");
        }
        Kind::Mailchimp => {
            let member = format!("/3.0/lists/a1b2c3d4e5/members/{}", subscriber_hash(JANE));
            assert_eq!((create.method.as_str(), create.path()), ("PUT", member.clone()));
            assert_eq!((&body["status"], &body["status_if_new"]), (&json!("subscribed"), &json!("subscribed")));
            assert_eq!(held["timestamp_signup"], "2026-01-01 00:00:00", "{held}");
            assert_eq!(held["timestamp_opt"], "2026-01-01 00:01:30", "when it confirmed at signupd: {held}");
            assert_eq!(body["language"], "en", "the subscriber's language, in Mailchimp's field: {body}");
            assert_eq!((requests[1].method.as_str(), requests[1].path()), ("POST", format!("{member}/tags")));
        }
        Kind::Brevo => {
            assert_eq!((requests[0].method.as_str(), requests[0].path().as_str()), ("GET", "/v3/contacts/attributes"));
            assert_eq!((create.method.as_str(), create.path().as_str()), ("POST", "/v3/contacts"));
            assert_eq!((&body["listIds"], &body["updateEnabled"]), (&json!([7]), &json!(true)), "{body}");
            assert!(body.get("attributes").is_none(), "the account has no LANGUAGE attribute: {body}");
        }
    }
    assert!(requests.iter().all(|r| (200..300).contains(&r.status)), "{requests:?}");
    // Assert: the queue, and with it this copy of the address, is gone
    assert_queue_empty(&app, kind.as_str());
    assert_eq!(status_of(&app, JANE).as_deref(), Some("confirmed"), "the subscriber itself stays");
    assert_eq!(deliver(&app).await, [DeliveryOutcome::EmptyQueue]);
    assert_never_deleted(&api);
}

async fn an_address_the_sender_already_holds_even_unsubscribed_there_is_success_and_ends_subscribed(kind: Kind) {
    // Arrange: the sender holds ann subscribed and bob unsubscribed
    let api = SenderApi::start(kind);
    api.seed(ANN, Standing::Subscribed);
    api.seed(BOB, Standing::Unsubscribed);
    let app = app_for(&api, &api.credential(), "").await;
    confirm(&app, ANN).await;
    confirm(&app, BOB).await;

    // Act
    let outcomes = deliver(&app).await;

    // Assert: both done, neither an error
    assert_eq!(outcomes, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered], "{:?}", api.requests());
    assert_eq!(api.standing(ANN), Some(Standing::Subscribed), "{}", api.held(ANN));
    // Mailchimp's rule: someone who unsubscribed there confirms with Mailchimp itself.
    let bob = if kind == Kind::Mailchimp { Standing::Pending } else { Standing::Subscribed };
    assert_eq!(api.standing(BOB), Some(bob), "{}", api.held(BOB));
    let held: Vec<String> = api.addresses().into_keys().collect();
    assert_eq!(held, [ANN, BOB], "no second record of either");
    let requests = api.requests();
    match kind {
        // No upsert: 409, then looked up and added to the list as confirmed.
        Kind::Listmonk => {
            assert_eq!(requests.iter().filter(|r| r.status == 409).count(), 2, "{requests:?}");
            let adds: Vec<Value> =
                requests.iter().filter(|r| r.path() == "/api/subscribers/lists").map(|r| r.json()).collect();
            assert!(adds.iter().all(|add| add["action"] == "add" && add["status"] == "confirmed"), "{adds:?}");
        }
        Kind::Mailchimp => {
            let refused: Vec<_> = requests.iter().filter(|r| r.status == 400).collect();
            assert_eq!(refused.len(), 1, "one Member In Compliance State, for bob: {requests:?}");
            let pending = requests.iter().rfind(|r| r.method == "PUT").unwrap().json();
            assert_eq!(pending["status"], "pending", "{pending}");
        }
        Kind::Buttondown | Kind::Brevo => {
            assert!(requests.iter().all(|r| (200..300).contains(&r.status)), "merged, not refused: {requests:?}");
        }
    }
    if kind == Kind::Brevo {
        assert_eq!(api.held(BOB)["listIds"], json!([7, 9]), "the contact's other list stays");
    }
    assert_queue_empty(&app, kind.as_str());
    assert_never_deleted(&api);
}

async fn a_subscriber_who_leaves_is_unsubscribed_at_the_sender_and_never_deleted(kind: Kind) {
    // Arrange: jane handed on as confirmed
    let api = SenderApi::start(kind);
    let app = app_for(&api, &api.credential(), "").await;
    let (token, _) = signed_up_and_mailed(&app, JANE).await;
    assert_eq!(location(&post_token(&app, "/api/confirm", &token).await), "/confirmed?list=news");
    let welcome = send_mail(&app).await;
    assert_eq!(deliver(&app).await, [DeliveryOutcome::Delivered]);
    let sent_before = api.requests().len();

    // Act: RFC 8058 one-click on the welcome mail's List-Unsubscribe
    let response = one_click(&app, &welcome[0].list_unsubscribe()).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(queued_events(&app), [(UNSUBSCRIBED.to_owned(), JANE.to_owned())]);
    let outcomes = deliver(&app).await;

    // Assert: unsubscribed there, still held
    assert_eq!(outcomes, [DeliveryOutcome::Delivered], "{:?}", api.requests());
    assert_eq!(api.standing(JANE), Some(Standing::Unsubscribed), "{}", api.held(JANE));
    assert_eq!(api.history_of(JANE), [Some(Standing::Subscribed), Some(Standing::Unsubscribed)]);
    let requests = api.requests();
    let change = requests.last().unwrap();
    let body = change.json();
    match kind {
        Kind::Listmonk => {
            assert_eq!((change.method.as_str(), change.path().as_str()), ("PUT", "/api/subscribers/lists"));
            assert_eq!((&body["action"], &body["target_list_ids"]), (&json!("unsubscribe"), &json!([3])), "{body}");
            let lookup = &requests[sent_before];
            assert_eq!((lookup.method.as_str(), lookup.path().as_str()), ("GET", "/api/subscribers"), "a lookup first");
        }
        Kind::Buttondown => {
            assert_eq!((change.method.as_str(), change.path()), ("PATCH", format!("/v1/subscribers/{JANE}")));
            assert_eq!(body["type"], "unsubscribed", "{body}");
        }
        Kind::Mailchimp => {
            let member = format!("/3.0/lists/a1b2c3d4e5/members/{}", subscriber_hash(JANE));
            assert_eq!((change.method.as_str(), change.path()), ("PATCH", member));
            assert_eq!(body["status"], "unsubscribed", "{body}");
        }
        Kind::Brevo => {
            assert_eq!((change.method.as_str(), change.path()), ("PUT", format!("/v3/contacts/{JANE}")));
            assert_eq!(body["unlinkListIds"], json!([7]), "{body}");
        }
    }
    assert_never_deleted(&api);
    assert_queue_empty(&app, kind.as_str());
    assert_address_gone(&app, JANE);
}

async fn a_429_waits_as_long_as_the_sender_asks_and_then_delivers(kind: Kind) {
    // Arrange
    let api = SenderApi::start(kind);
    let app = app_for(&api, &api.credential(), "").await;
    confirm(&app, JANE).await;
    api.answer_next(1, &api.rate_limited(120));
    let now = app.clock.now();

    // Act
    let outcomes = deliver(&app).await;

    // Assert: not delivered, waits what the header says
    assert!(retrying(&outcomes[0]).contains("HTTP 429"), "{outcomes:?}");
    assert_eq!(api.standing(JANE), None);
    let row = queued(&app).pop().unwrap();
    assert_eq!(row.attempts, 1);
    assert_lease_given_back(&app, NAME);
    let wait = row.next_attempt_at - now;
    if api.rate_limit_names_the_wait() {
        assert_eq!(wait, 120, "Retry-After / x-sib-ratelimit-reset");
    } else {
        // Mailchimp's 429 names no wait: the mail backoff, 30 s ± 20 %.
        assert!((24..=36).contains(&wait), "{wait}");
    }

    // Act: a second before the time
    app.clock.advance(Duration::from_secs(u64::try_from(wait - 1).unwrap()));
    let early = deliver(&app).await;
    app.clock.advance(Duration::from_secs(1));
    let due = deliver(&app).await;

    // Assert
    assert_eq!(early, [DeliveryOutcome::EmptyQueue], "not before the sender's time");
    assert_eq!(due, [DeliveryOutcome::Delivered], "{:?}", api.requests());
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed));
    assert_eq!(api.requests()[0].status, 429);
    assert_queue_empty(&app, kind.as_str());
}

async fn an_outage_delivers_nothing_then_each_subscribers_events_once_and_in_order(kind: Kind) {
    // Arrange: three confirmed, bob leaves through the manage page, all before any delivery
    let api = SenderApi::start(kind);
    let app = app_for(&api, &api.credential(), "").await;
    confirm(&app, ANN).await;
    let bob_removal = confirm(&app, BOB).await;
    confirm(&app, CAT).await;
    assert_eq!(location(&post_token(&app, "/api/manage", &bob_removal).await), "/removed?list=news");
    let events = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(event, email)| ((*event).to_owned(), (*email).to_owned())).collect()
    };
    assert_eq!(
        queued_events(&app),
        events(&[(CONFIRMED, ANN), (CONFIRMED, BOB), (CONFIRMED, CAT), (UNSUBSCRIBED, BOB)])
    );

    for (round, down) in [(1, "HTTP 503"), (2, "refused")] {
        // Act: the sender is down, answering 503, then not even listening
        if round == 1 {
            api.go_down();
        } else {
            api.close_port();
        }
        let outcomes = deliver(&app).await;

        // Assert: nothing delivered; bob's unsubscribed waits behind his confirmed
        assert_eq!(outcomes.len(), 3, "round {round}: one per subscriber: {outcomes:?}");
        assert!(outcomes.iter().all(|o| retrying(o).contains(down)), "round {round}: {outcomes:?}");
        let attempts: Vec<i64> = queued(&app).iter().map(|row| row.attempts).collect();
        assert_eq!(attempts, [round, round, round, 0], "round {round}");
        assert!(queued(&app).iter().take(3).all(|row| row.last_error.as_deref().is_some_and(|e| e.contains(down))));
        assert!(api.effects().is_empty(), "round {round}: nothing reached the sender");
        app.clock.advance(Duration::from_secs(80 * u64::try_from(round).unwrap()));
    }

    // Act: the sender is back
    api.come_back();
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        outcomes.extend(deliver(&app).await);
    }

    // Assert: everything once, bob's confirmed before his unsubscribed
    assert_eq!(
        outcomes,
        [
            DeliveryOutcome::Delivered,
            DeliveryOutcome::Delivered,
            DeliveryOutcome::Delivered,
            DeliveryOutcome::Delivered,
            DeliveryOutcome::EmptyQueue
        ],
        "{:?}",
        api.requests()
    );
    assert_eq!(api.history_of(ANN), [Some(Standing::Subscribed)]);
    assert_eq!(api.history_of(BOB), [Some(Standing::Subscribed), Some(Standing::Unsubscribed)]);
    assert_eq!(api.history_of(CAT), [Some(Standing::Subscribed)]);
    let ended: BTreeMap<String, Option<Standing>> = api.addresses();
    let expected: BTreeMap<String, Option<Standing>> = [
        (ANN.to_owned(), Some(Standing::Subscribed)),
        (BOB.to_owned(), Some(Standing::Unsubscribed)),
        (CAT.to_owned(), Some(Standing::Subscribed)),
    ]
    .into();
    assert_eq!(ended, expected);
    assert!(api.requests().iter().filter(|r| r.status == 503).count() == 3, "{:?}", api.requests());
    assert_queue_empty(&app, kind.as_str());
    assert_address_gone(&app, BOB);
    assert_never_deleted(&api);
}

async fn a_refusal_that_will_not_change_is_dropped_at_once_with_an_alert_naming_neither_address_nor_credential(
    kind: Kind,
) {
    // Arrange: the sender's validation refuses jane
    let alert = Receiver::start(Reply::Status(204));
    let api = SenderApi::start(kind);
    api.refuse(JANE);
    let app = app_for(&api, &api.credential(), &format!("alert_webhook = \"{}\"\n", alert.url("/alert"))).await;
    confirm(&app, JANE).await;

    // Act
    let outcomes = deliver(&app).await;

    // Assert: dropped on the first answer
    let [DeliveryOutcome::Dropped { detail, refused, hint }] = outcomes.as_slice() else {
        panic!("{outcomes:?} after {:?}", api.requests());
    };
    assert!(detail.starts_with("HTTP 400"), "{detail}");
    assert!(refused, "refused for good, not out of time");
    let tries = api.requests().into_iter().filter(|r| r.method != "GET").count();
    assert_eq!(tries, 1, "one try (Brevo reads its attributes first): {:?}", api.requests());
    assert_eq!(api.standing(JANE), None);
    assert_queue_empty(&app, kind.as_str());
    assert_eq!(deliver(&app).await, [DeliveryOutcome::EmptyQueue]);
    // Assert: the alert
    let requests = alert.requests();
    assert_eq!(requests.len(), 1, "one alert: {requests:?}");
    let body = requests[0].text();
    assert_eq!(
        requests[0].json(),
        json!({"event": "destination_dropped", "destination": NAME, "event_type": CONFIRMED,
               "detail": detail, "refused": true, "hint": hint}),
    );
    assert!(!body.contains('@') && !body.contains("jane"), "no address in the alert: {body}");
    assert!(!body.contains(&api.credential()), "no credential in the alert: {body}");
}

async fn a_wrong_credential_is_retried_not_dropped_and_last_error_names_the_status(kind: Kind) {
    // Arrange: signupd holds a key the sender refuses
    let alert = Receiver::start(Reply::Status(204));
    let api = SenderApi::start(kind);
    let wrong = api.wrong_credential();
    let app = app_for(&api, &wrong, &format!("alert_webhook = \"{}\"\n", alert.url("/alert"))).await;
    confirm(&app, JANE).await;
    let status = format!("HTTP {}", kind.wrong_credential_status());

    for attempt in 1..=2 {
        // Act
        let outcomes = deliver(&app).await;

        // Assert: kept for the operator to fix the key
        assert!(retrying(&outcomes[0]).contains(&status), "attempt {attempt}: {outcomes:?}");
        let row = queued(&app).pop().unwrap();
        assert_eq!(row.attempts, attempt);
        assert_lease_given_back(&app, NAME);
        let last_error = row.last_error.unwrap_or_default();
        assert!(last_error.starts_with(&status), "{last_error:?}");
        assert!(!last_error.contains(&wrong) && !last_error.contains('@'), "{last_error:?}");
        assert!(row.next_attempt_at > app.clock.now(), "a backoff");
        assert_eq!(deliver(&app).await, [DeliveryOutcome::EmptyQueue], "waits for its backoff");
        app.clock.advance(Duration::from_secs(80 * u64::try_from(attempt).unwrap()));
    }
    assert!(alert.requests().is_empty(), "not given up: {:?}", alert.requests());
    assert!(api.requests().iter().all(|r| r.status == kind.wrong_credential_status()), "{:?}", api.requests());

    // Act: the operator fixes the key at the sender
    api.accept_only(&wrong);
    let outcomes = deliver(&app).await;

    // Assert
    assert_eq!(outcomes, [DeliveryOutcome::Delivered]);
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed));
    assert_queue_empty(&app, kind.as_str());
}

// ---------------------------------------------------------------------------------------------
// One kind's rules

#[actix_web::test]
async fn one_round_at_the_default_timeout_hands_on_every_due_event_of_the_batch() {
    // Regression: at the default webhook_timeout (10 s, three calls an event for listmonk) the
    // batch's time budget once let a round begin only its first event and release the rest, so a
    // destination took one event per round (133 a second against a sender that answers at once).
    // Arrange
    let api = SenderApi::start(Kind::Listmonk);
    let dir = tempfile::tempdir().unwrap();
    let path = write_credential(dir.path(), NAME, &api.credential());
    let app = spawn_app_in(dir, &format!("{RAISED_LIMITS}{}", destination_toml(NAME, &api, &path))).await;
    for email in [ANN, BOB, CAT] {
        confirm(&app, email).await;
    }

    // Act
    let outcomes = deliver(&app).await;

    // Assert
    assert_eq!(outcomes, vec![DeliveryOutcome::Delivered; 3], "{:?}", api.requests());
    assert_queue_empty(&app, "one round");
    for email in [ANN, BOB, CAT] {
        assert_eq!(api.standing(email), Some(Standing::Subscribed), "{email}");
    }
}

#[actix_web::test]
async fn buttondowns_daily_cap_answered_400_rate_limited_is_retried_with_the_backoff_not_dropped() {
    // Arrange: Buttondown answers its daily cap on new subscribers with a 400, not a 429
    let alert = Receiver::start(Reply::Status(204));
    let api = SenderApi::start(Kind::Buttondown);
    let app = app_for(&api, &api.credential(), &format!("alert_webhook = \"{}\"\n", alert.url("/alert"))).await;
    confirm(&app, JANE).await;
    let capped =
        json!({"code": "rate_limited", "detail": format!("{JANE}: too many subscribers today; use /v1/imports")});
    api.answer_next(1, &Answer::json(400, &capped));
    let now = app.clock.now();

    // Act
    let outcomes = deliver(&app).await;

    // Assert: kept, after the mail backoff (30 s ± 20 %), with the code word and not the message
    assert_eq!(retrying(&outcomes[0]), "HTTP 400 (rate_limited)", "{outcomes:?}");
    let row = queued(&app).pop().unwrap();
    assert!((24..=36).contains(&(row.next_attempt_at - now)), "{row:?}");
    assert_eq!(row.last_error.as_deref(), Some("HTTP 400 (rate_limited)"));
    assert!(alert.requests().is_empty(), "not given up");

    // Act: the next day's quota
    app.clock.advance(Duration::from_secs(40));
    let outcomes = deliver(&app).await;

    // Assert
    assert_eq!(outcomes, [DeliveryOutcome::Delivered]);
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed));
}

/// The attribute reads among the calls a Brevo got.
fn attribute_reads(api: &SenderApi) -> usize {
    api.requests().iter().filter(|r| r.method == "GET" && r.path() == "/v3/contacts/attributes").count()
}

/// The bodies of the contact creations a Brevo got, in order.
fn brevo_creates(api: &SenderApi) -> Vec<Value> {
    api.requests().iter().filter(|r| r.method == "POST" && r.path() == "/v3/contacts").map(Recorded::json).collect()
}

#[actix_web::test]
async fn brevo_gets_the_language_only_when_the_account_has_the_attribute_and_reads_the_account_once() {
    for has_it in [true, false] {
        // Arrange: an account that refuses an attribute it does not have, so sending one
        // without it would fail the hand-off
        let api = SenderApi::start(Kind::Brevo);
        api.brevo_refuses_unknown_attributes();
        if has_it {
            api.brevo_attribute("LANGUAGE", Some(("normal", "text")));
        }
        let app = app_for(&api, &api.credential(), "").await;
        confirm(&app, JANE).await;
        confirm(&app, ANN).await;

        // Act: two hand-offs, in two batches
        let first = deliver(&app).await;
        confirm(&app, BOB).await;
        let second = deliver(&app).await;

        // Assert
        assert_eq!(first, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered], "{has_it}: {:?}", api.requests());
        assert_eq!(second, [DeliveryOutcome::Delivered], "{has_it}: {:?}", api.requests());
        assert_eq!(attribute_reads(&api), 1, "{has_it}: the account's answer is remembered: {:?}", api.requests());
        let creates = brevo_creates(&api);
        assert_eq!(creates.len(), 3, "one call per subscriber: {:?}", api.requests());
        for body in &creates {
            if has_it {
                assert_eq!(body["attributes"], json!({"LANGUAGE": "en"}), "the subscriber's language: {body}");
            } else {
                assert!(body.get("attributes").is_none(), "no attributes key without the attribute: {body}");
            }
        }
        let held = api.held(JANE);
        let expected = if has_it { json!({"LANGUAGE": "en"}) } else { json!({}) };
        assert_eq!(held["attributes"], expected, "{has_it}: {held}");
        assert_queue_empty(&app, "brevo");
    }
}

#[actix_web::test]
async fn brevo_forgets_the_attribute_when_a_refusal_names_attributes_and_hands_the_subscriber_on_without_it() {
    // Arrange: the account has LANGUAGE when jane is handed on
    let alert = Receiver::start(Reply::Status(204));
    let api = SenderApi::start(Kind::Brevo);
    api.brevo_refuses_unknown_attributes();
    api.brevo_attribute("LANGUAGE", Some(("normal", "text")));
    let app = app_for(&api, &api.credential(), &format!("alert_webhook = \"{}\"\n", alert.url("/alert"))).await;
    confirm(&app, JANE).await;
    assert_eq!(deliver(&app).await, [DeliveryOutcome::Delivered]);
    assert_eq!(api.held(JANE)["attributes"], json!({"LANGUAGE": "en"}));

    // Act: the operator deletes the attribute within the hour; ann, then bob, confirm
    api.brevo_attribute("LANGUAGE", None);
    confirm(&app, ANN).await;
    let ann = deliver(&app).await;
    confirm(&app, BOB).await;
    let bob = deliver(&app).await;

    // Assert: ann refused with the remembered attribute, sent again at once without it
    assert_eq!(ann, [DeliveryOutcome::Delivered], "{:?}", api.requests());
    assert_eq!(bob, [DeliveryOutcome::Delivered], "{:?}", api.requests());
    let creates = brevo_creates(&api);
    assert_eq!(creates.len(), 4, "jane, ann twice, bob: {:?}", api.requests());
    assert_eq!(creates[1]["attributes"], json!({"LANGUAGE": "en"}), "{}", creates[1]);
    assert!(creates[2].get("attributes").is_none(), "{}", creates[2]);
    let refused: Vec<u16> = api.requests().iter().map(|r| r.status).filter(|status| *status == 400).collect();
    assert_eq!(refused, [400], "{:?}", api.requests());
    // Assert: forgotten, so bob's hand-off read the account again, and sent no attribute
    assert_eq!(attribute_reads(&api), 2, "{:?}", api.requests());
    assert!(creates[3].get("attributes").is_none(), "{}", creates[3]);
    assert_eq!(api.standing(ANN), Some(Standing::Subscribed));
    assert_eq!(api.standing(BOB), Some(Standing::Subscribed));
    assert!(alert.requests().is_empty(), "nothing given up: {:?}", alert.requests());
    assert_queue_empty(&app, "brevo");
}

#[actix_web::test]
async fn brevo_hands_the_subscriber_on_without_the_language_when_the_attribute_read_is_refused_for_good() {
    // Arrange: an account with the attribute, whose answer to the attribute read is a 400
    let api = SenderApi::start(Kind::Brevo);
    api.brevo_attribute("LANGUAGE", Some(("normal", "text")));
    let app = app_for(&api, &api.credential(), "").await;
    confirm(&app, JANE).await;
    api.answer_next(1, &Answer::json(400, &json!({"code": "invalid_parameter", "message": "Invalid request"})));

    // Act
    let jane = deliver(&app).await;
    confirm(&app, ANN).await;
    let ann = deliver(&app).await;

    // Assert: both handed on at once, without the language; the refusal remembered (one read)
    assert_eq!(
        (jane.as_slice(), ann.as_slice()),
        (&[DeliveryOutcome::Delivered][..], &[DeliveryOutcome::Delivered][..])
    );
    assert_eq!(attribute_reads(&api), 1, "{:?}", api.requests());
    let creates = brevo_creates(&api);
    assert_eq!(creates.len(), 2, "{:?}", api.requests());
    assert!(creates.iter().all(|body| body.get("attributes").is_none()), "{creates:?}");
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed));
}

#[test]
fn send_test_destination_for_brevo_says_whether_the_account_keeps_languages_and_how_to_add_the_attribute() {
    // (An account without the attribute: `probe_says`, in the test of every kind.)
    for (described, words) in [
        (Some(("normal", "text")), "; each subscriber's language goes to the contact attribute LANGUAGE, in "),
        (
            Some(("category", "category")),
            "; languages are not handed on: the contact attribute LANGUAGE is a category attribute of type category, \
             not a normal text one (delete it and create it as a text attribute under Contacts → Settings → Contact \
             attributes, or with POST /v3/contacts/attributes/normal/LANGUAGE and the body {\"type\":\"text\"}), in ",
        ),
    ] {
        // Arrange
        let api = SenderApi::start(Kind::Brevo);
        api.brevo_attribute("LANGUAGE", described);
        let dir = tempfile::tempdir().unwrap();
        let credential = write_credential(dir.path(), NAME, &api.credential());
        let config = write_config(dir.path(), &destination_toml(NAME, &api, &credential));

        // Act
        let output = signupd().arg("send-test-destination").arg("--config").arg(&config).output().unwrap();

        // Assert
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        let said = format!("{NAME} (brevo): list 7 \"Newsletter\", 0 contacts{words}");
        assert!(stdout.starts_with(&said), "{described:?}: {stdout}");
    }
}

#[actix_web::test]
async fn an_event_a_sender_never_took_within_webhook_max_age_is_dropped_as_out_of_time_with_the_alert() {
    // Arrange: Brevo down from the start
    let alert = Receiver::start(Reply::Status(204));
    let api = SenderApi::start(Kind::Brevo);
    api.go_down();
    let mail = format!("webhook_max_age = \"1m\"\nalert_webhook = \"{}\"\n", alert.url("/alert"));
    let app = app_for(&api, &api.credential(), &mail).await;
    confirm(&app, JANE).await;
    let first = deliver(&app).await;
    assert!(retrying(&first[0]).contains("HTTP 503"), "within the max age: {first:?}");

    // Act: past the max age
    app.clock.advance(Duration::from_secs(70));
    let outcomes = deliver(&app).await;

    // Assert
    let [DeliveryOutcome::Dropped { detail, refused, .. }] = outcomes.as_slice() else { panic!("{outcomes:?}") };
    assert_eq!((detail.as_str(), *refused), ("HTTP 503", false), "out of time, not refused");
    assert_queue_empty(&app, "brevo");
    let requests = alert.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let body = requests[0].text();
    assert_eq!(requests[0].json()["refused"], false, "{body}");
    assert_eq!(requests[0].json()["event"], "destination_dropped", "{body}");
    assert!(!body.contains('@') && !body.contains(&api.credential()), "{body}");
}

// ---------------------------------------------------------------------------------------------
// The real binary

/// Signs each address up through `serve`, waits for its confirmation mail and confirms it.
async fn sign_up_and_confirm(server: &process::Served, dir: &Path, emails: &[String]) {
    let client = process::client();
    for email in emails {
        let signup = client
            .post(server.url("/api/signup"))
            .form(&[("email", email.as_str()), ("consent", "yes"), ("list", "news")])
            .send()
            .await
            .unwrap();
        assert_eq!(signup.status().as_u16(), 303, "signup of {email}");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let tokens = loop {
        let mails = process::tokens_by_recipient(&dir.join("data/mail"));
        let tokens: Vec<String> =
            emails.iter().filter_map(|email| mails.get(email).and_then(|tokens| tokens.confirm.clone())).collect();
        if tokens.len() == emails.len() {
            break tokens;
        }
        assert!(Instant::now() < deadline, "confirmation mails written: {} of {}", tokens.len(), emails.len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let confirms = tokens.iter().map(|token| {
        let client = client.clone();
        let url = server.url("/api/confirm");
        async move { client.post(url).form(&[("token", token.as_str())]).send().await.unwrap().status().as_u16() }
    });
    let statuses = futures_util::future::join_all(confirms).await;
    assert!(statuses.iter().all(|status| *status == 303), "{statuses:?}");
}

/// kill -9 while the worker is in the middle of a batch: the events it had claimed stay in the
/// queue under their sink's lease, the restarted `serve` sends them again once the lease ends,
/// and the sender takes each again as a duplicate. Each kind's duplicate path differs: listmonk
/// has no upsert, so an event sent twice takes the 409 path (look up, add to the list), and each
/// event may take up to three calls, so a kill between them is likelier than with one call;
/// Buttondown answers a repeat with its collision, Mailchimp and Brevo upsert.
async fn kill_9_while_calls_are_in_flight_loses_no_subscriber_and_duplicates_end_as_one(kind: Kind) {
    // Arrange: a sender that takes 150 ms per answer (a batch of 20 takes seconds)
    let api = SenderApi::start(kind);
    api.answer_slowly(Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let credential = write_credential(dir.path(), NAME, &api.credential());
    let extra = format!("retry_base = \"1s\"\nwebhook_timeout = \"1s\"\n{}", destination_toml(NAME, &api, &credential));
    let config = process::config(dir.path(), 1000, &extra);
    let database = dir.path().join("data/signupd.sqlite3");
    let emails: Vec<String> = (0..20).map(|i| format!("reader{i}@example.com")).collect();
    let mut server = process::serve(&config);
    sign_up_and_confirm(&server, dir.path(), &emails).await;

    // Act: kill -9 once a few have reached the sender and the rest are still queued
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reached = api.effects().len();
        if reached >= 4 {
            server.kill_9();
            break;
        }
        assert!(Instant::now() < deadline, "{kind:?} never took 4: {:?}", api.requests());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let left = queued_in(&read_only(&database));
    let held_at_kill = api.addresses();

    // Assert: none lost: each either reached the sender or is still queued
    assert!(!left.is_empty(), "killed before the queue drained");
    for email in &emails {
        assert!(
            held_at_kill.contains_key(email) || left.iter().any(|row| row.email == *email),
            "{email} neither reached {kind:?} nor is queued"
        );
    }
    let lease_ends = sink_lease_in(&read_only(&database), NAME).expect("the killed worker held the lease");
    // The lease is all a kill -9 leaves behind: it ends within 63 s of the claim (30 s of work on
    // the batch, one event's three calls at the 1 s timeout, 30 s for the settling command).
    assert!(lease_ends > unix_now(), "held at the kill");
    assert!(lease_ends <= unix_now() + 63, "the lease of a batch is bounded: {left:?}");

    // Act: restart on the same data directory and wait for the queue to drain
    let server = process::serve(&config);
    let deadline = Instant::now() + Duration::from_secs(u64::try_from(lease_ends - unix_now()).unwrap_or(0) + 60);
    loop {
        let left = queued_in(&read_only(&database));
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "not delivered after the restart: {left:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.stop().await;

    // Assert: every address once at the sender, confirmed on the target; duplicates only as repeats
    let held = api.addresses();
    let expected: BTreeMap<String, Option<Standing>> =
        emails.iter().map(|email| (email.clone(), Some(Standing::Subscribed))).collect();
    assert_eq!(held, expected, "{kind:?}: exactly the 20, each confirmed on the target");
    let effects = api.effects();
    let duplicates = effects.len() - emails.len();
    for email in &emails {
        let history = api.history_of(email);
        assert!(
            !history.is_empty() && history.iter().all(|s| *s == Some(Standing::Subscribed)),
            "{email}: {history:?}"
        );
    }
    // At least once: only an event the kill cut off is sent again, so only an address the
    // sender already held then is taken twice.
    let twice: Vec<&String> = emails.iter().filter(|email| api.history_of(email).len() > 1).collect();
    assert!(
        twice.iter().all(|email| held_at_kill.contains_key(*email)),
        "{duplicates} duplicates ({twice:?}), {} events queued at the kill, held then: {held_at_kill:?}",
        left.len()
    );
    assert!(api.requests().iter().all(|r| r.method != "DELETE"));
}

/// Each kind's `kill -9` test, with a sender and a server of its own; they wait for the
/// killed worker's lease (about a minute) side by side.
mod kill_9 {
    use super::{Kind, kill_9_while_calls_are_in_flight_loses_no_subscriber_and_duplicates_end_as_one as test};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn listmonk() {
        test(Kind::Listmonk).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn buttondown() {
        test(Kind::Buttondown).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mailchimp() {
        test(Kind::Mailchimp).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn brevo() {
        test(Kind::Brevo).await;
    }
}

/// What `send-test-destination` says on success, per kind.
fn probe_says(kind: Kind) -> &'static str {
    match kind {
        Kind::Listmonk => "list 3 \"Newsletter\" (double opt-in, 1 subscribers)",
        Kind::Buttondown => "the newsletter has 1 subscribers",
        Kind::Mailchimp => "audience a1b2c3d4e5 \"Newsletter\" (double opt-in, 1 members)",
        Kind::Brevo => BREVO_WITHOUT_LANGUAGE,
    }
}

/// What `send-test-destination` says of a Brevo account without the LANGUAGE attribute (a new
/// account's): that languages are not handed on, and how to create it.
const BREVO_WITHOUT_LANGUAGE: &str = "list 7 \"Newsletter\", 1 contacts; languages are not handed on: the account \
     has no contact attribute LANGUAGE (create it as a text attribute under Contacts → Settings → Contact attributes, \
     or with POST /v3/contacts/attributes/normal/LANGUAGE and the body {\"type\":\"text\"})";

/// The read-only calls each kind's probe makes, in order.
fn probe_paths(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Listmonk => &["/api/lists/3"],
        Kind::Buttondown => &["/v1/subscribers"],
        Kind::Mailchimp => &["/3.0/lists/a1b2c3d4e5"],
        Kind::Brevo => &["/v3/contacts/lists/7", "/v3/contacts/attributes"],
    }
}

#[test]
fn send_test_destination_prints_what_the_sender_said_or_the_refused_credential_with_its_hint_and_exit_1() {
    for kind in Kind::ALL {
        // Arrange
        let api = SenderApi::start(kind);
        api.seed("someone@example.com", Standing::Subscribed);
        let dir = tempfile::tempdir().unwrap();
        let credential = write_credential(dir.path(), NAME, &api.credential());
        let config = write_config(dir.path(), &destination_toml(NAME, &api, &credential));

        // Act
        let good = signupd().arg("send-test-destination").arg("--config").arg(&config).output().unwrap();
        let wrong = api.wrong_credential();
        write_credential(dir.path(), NAME, &wrong);
        let refused = signupd().arg("send-test-destination").arg("--config").arg(&config).output().unwrap();

        // Assert: the sender's answer
        let stdout = String::from_utf8_lossy(&good.stdout);
        let all = format!("{stdout}{}", String::from_utf8_lossy(&good.stderr));
        assert_eq!(good.status.code(), Some(0), "{kind:?}: {all}");
        let said = format!("{NAME} ({}): {}, in ", kind.as_str(), probe_says(kind));
        assert!(stdout.starts_with(&said) && stdout.trim_end().ends_with(" ms"), "{kind:?}: {stdout}");
        // Assert: the refusal and its hint
        let stdout = String::from_utf8_lossy(&refused.stdout);
        let all_refused = format!("{stdout}{}", String::from_utf8_lossy(&refused.stderr));
        assert_eq!(refused.status.code(), Some(1), "{kind:?}: {all_refused}");
        let failed = format!("{NAME} ({}): failed: HTTP {}", kind.as_str(), kind.wrong_credential_status());
        let hint = format!("(hint: the sender refused the credential: check {}", credential.display());
        assert!(stdout.starts_with(&failed) && stdout.contains(&hint), "{kind:?}: {stdout}");
        // Assert: read-only calls (the refused run stops at the first), and no credential printed
        let requests = api.requests();
        let paths: Vec<String> = requests.iter().map(Recorded::path).collect();
        let expected: Vec<&str> = probe_paths(kind).iter().chain(&probe_paths(kind)[..1]).copied().collect();
        assert_eq!(paths, expected, "{kind:?}: {requests:?}");
        assert!(requests.iter().all(|r| r.method == "GET"), "{kind:?}: {requests:?}");
        for (case, output) in [("the good one", &all), ("the refused one", &all_refused)] {
            for secret in [api.credential(), wrong.clone()] {
                assert!(!output.contains(&secret), "{kind:?}, {case}: a credential is printed: {output}");
            }
        }
        assert!(!all.contains("someone@"), "{kind:?}: the probe never reads an address: {all}");
    }
}

#[test]
fn send_test_destination_name_picks_one_destination_and_an_unknown_name_is_an_error() {
    // Arrange: a live Brevo and a listmonk where nothing listens
    let live = SenderApi::start(Kind::Brevo);
    let dead = SenderApi::start(Kind::Listmonk);
    dead.close_port();
    let dir = tempfile::tempdir().unwrap();
    let live_credential = write_credential(dir.path(), "live", &live.credential());
    let dead_credential = write_credential(dir.path(), "dead", &dead.credential());
    let tables = format!(
        "{}{}",
        destination_toml("dead", &dead, &dead_credential),
        destination_toml("live", &live, &live_credential)
    );
    let config = write_config(dir.path(), &tables);
    let run = |args: &[&str]| {
        let output = signupd().arg("send-test-destination").args(args).arg("--config").arg(&config).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.code(), stdout, String::from_utf8_lossy(&output.stderr).into_owned())
    };

    // Act
    let (chosen, chosen_out, _) = run(&["--name", "live"]);
    let (all, all_out, _) = run(&[]);
    let (unknown, unknown_out, unknown_err) = run(&["--name", "nope"]);

    // Assert
    assert_eq!(chosen, Some(0), "{chosen_out}");
    assert_eq!(chosen_out.lines().count(), 1, "only the one named: {chosen_out}");
    assert!(chosen_out.starts_with("live (brevo): list 7"), "{chosen_out}");
    assert_eq!(all, Some(1), "the dead one fails the run: {all_out}");
    // The host and port it tried, so a wrong URL and a stopped sender can be told apart.
    let dead_at = dead.base_url().trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let refused = format!("dead (listmonk): failed: connection refused by {dead_at} (hint: is the sender listening");
    assert!(all_out.contains(&refused), "{all_out}");
    assert!(all_out.contains("live (brevo): list 7"), "{all_out}");
    assert_eq!(unknown, Some(1), "{unknown_out}{unknown_err}");
    assert!(unknown_err.contains("--name: no destination named \"nope\""), "{unknown_err}");
    assert!(unknown_out.is_empty(), "{unknown_out}");
    assert_eq!(live.requests().len(), 4, "its list and attributes per run that chose it: {:?}", live.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_logs_neither_credential_nor_address_while_every_kind_refuses_the_key_then_fails_then_takes_it() {
    // Arrange: all four kinds at once, each refusing the key signupd holds until told otherwise
    let apis = Kind::ALL.map(SenderApi::start);
    let dir = tempfile::tempdir().unwrap();
    let mut tables = String::new();
    let mut credentials = Vec::new();
    for api in &apis {
        let name = api.kind.as_str();
        let credential = api.credential();
        tables.push_str(&destination_toml(name, api, &write_credential(dir.path(), name, &credential)));
        api.accept_only(&api.wrong_credential());
        credentials.push(credential);
    }
    let extra = format!("retry_base = \"1s\"\nwebhook_timeout = \"2s\"\n{tables}");
    let config = process::config(dir.path(), 1000, &extra);
    let database = dir.path().join("data/signupd.sqlite3");
    let mut server = process::serve(&config);
    let email = "leaky.reader+log@example.com";

    // Act: confirm one; every sender refuses the key, then fails with a 500 that quotes the
    // address, then takes it
    sign_up_and_confirm(&server, dir.path(), &[email.to_owned()]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    for (api, credential) in apis.iter().zip(&credentials) {
        while !api.requests().iter().any(|r| r.status == api.kind.wrong_credential_status()) {
            assert!(Instant::now() < deadline, "{:?} saw no attempt", api.kind);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let quoting = Answer {
            status: 500,
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"message": format!("internal error while saving {email}"), "code": "internal"}).to_string(),
        };
        api.answer_next(1, &quoting);
        api.accept_only(credential);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !queued_in(&read_only(&database)).is_empty() {
        assert!(Instant::now() < deadline, "not delivered: {:?}", queued_in(&read_only(&database)));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.sigterm();
    let exited = server.exit_within(Duration::from_secs(10)).await;
    let mut log = server.log();
    log.push('\n');
    log.push_str(&server.remaining_stderr().join("\n"));

    // Assert: every kind took it, after a refusal and a 500
    assert_eq!(exited.and_then(|status| status.code()), Some(0));
    for api in &apis {
        assert_eq!(api.standing(email), Some(Standing::Subscribed), "{:?}: {:?}", api.kind, api.requests());
        assert!(api.requests().iter().any(|r| r.status == 500), "{:?}: {:?}", api.kind, api.requests());
    }
    // Assert: the failures were logged, without the credential or the address
    for words in ["HTTP 401", "HTTP 403", "HTTP 500"] {
        assert!(log.contains(words), "the log names {words}:\n{log}");
    }
    for credential in &credentials {
        let token = credential.rsplit(':').next().unwrap();
        assert!(!log.contains(token), "a credential in the log:\n{log}");
    }
    assert!(!log.contains("leaky.reader"), "the address in the log:\n{log}");
}

/// The name and nice value of each thread of process `pid`, from `/proc/PID/task/TID/stat`.
fn threads_nice(pid: u32) -> Vec<(String, i64)> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else { continue };
        threads.push(name_and_nice(&stat));
    }
    threads
}

/// The nice value of process `pid`'s main thread (the one whose id is the process's).
fn main_thread_nice(pid: u32) -> i64 {
    name_and_nice(&std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).unwrap()).1
}

/// A thread's name and nice value, from its `stat` line (`proc(5)`: the name is field 2, in
/// parentheses; the nice value field 19).
fn name_and_nice(stat: &str) -> (String, i64) {
    let (open, close) = (stat.find('(').unwrap(), stat.rfind(')').unwrap());
    let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
    // Fields from 3 on: `state` is the first after the name, so field 19 is at 16.
    (stat[open + 1..close].to_owned(), fields[16].parse().unwrap())
}

/// Starts `serve` at a nice value below 19, so the delivery threads' 19 can be told apart from the
/// others': at the tests' own, or at 0 when the tests themselves run at 19 (as under `nice -n 19`
/// on a shared machine). The nice value is per thread and a child starts at its parent thread's,
/// so the server is spawned from a thread of its own at that value; going below 19 again needs
/// `CAP_SYS_NICE` (root, as in CI), without which the test says so rather than pass unseen.
fn serve_below_nice_19(config: &Path) -> (process::Served, i64) {
    // This thread's: a thread spawned from it starts at it (Linux keeps one nice value a thread).
    let own = i64::from(rustix::process::getpriority_process(None).expect("this thread's nice value"));
    let base = if own < 19 { own } else { 0 };
    let config = config.to_owned();
    let server = std::thread::spawn(move || {
        let thread = rustix::thread::gettid();
        let nice = i32::try_from(base).expect("a nice value is small");
        rustix::process::setpriority_process(Some(thread), nice).unwrap_or_else(|error| {
            panic!("the tests run at nice {own}; starting serve at {base} was refused ({error}): run as root or below nice 19")
        });
        process::serve(&config)
    })
    .join()
    .expect("serve started");
    (server, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hand_on_threads_run_at_nice_19_and_every_other_thread_at_the_process_own_priority() {
    // Arrange: a destination, so the delivery runtime has a thread per core
    let api = SenderApi::start(Kind::Listmonk);
    let dir = tempfile::tempdir().unwrap();
    let credential = write_credential(dir.path(), NAME, &api.credential());
    let config = process::config(dir.path(), 1000, &destination_toml(NAME, &api, &credential));

    // Act: serve below nice 19, and hand one subscriber on (the delivery threads have run then)
    let (server, base) = serve_below_nice_19(&config);
    sign_up_and_confirm(&server, dir.path(), &[ANN.to_owned()]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.standing(ANN).is_none() {
        assert!(Instant::now() < deadline, "not handed on: {:?}", api.requests());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let threads = threads_nice(server.pid());
    let main = main_thread_nice(server.pid());
    server.stop().await;

    // Assert: the delivery runtime's threads at 19, the pages', the writer's and the mail
    // workers' at the one serve started at, which every thread it spawns inherits
    assert!(base < 19, "serve started at nice {base}: nothing to tell apart");
    assert_eq!(main, base, "serve's main thread: {threads:?}");
    let delivering: Vec<_> = threads.iter().filter(|(name, _)| name.starts_with("signupd-deliver")).collect();
    assert!(!delivering.is_empty(), "no delivery thread among {threads:?}");
    assert!(delivering.iter().all(|(_, nice)| *nice == 19), "{threads:?}");
    let others: Vec<_> = threads.iter().filter(|(name, _)| !name.starts_with("signupd-deliver")).collect();
    assert!(others.iter().any(|(name, _)| name.starts_with("signupd-mail")), "{threads:?}");
    assert!(others.iter().all(|(_, nice)| *nice == base), "{threads:?}");
}

// ---------------------------------------------------------------------------------------------
// Backfill: a destination added after its list had subscribers

/// The addresses confirmed before the destination was added.
fn earlier_readers() -> Vec<String> {
    (0..3).map(|i| format!("early{i}@example.com")).collect()
}

/// Lists `news` and `weekly`, for a destination that hands on `news` alone.
const TWO_LISTS: &str = "[[lists]]\nid = \"news\"\n[[lists]]\nid = \"weekly\"\n";

/// Runs `serve` on `dir` without a destination, signs [`earlier_readers`] up and confirms them,
/// and stops it: a list with subscribers, as it was before the destination was configured.
async fn confirmed_without_a_destination(dir: &Path) -> PathBuf {
    let config = process::config(dir, 1000, TWO_LISTS);
    let server = process::serve(&config);
    sign_up_and_confirm(&server, dir, &earlier_readers()).await;
    server.stop().await;
    let database = dir.join("data/signupd.sqlite3");
    assert_eq!(count_sql(&database, "SELECT count(*) FROM subscribers WHERE status = 'confirmed'"), 3);
    assert_eq!(count_sql(&database, "SELECT count(*) FROM webhook_deliveries"), 0, "nothing to hand on yet");
    database
}

fn count_sql(database: &Path, sql: &str) -> i64 {
    process::count(&read_only(database), sql)
}

/// Every table's row count: a run that writes nothing leaves them all as they were.
fn row_counts(database: &Path) -> BTreeMap<String, i64> {
    let conn = read_only(database);
    let tables = process::strings(&conn, "SELECT name FROM sqlite_master WHERE type = 'table'");
    tables
        .into_iter()
        .map(|table| (table.clone(), process::count(&conn, &format!("SELECT count(*) FROM \"{table}\""))))
        .collect()
}

/// `signupd backfill ARGS --config CONFIG`: (exit code, stdout, stderr).
fn backfill(config: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = signupd().arg("backfill").args(args).arg("--config").arg(config).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let read = format!("signupd: configuration {} (from --config)\n", config.display());
    // A usage error (exit 2) is clap's, before any configuration is read.
    let rest = match stderr.strip_prefix(&read) {
        Some(rest) => rest,
        None if output.status.code() == Some(2) => &stderr,
        None => panic!("says which configuration it read: {stderr}"),
    };
    (output.status.code(), stdout, rest.to_owned())
}

/// Waits until the running `serve` has handed on every queued event.
async fn queue_drained(database: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = queued_in(&read_only(database));
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "not delivered: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfill_beside_a_running_serve_hands_a_destination_added_later_every_subscriber_confirmed_before_it() {
    // Arrange: three confirmed before the destination existed; then `serve` with it
    let api = SenderApi::start(Kind::Listmonk);
    let dir = tempfile::tempdir().unwrap();
    let database = confirmed_without_a_destination(dir.path()).await;
    let credential = write_credential(dir.path(), NAME, &api.credential());
    let destination = format!("{}lists = [\"news\"]\n", destination_toml(NAME, &api, &credential));
    let config = process::config(dir.path(), 1000, &format!("retry_base = \"1s\"\n{destination}{TWO_LISTS}"));
    let server = process::serve(&config);

    // Act
    let (code, stdout, stderr) = backfill(&config, &["--destination", NAME]);

    // Assert: counted, queued for the destination alone, audited
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(stdout, "queued 3 confirmed subscribers of news for destination out\n", "{stderr}");
    // (Some may be on their way already: the worker in `serve` takes them at once.)
    let rows = queued_in(&read_only(&database));
    assert!(rows.iter().all(|row| row.endpoint == NAME && row.event_type == CONFIRMED), "{rows:?}");
    assert_eq!(
        count_sql(
            &database,
            "SELECT count(*) FROM audit_log WHERE action = 'backfill' AND count = 3 AND actor = 'cli'"
        ),
        1
    );

    // Assert: the running server's worker hands each on, confirmed
    queue_drained(&database).await;
    let expected: BTreeMap<String, Option<Standing>> =
        earlier_readers().into_iter().map(|email| (email, Some(Standing::Subscribed))).collect();
    assert_eq!(api.addresses(), expected, "{:?}", api.requests());
    let attribs = api.held("early0@example.com");
    assert_eq!(attribs["attribs"]["confirm_method"], "button", "the row's own method: {attribs}");

    // Act: a repeat is harmless
    let (code, again, stderr) = backfill(&config, &["--destination", NAME, "--list", "news"]);
    assert_eq!(
        (code, again.as_str()),
        (Some(0), "queued 3 confirmed subscribers of news for destination out\n"),
        "{stderr}"
    );
    queue_drained(&database).await;
    server.stop().await;

    // Assert: the sender took the repeats as duplicates, each address once and confirmed
    assert_eq!(api.addresses(), expected, "{:?}", api.requests());
    assert_never_deleted(&api);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfill_dry_run_counts_and_writes_nothing_and_each_refusal_names_what_is_configured_and_writes_nothing() {
    // Arrange
    let api = SenderApi::start(Kind::Brevo);
    let dir = tempfile::tempdir().unwrap();
    let database = confirmed_without_a_destination(dir.path()).await;
    let credential = write_credential(dir.path(), NAME, &api.credential());
    let without = process::config(dir.path(), 1000, TWO_LISTS);
    let before = row_counts(&database);

    // Act + Assert: no destination configured at all
    let (code, stdout, stderr) = backfill(&without, &["--destination", NAME]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        "signupd: error: no [[destinations]] entry is configured: add the destination to the configuration (and \
         restart `signupd serve`) first\n"
    );

    // Act + Assert: an unknown destination, a list it does not hand on, the flag forgotten
    let second = SenderApi::start(Kind::Listmonk);
    let second_credential = write_credential(dir.path(), "crm", &second.credential());
    let destination = format!(
        "{}lists = [\"news\"]\n{}",
        destination_toml(NAME, &api, &credential),
        destination_toml("crm", &second, &second_credential)
    );
    let config = process::config(dir.path(), 1000, &format!("{destination}{TWO_LISTS}"));
    for (args, exit, error) in [
        (
            &["--destination", "nope"][..],
            1,
            "signupd: error: --destination: no destination named \"nope\" is configured (configured: out, crm)\n",
        ),
        (
            &["--destination", NAME, "--list", "weekly"][..],
            1,
            "signupd: error: --list: destination out does not hand on list \"weekly\"; its lists: news\n",
        ),
        (
            &["--destination", NAME, "--list", "gone"][..],
            1,
            "signupd: error: --list: destination out does not hand on list \"gone\"; its lists: news\n",
        ),
    ] {
        let (code, stdout, stderr) = backfill(&config, args);
        assert_eq!(code, Some(exit), "{args:?}: {stdout}{stderr}");
        assert_eq!(stderr, error, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    let (code, _, stderr) = backfill(&config, &[]);
    assert_eq!(code, Some(2), "a usage error: {stderr}");
    assert!(stderr.contains("--destination <NAME>"), "{stderr}");
    assert_eq!(row_counts(&database), before, "a refused run writes nothing");

    // Act: a dry run, for one destination and for one that hands on every list
    let (code, stdout, stderr) = backfill(&config, &["--destination", NAME, "--dry-run"]);
    let (every_code, every, every_err) = backfill(&config, &["--destination", "crm", "--dry-run"]);

    // Assert: counted, nothing written (no queued event, no audit entry)
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "would queue 3 confirmed subscribers of news for destination out (dry run: nothing written)\n");
    assert_eq!(every_code, Some(0), "{every_err}");
    assert_eq!(
        every,
        "would queue 3 confirmed subscribers of news for destination crm (dry run: nothing written)\n\
         would queue 0 confirmed subscribers of weekly for destination crm (dry run: nothing written)\n"
    );
    assert_eq!(row_counts(&database), before, "a dry run writes nothing");
    assert!(api.requests().is_empty() && second.requests().is_empty(), "nothing is sent by the command itself");
}

#[actix_web::test]
async fn backfill_skips_a_subscriber_whose_own_event_still_waits_and_a_later_unsubscribe_waits_for_the_backfilled_one()
{
    // Arrange: ann handed on and then lost by the sender's operator; jane's event still queued
    let api = SenderApi::start(Kind::Brevo);
    let app = app_for(&api, &api.credential(), "").await;
    let (token, _) = signed_up_and_mailed(&app, ANN).await;
    assert_eq!(location(&post_token(&app, "/api/confirm", &token).await), "/confirmed?list=news");
    let welcome = send_mail(&app).await;
    assert_eq!(deliver(&app).await, [DeliveryOutcome::Delivered]);
    confirm(&app, JANE).await;
    assert_eq!(queued_events(&app), [(CONFIRMED.to_owned(), JANE.to_owned())]);

    // Act: the library's backfill, beside the app, as the command runs it
    let config = (*app.state.config).clone();
    let request = signupd::operator::backfill::BackfillRequest { destination: NAME.into(), list: None, dry_run: false };
    let (runtime, clock) = (tokio::runtime::Handle::current(), app.clock.clone());
    let out = tokio::task::spawn_blocking(move || {
        let beside = signupd::operator::Beside::open(config, None).unwrap();
        let mut out = Vec::new();
        signupd::operator::backfill::run(&beside, &request, &clock, &runtime, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    })
    .await
    .unwrap();

    // Assert: ann queued again, jane not twice
    assert_eq!(out, "queued 1 confirmed subscriber of news for destination out (1 already waiting in its queue)\n");
    let events = queued_events(&app);
    assert_eq!(events, [(CONFIRMED.to_owned(), JANE.to_owned()), (CONFIRMED.to_owned(), ANN.to_owned())]);

    // Act: ann leaves before the backfilled event was delivered
    let response = one_click(&app, &welcome[0].list_unsubscribe()).await;
    assert_eq!(response.status().as_u16(), 200);

    // Assert: the unsubscribed event waits for the backfilled one, and the sender ends unsubscribed
    let waits: Option<i64> = db(&app)
        .query_row(
            "SELECT u.after_id FROM webhook_deliveries u WHERE u.event_type = 'subscriber.unsubscribed'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let backfilled: i64 = db(&app)
        .query_row("SELECT max(id) FROM webhook_deliveries WHERE event_type = 'subscriber.confirmed'", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(waits, Some(backfilled));
    assert_eq!(deliver(&app).await, [DeliveryOutcome::Delivered, DeliveryOutcome::Delivered], "jane, then ann");
    assert_eq!(deliver(&app).await, [DeliveryOutcome::Delivered], "ann's unsubscribe, once her event is gone");
    assert_queue_empty(&app, "all handed on");
    let history = api.history_of(ANN);
    assert_eq!(api.standing(ANN), Some(Standing::Unsubscribed), "{history:?}");
    assert_eq!(api.standing(JANE), Some(Standing::Subscribed));
}

// ---------------------------------------------------------------------------------------------
// Destinations you can see

#[test]
fn check_config_refuses_the_guides_placeholder_url_naming_the_key_and_exits_1() {
    // Arrange: the destination of the operations guide, its URL left as written
    let dir = tempfile::tempdir().unwrap();
    let credential = write_credential(dir.path(), "newsletter", "api:token");
    let table = format!(
        "[[destinations]]\nname = \"newsletter\"\nkind = \"listmonk\"\nurl = \"https://lists.example.com\"\n\
         credential_file = {:?}\ntarget = \"3\"\n",
        credential.display().to_string()
    );
    let config = write_config(dir.path(), &table);

    // Act
    let output = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();

    // Assert
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "destinations[0].url: \"https://lists.example.com/\" is a placeholder on a reserved example domain; set \
             the URL of your sender (listmonk: its base URL)"
        ),
        "{stderr}"
    );
}

#[test]
fn send_test_destination_names_the_host_and_port_it_could_not_reach_and_never_the_query_or_credential() {
    // Arrange: a host that does not resolve (RFC 2606 .invalid), with a token in the URL's query
    let dir = tempfile::tempdir().unwrap();
    let credential = write_credential(dir.path(), "far", "xkeysib-the-credential");
    let table = format!(
        "[[destinations]]\nname = \"far\"\nkind = \"brevo\"\nurl = \"https://api.nowhere.invalid:8443/v3?token=q-secret\"\n\
         credential_file = {:?}\ntarget = \"7\"\n[mail]\nwebhook_timeout = \"2s\"\n",
        credential.display().to_string()
    );
    let config = write_config(dir.path(), &table);

    // Act
    let output = signupd().arg("send-test-destination").arg("--config").arg(&config).output().unwrap();

    // Assert: the host and port tried, whether DNS failed or the wait ran out
    let stdout = String::from_utf8_lossy(&output.stdout);
    let all = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{all}");
    let named = [
        "could not connect to api.nowhere.invalid:8443 (DNS, TLS or the network)",
        "no answer from api.nowhere.invalid:8443 within 2s",
    ];
    assert!(named.iter().any(|words| stdout.starts_with(&format!("far (brevo): failed: {words} (hint: "))), "{stdout}");
    assert!(!all.contains("q-secret") && !all.contains("token=") && !all.contains("xkeysib"), "{all}");
}

/// The cells of a destination's row in the status page's destinations panel: column → text.
fn destination_row(page: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let start = page.find(&format!("<tr data-destination=\"{name}\">"))?;
    let row = &page[start..];
    let row = &row[..row.find("</tr>")?];
    Some(
        row.split("<td data-column=\"")
            .skip(1)
            .filter_map(|cell| {
                let (column, rest) = cell.split_once("\">")?;
                Some((column.to_owned(), rest[..rest.find('<')?].to_owned()))
            })
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_shows_a_failing_destination_by_name_with_its_retries_and_oldest_wait_then_handed_on() {
    // Arrange: `serve` with a status page, a Brevo that answers 503
    let api = SenderApi::start(Kind::Brevo);
    api.go_down();
    let dir = tempfile::tempdir().unwrap();
    let credential = write_credential(dir.path(), NAME, &api.credential());
    let extra = format!(
        "retry_base = \"1s\"\nwebhook_timeout = \"1s\"\n[server]\nmetrics_listen = \"127.0.0.1:0\"\n{}",
        destination_toml(NAME, &api, &credential)
    );
    let config = process::config(dir.path(), 1000, &extra);
    let server = process::serve(&config);
    let status = format!("http://127.0.0.1:{}/status", server.metrics_port.expect("a metrics listener"));
    let page = || async { process::client().get(&status).send().await.unwrap().text().await.unwrap() };
    let idle = page().await;
    assert_eq!(
        destination_row(&idle, NAME).as_ref().map(|row| (
            row["delivered"].as_str(),
            row["retry"].as_str(),
            row["oldest"].as_str()
        )),
        Some(("0", "0", "–")),
        "a configured destination has its row before any event"
    );

    // Act: one subscriber confirmed while the sender fails
    sign_up_and_confirm(&server, dir.path(), &["panel@example.com".to_owned()]).await;

    // Assert: the destination's retries show by name, with what waits for it; the webhook line stays the webhooks'
    let deadline = Instant::now() + Duration::from_secs(40);
    let (failing, row) = loop {
        let text = page().await;
        if let Some(row) = destination_row(&text, NAME).filter(|row| row["retry"] != "0" && row["retrying"] == "1") {
            break (text, row);
        }
        assert!(Instant::now() < deadline, "no retry shown: {:?}", destination_row(&text, NAME));
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        (row["delivered"].as_str(), row["dropped"].as_str(), row["waiting"].as_str()),
        ("0", "0", "1"),
        "{row:?}"
    );
    assert!(row["oldest"].ends_with(" s"), "the oldest waiting event's age: {row:?}");
    assert!(
        failing.contains("<tr data-destination=\"out\"><th scope=\"row\">out <span class=\"name\">(brevo)</span></th>"),
        "{failing}"
    );
    assert!(failing.contains("Totals: delivered 0, retry 0, dropped 0"), "the webhook chart counts webhooks only");
    assert!(!failing.to_lowercase().contains("<script"), "no script");

    // Act: the sender comes back
    api.come_back();

    // Assert: handed on, nothing waits
    let deadline = Instant::now() + Duration::from_secs(40);
    let row = loop {
        let text = page().await;
        if let Some(row) = destination_row(&text, NAME).filter(|row| row["delivered"] == "1" && row["waiting"] == "0") {
            break row;
        }
        assert!(Instant::now() < deadline, "not handed on: {:?}", destination_row(&text, NAME));
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!((row["dropped"].as_str(), row["retrying"].as_str(), row["oldest"].as_str()), ("0", "0", "–"), "{row:?}");
    assert_ne!(row["retry"], "0", "the retries of the range stay counted");
    server.stop().await;
}
