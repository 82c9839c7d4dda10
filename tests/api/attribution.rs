//! Where a signup came from (docs/http-api.md "Signing up", `source` and `tags`): refused when
//! malformed or unknown, before anything is written; kept per list as the first signup stored
//! it; and carried into every output — `signupd export` (CSV, JSON, JSON lines), the
//! `subscriber.confirmed` webhook payload, `signupd stats` per source — but never into a
//! Prometheus label.
//!
//! Signups go through `POST /api/signup` of an in-process app (background workers off: the tests
//! apply the signup queue and send the mail themselves); the confirm tokens come from the mails
//! the file transport writes. The CLI commands are the real binary on the same data directory,
//! with the app's clock moved to the real time first, as the binary's clock is.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};
use signupd::outbound::webhooks::worker::DeliveryOutcome;

use crate::confirm::{deliver as send_mail, dump, location, post_token};
use crate::helpers::{TestApp, signupd, spawn_app_with};
use crate::operator::{COLUMNS, Record, parse_csv, parse_json, parse_jsonl};
use crate::signup::{
    RAISED_LIMITS, assert_json_error, assert_redirected_to_check_inbox, count, db, drain, header, post_form,
    post_form_json, post_json,
};
use crate::webhook_receiver::{Receiver, Reply};
use crate::webhooks::{HOOK_PATH, app_with_hooks, deliver as deliver_events, to_real_time};

/// `news` knows the tags `beta` and `pricing`; `other` only `pricing`.
const LISTS: &str = "[[lists]]\nid = \"news\"\nname = \"News\"\ntags = [\"beta\", \"pricing\"]\n\
    [[lists]]\nid = \"other\"\nname = \"Other\"\ntags = [\"pricing\"]\n";

/// An in-process app with [`LISTS`], rate limits out of the way, its clock at the real time.
async fn app() -> TestApp {
    app_with("").await
}

async fn app_with(extra: &str) -> TestApp {
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{extra}\n{LISTS}")).await;
    to_real_time(&app);
    app
}

/// Signs `email` up with `fields` added to a valid signup of `news`; the HTML client's 303.
async fn sign_up(app: &TestApp, email: &str, extra: &[(&str, &str)]) {
    let mut fields = vec![("email", email), ("consent", "yes"), ("list", "news")];
    fields.extend_from_slice(extra);
    let response = post_form(app, &fields).await;
    assert_redirected_to_check_inbox(&response, "news", &format!("signup of {email} with {extra:?}"));
}

/// Signs `email` up to `news` with `extra`, sends its one confirmation mail and confirms it.
async fn sign_up_and_confirm(app: &TestApp, email: &str, extra: &[(&str, &str)]) {
    sign_up(app, email, extra).await;
    drain(app).await;
    let mails = send_mail(app).await;
    assert_eq!(mails.len(), 1, "one confirmation mail to {email}");
    let response = post_token(app, "/api/confirm", &mails[0].confirm_token()).await;
    assert_eq!(location(&response), "/confirmed?list=news", "confirming {email}");
    // The welcome mail, so the next confirmation is the only mail in the queue.
    send_mail(app).await;
}

/// The stored `(source, tags)` of `email`'s row on `list`.
fn stored(app: &TestApp, list: &str, email: &str) -> (Option<String>, Option<String>) {
    db(app)
        .query_row("SELECT source, tags FROM subscribers WHERE list_id = ?1 AND email = ?2", [list, email], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap_or_else(|error| panic!("the row of {email} on {list}: {error}"))
}

/// `signupd ARGS` on the app's data directory, with the same lists.
async fn cli(app: &TestApp, args: &[&str]) -> Output {
    let config: PathBuf = app.data_dir().join("cli.toml");
    let text = format!("[storage]\ndata_dir = {:?}\n{LISTS}", app.data_dir().display().to_string());
    std::fs::write(&config, text).unwrap();
    let mut command = signupd();
    command.args(args).arg("--config").arg(&config);
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// The record of `email` among `records`.
fn record_of<'a, R>(records: &'a [R], email: &str, email_of: impl Fn(&R) -> Option<&str>) -> &'a R {
    records.iter().find(|record| email_of(record) == Some(email)).unwrap_or_else(|| panic!("no record of {email}"))
}

// ---------------------------------------------------------------------------------------------
// Refusals: nothing written

#[actix_web::test]
async fn a_malformed_source_or_an_unknown_tag_is_refused_for_json_and_html_clients_and_writes_nothing() {
    // Arrange
    let app = app().await;
    let before = dump(&app);
    let long = "x".repeat(65);
    let cases = [
        (
            "a source with a space and capitals",
            vec![("source", "Bad Value")],
            json!({"source": "Bad Value"}),
            "invalid_source",
            "This form sends a source this service does not accept",
        ),
        (
            "a source of 65 characters",
            vec![("source", long.as_str())],
            json!({"source": long}),
            "invalid_source",
            "This form sends a source this service does not accept",
        ),
        (
            "a source with a comma",
            vec![("source", "a,b")],
            json!({"source": "a,b"}),
            "invalid_source",
            "This form sends a source this service does not accept",
        ),
        (
            "a tag the list does not have",
            vec![("tags", "nope")],
            json!({"tags": ["nope"]}),
            "unknown_tag",
            "This form sends a tag the list does not know",
        ),
        (
            "a known tag beside an unknown one",
            vec![("tags", "beta"), ("tags", "nope")],
            json!({"tags": ["beta", "nope"]}),
            "unknown_tag",
            "This form sends a tag the list does not know",
        ),
        (
            "a tag only another list has",
            vec![("tags", "beta"), ("list", "other")],
            json!({"tags": ["beta"], "list": "other"}),
            "unknown_tag",
            "This form sends a tag the list does not know",
        ),
    ];

    for (case, form_fields, json_fields, code, message) in cases {
        let (list, form_fields): (Vec<_>, Vec<_>) = form_fields.into_iter().partition(|(key, _)| *key == "list");
        let list = list.first().map_or("news", |(_, list)| *list);
        let mut fields = vec![("email", "jane@example.com"), ("consent", "yes"), ("list", list)];
        fields.extend(form_fields);
        let mut body = json!({"email": "jane@example.com", "consent": true, "list": "news"});
        body.as_object_mut().unwrap().extend(json_fields.as_object().unwrap().clone());

        // Act + Assert: a form post asking for JSON, a JSON body, a browser's form post
        assert_json_error(post_form_json(&app, &fields).await, 400, code, &format!("{case}, form")).await;
        assert_json_error(post_json(&app, body).await, 400, code, &format!("{case}, JSON")).await;
        let response = post_form(&app, &fields).await;
        assert_eq!(response.status(), 400, "{case}, HTML");
        assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"), "{case}, HTML");
        let page = response.text().await.unwrap();
        assert!(page.contains(message), "{case}: the page says why: {page}");
        assert!(page.contains("jane@example.com"), "{case}: the typed address is kept");

        // Assert: nothing written anywhere, not even a rate-limit counter
        assert_eq!(count(&app, "intake"), 0, "{case}");
        assert_eq!(count(&app, "subscribers"), 0, "{case}");
        assert_eq!(dump(&app), before, "{case}: nothing written");
    }
}

// ---------------------------------------------------------------------------------------------
// What is stored

#[actix_web::test]
async fn a_tag_is_stored_only_on_the_named_lists_that_allow_it_and_the_source_on_each() {
    // Arrange
    let app = app().await;

    // Act: one signup naming both lists, with a tag of news only and a tag of both
    let fields = [
        ("email", "jane@example.com"),
        ("consent", "yes"),
        ("list", "news"),
        ("list", "other"),
        ("source", "homepage-footer"),
        ("tags", "beta"),
        ("tags", "pricing"),
    ];
    let response = post_form(&app, &fields).await;
    // ... and one naming both with the tag of news only
    let only_news =
        [("email", "ann@example.com"), ("consent", "yes"), ("list", "news"), ("list", "other"), ("tags", "beta")];
    let second = post_form_json(&app, &only_news).await;
    drain(&app).await;

    // Assert
    assert_eq!(response.status(), 303);
    assert_eq!(second.status(), 202);
    assert_eq!(stored(&app, "news", "jane@example.com"), (Some("homepage-footer".into()), Some("beta,pricing".into())));
    assert_eq!(stored(&app, "other", "jane@example.com"), (Some("homepage-footer".into()), Some("pricing".into())));
    assert_eq!(stored(&app, "news", "ann@example.com"), (None, Some("beta".into())));
    assert_eq!(stored(&app, "other", "ann@example.com"), (None, None), "other does not know beta");
}

#[actix_web::test]
async fn a_repeat_signup_with_another_source_and_tags_changes_neither_pending_nor_confirmed_rows() {
    // Arrange: jane confirmed, ann pending, both from the footer with beta
    let app = app().await;
    let first = [("source", "homepage-footer"), ("tags", "beta")];
    sign_up_and_confirm(&app, "jane@example.com", &first).await;
    sign_up(&app, "ann@example.com", &first).await;
    drain(&app).await;

    // Act: both again, from another page with another tag, and once with none
    for email in ["jane@example.com", "ann@example.com"] {
        sign_up(&app, email, &[("source", "pricing-page"), ("tags", "pricing")]).await;
        sign_up(&app, email, &[]).await;
    }
    drain(&app).await;

    // Assert
    for email in ["jane@example.com", "ann@example.com"] {
        assert_eq!(
            stored(&app, "news", email),
            (Some("homepage-footer".into()), Some("beta".into())),
            "{email}: the first signup's attribution stays"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// export

#[actix_web::test]
async fn export_carries_source_and_tags_last_in_csv_json_and_json_lines() {
    // Arrange: ann with two tags (sent in the other order), bob without either, cat from a
    // source a spreadsheet would read as a formula; cat stays pending
    let app = app().await;
    sign_up_and_confirm(
        &app,
        "ann@example.com",
        &[("source", "homepage-footer"), ("tags", "pricing"), ("tags", "beta")],
    )
    .await;
    sign_up_and_confirm(&app, "bob@example.com", &[]).await;
    sign_up(&app, "cat@example.com", &[("source", "-1"), ("tags", "beta")]).await;
    drain(&app).await;

    // Act
    let csv = cli(&app, &["export", "--status", "all"]).await;
    let json = cli(&app, &["export", "--status", "all", "--format", "json"]).await;
    let jsonl = cli(&app, &["export", "--status", "all", "--format", "jsonl"]).await;

    // Assert: JSON, as the values are (checked on the raw value: `tags` is an array)
    let raw: Value = serde_json::from_slice(&json.stdout).unwrap_or_else(|error| panic!("{error}: {json:?}"));
    let raw = raw.as_array().unwrap();
    let of = |email: &str| record_of(raw, email, |record| record["email"].as_str()).clone();
    assert_eq!(
        (&of("ann@example.com")["source"], &of("ann@example.com")["tags"]),
        (&json!("homepage-footer"), &json!(["beta", "pricing"]))
    );
    assert_eq!((&of("bob@example.com")["source"], &of("bob@example.com")["tags"]), (&Value::Null, &json!([])));
    assert_eq!((&of("cat@example.com")["source"], &of("cat@example.com")["tags"]), (&json!("-1"), &json!(["beta"])));
    let keys: Vec<&str> = raw[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), COLUMNS.len(), "{keys:?}");

    // Assert: JSON lines the same records
    let records = parse_json(&json);
    let lines = parse_jsonl(&jsonl);
    assert_eq!(without_url(&records), without_url(&lines));

    // Assert: CSV, the new columns last (`parse_csv` checks the header), tags joined by a space,
    // the formula-like source neutralised
    let rows = parse_csv(&csv);
    let row = |email: &str| record_of(&rows, email, |row| row.get("email").map(String::as_str));
    assert_eq!(COLUMNS[9..], ["source", "tags", "fields", "language"]);
    assert_eq!(
        (row("ann@example.com")["source"].as_str(), row("ann@example.com")["tags"].as_str()),
        ("homepage-footer", "beta pricing")
    );
    assert_eq!((row("bob@example.com")["source"].as_str(), row("bob@example.com")["tags"].as_str()), ("", ""));
    assert_eq!((row("cat@example.com")["source"].as_str(), row("cat@example.com")["tags"].as_str()), ("'-1", "beta"));
    let header_line = String::from_utf8_lossy(&csv.stdout).lines().next().unwrap().to_owned();
    assert!(header_line.ends_with(",unsubscribe_url,source,tags,fields,language"), "{header_line}");
}

// ---------------------------------------------------------------------------------------------
// The webhook payload

#[actix_web::test]
async fn the_confirmed_event_carries_the_source_and_tags_or_null_and_an_empty_array() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", LISTS, &[("crm", &receiver.url(HOOK_PATH))]).await;
    let with = [("source", "homepage-footer"), ("tags", "beta"), ("tags", "pricing")];

    // Act: one subscriber with attribution, one without, confirmed and delivered
    sign_up_and_confirm(&app, "jane@example.com", &with).await;
    sign_up_and_confirm(&app, "ann@example.com", &[]).await;
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        let batch = deliver_events(&app, "crm").await;
        if !batch.contains(&DeliveryOutcome::Delivered) {
            break;
        }
        outcomes.extend(batch);
    }

    // Assert
    let delivered = outcomes.iter().filter(|outcome| **outcome == DeliveryOutcome::Delivered).count();
    assert_eq!(delivered, 2, "{outcomes:?}");
    let events: Vec<Value> = receiver.requests().iter().map(|request| request.json()).collect();
    assert_eq!(events.len(), 2, "{events:?}");
    let data = |email: &str| {
        events
            .iter()
            .find(|event| event["data"]["email"] == email)
            .unwrap_or_else(|| panic!("no event for {email}: {events:?}"))["data"]
            .clone()
    };
    let jane = data("jane@example.com");
    assert_eq!(jane["source"], json!("homepage-footer"), "{jane}");
    assert_eq!(jane["tags"], json!(["beta", "pricing"]), "{jane}");
    assert_eq!(jane["list"], json!("news"), "the documented fields stay: {jane}");
    let ann = data("ann@example.com");
    assert_eq!((&ann["source"], &ann["tags"]), (&Value::Null, &json!([])), "{ann}");
    assert!(ann.as_object().unwrap().contains_key("source"), "source is present as null: {ann}");
}

// ---------------------------------------------------------------------------------------------
// stats

/// The source lines of `list` in the `stats` table: `label → [signups24h, signups7d,
/// confirmed, rate7d]`.
fn source_lines(table: &str, list: &str) -> Vec<(String, Vec<String>)> {
    let heading = format!("sources of {list}, signups of the last 7 d:");
    let start = table.find(&heading).unwrap_or_else(|| panic!("no {heading:?} in {table}"));
    table[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with("  "))
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_owned);
            (words.next().unwrap(), words.take(4).collect())
        })
        .collect()
}

#[actix_web::test]
async fn stats_gives_signups_and_confirmation_rate_per_source_bounded_with_the_rest_summed() {
    // Arrange: on news 3 from `footer` (1 confirmed), 1 from `ads`, 2 without a source (1
    // confirmed), and 21 one-off sources `s00`…`s20`; nothing on other
    let app = app().await;
    sign_up_and_confirm(&app, "f1@example.com", &[("source", "footer")]).await;
    sign_up_and_confirm(&app, "n1@example.com", &[]).await;
    sign_up(&app, "f2@example.com", &[("source", "footer"), ("tags", "beta")]).await;
    sign_up(&app, "f3@example.com", &[("source", "footer")]).await;
    sign_up(&app, "a1@example.com", &[("source", "ads")]).await;
    sign_up(&app, "n2@example.com", &[]).await;
    for n in 0..21 {
        sign_up(&app, &format!("s{n}@example.com"), &[("source", &format!("s{n:02}"))]).await;
    }
    drain(&app).await;

    // Act
    let json = cli(&app, &["stats", "--json"]).await;
    let table = cli(&app, &["stats"]).await;

    // Assert: JSON — the 20 largest named sources (footer, then by name), the rows without a
    // source, and the last 3 one-off sources summed
    assert_eq!(json.status.code(), Some(0), "{}", String::from_utf8_lossy(&json.stderr));
    let stats: Value = serde_json::from_slice(&json.stdout).unwrap();
    let (news, other) = (&stats["lists"][0], &stats["lists"][1]);
    let sources = news["sources_7d"].as_array().unwrap();
    let names: Vec<Value> = sources.iter().map(|source| source["source"].clone()).collect();
    let mut expected = vec![json!("footer"), json!("ads")];
    expected.extend((0..18).map(|n| json!(format!("s{n:02}"))));
    expected.push(Value::Null);
    assert_eq!(names, expected, "{news}");
    let footer = &sources[0];
    assert_eq!(footer["signups"], json!({"last_24h": 3, "last_7d": 3}), "{footer}");
    assert_eq!(footer["confirmed_of_signups_7d"], 1, "{footer}");
    assert!((footer["confirmation_rate_7d"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9, "{footer}");
    let ads = &sources[1];
    assert_eq!((ads["signups"]["last_7d"].as_i64(), ads["confirmation_rate_7d"].as_f64()), (Some(1), Some(0.0)));
    let none = sources.last().unwrap();
    assert_eq!(none["signups"], json!({"last_24h": 2, "last_7d": 2}), "{none}");
    assert_eq!((none["confirmed_of_signups_7d"].as_i64(), none["confirmation_rate_7d"].as_f64()), (Some(1), Some(0.5)));
    assert_eq!(
        news["other_sources_7d"],
        json!({"sources": 3, "signups": {"last_24h": 3, "last_7d": 3}, "confirmed_of_signups_7d": 0,
               "confirmation_rate_7d": 0.0})
    );
    // The per-source figures are rows (a cohort: how many of them are confirmed now), all 27 of
    // them; the list's own `signups` are the status page's accepted signups (events, which a
    // removal does not undo).
    let summed: i64 = sources.iter().map(|source| source["signups"]["last_7d"].as_i64().unwrap()).sum::<i64>()
        + news["other_sources_7d"]["signups"]["last_7d"].as_i64().unwrap();
    assert_eq!(summed, 27, "every row created counts under one source: {news}");
    assert_eq!((other["sources_7d"].clone(), other["other_sources_7d"].clone()), (json!([]), Value::Null));

    // Assert: the table says the same
    assert_eq!(table.status.code(), Some(0), "{}", String::from_utf8_lossy(&table.stderr));
    let table = String::from_utf8(table.stdout).unwrap();
    let lines = source_lines(&table, "news");
    assert_eq!(lines.len(), 22, "20 named, (none), (other): {table}");
    assert_eq!(lines[0], ("footer".to_owned(), vec!["3".into(), "3".into(), "1".into(), "33%".into()]), "{table}");
    assert_eq!(lines[1].0, "ads");
    assert_eq!(lines[20], ("(none)".to_owned(), vec!["2".into(), "2".into(), "1".into(), "50%".into()]), "{table}");
    assert_eq!(lines[21], ("(other)".to_owned(), vec!["3".into(), "3".into(), "0".into(), "0%".into()]), "{table}");
    let other_line = table.lines().find(|line| line.trim_start().starts_with("(other)")).unwrap();
    assert!(other_line.ends_with("(3 more sources)"), "{other_line}");
    assert!(table.contains("sources of other: no signups in the last 7 d"), "{table}");
}

// ---------------------------------------------------------------------------------------------
// Prometheus

#[actix_web::test]
async fn no_metric_has_a_source_or_tags_label() {
    // Arrange: signups and a confirmation with attribution, on an app with a metrics listener
    let app = app_with("[server]\nmetrics_listen = \"127.0.0.1:0\"\n").await;
    let attribution = [("source", "homepage-footer"), ("tags", "beta")];
    sign_up_and_confirm(&app, "jane@example.com", &attribution).await;
    sign_up(&app, "ann@example.com", &[("source", "campaign-x")]).await;
    drain(&app).await;

    // Act
    let port = app.metrics_port.expect("a metrics listener");
    let response = app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap();

    // Assert: signups were counted, with no label naming where they came from
    assert_eq!(response.status(), 200);
    let metrics = response.text().await.unwrap();
    assert!(metrics.contains("signupd_signups_total{"), "{metrics}");
    for needle in ["source=", "tags=", "tag=", "homepage-footer", "campaign-x"] {
        let found: Vec<&str> = metrics.lines().filter(|line| line.contains(needle)).collect();
        assert!(found.is_empty(), "{needle}: {found:?}");
    }
}

/// The records without their `unsubscribe_url`, which is signed anew by each export.
fn without_url(records: &[Record]) -> Vec<Record> {
    records
        .iter()
        .map(|record| {
            record.iter().filter(|(key, _)| *key != "unsubscribe_url").map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .collect()
}
