//! The fields a list's form may carry (`[[lists.fields]]`, docs/http-api.md "Fields"): the
//! hosted form draws them, `POST /api/signup` checks them (400 `invalid_field` naming the field,
//! nothing written), the row keeps them from its first signup, and they reach every place that
//! shows what is held — the preference page, the privacy page, `export`, `import`, `lookup` and the
//! `subscriber.confirmed` payload — but no log line.
//!
//! Signups go through an in-process app (background workers off: the tests apply the signup
//! queue and send the mail themselves); the CLI commands are the real binary on the same data
//! directory.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};
use signupd::outbound::webhooks::worker::DeliveryOutcome;

use crate::confirm::{deliver as send_mail, dump, get, location, post_token, status_and_body, with_token};
use crate::helpers::{TestApp, signupd, spawn_app_with};
use crate::process;
use crate::signup::{RAISED_LIMITS, count, db, drain, header, post_form, post_form_json, post_json};
use crate::webhook_receiver::{Receiver, Reply};
use crate::webhooks::{HOOK_PATH, app_with_hooks, deliver as deliver_events, to_real_time};

/// `news` asks for a required first name, an optional topic and a hidden campaign; `other`
/// asks for a topic of its own (other options) and `city`.
const LISTS: &str = r#"
[[lists]]
id = "news"
name = "News"
[[lists.fields]]
name = "first_name"
label = "First name"
required = true
max_length = 10
[[lists.fields]]
name = "topic"
label = "Topic"
kind = "select"
options = ["Rust", "Go"]
[[lists.fields]]
name = "campaign"
label = "Campaign"
kind = "hidden"
[[lists]]
id = "other"
name = "Other"
[[lists.fields]]
name = "topic"
label = "Subject"
kind = "select"
options = ["Go", "Zig"]
[[lists.fields]]
name = "city"
label = "City"
"#;

async fn app() -> TestApp {
    let app = spawn_app_with(&format!("{RAISED_LIMITS}\n{LISTS}")).await;
    to_real_time(&app);
    app
}

/// A valid signup of `email` to `news` with `extra` fields.
fn signup<'a>(email: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![("email", email), ("consent", "yes"), ("list", "news")];
    fields.extend_from_slice(extra);
    fields
}

/// The stored `fields` column of `email`'s row on `list`.
fn stored(app: &TestApp, list: &str, email: &str) -> Option<String> {
    db(app)
        .query_row("SELECT fields FROM subscribers WHERE list_id = ?1 AND email = ?2", [list, email], |row| row.get(0))
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

/// A refusal case of a form post: what it is, the fields beside a valid signup, the field named.
type FormCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

/// `400 {"ok":false,"error":"invalid_field","field":<name>}`.
async fn assert_invalid_field(response: reqwest::Response, name: &str, case: &str) {
    let (status, body) = status_and_body(response).await;
    assert_eq!(status, 400, "{case}: {body}");
    let value: Value = serde_json::from_str(&body).unwrap_or_else(|error| panic!("{case}: {error}: {body}"));
    assert_eq!(value, json!({"ok": false, "error": "invalid_field", "field": name}), "{case}");
}

// ---------------------------------------------------------------------------------------------
// The hosted form

#[actix_web::test]
async fn the_hosted_form_labels_each_field_marks_the_optional_ones_and_takes_a_hidden_value_from_the_link() {
    // Arrange
    let app = app().await;

    // Act
    let (status, page) = status_and_body(get(&app, "/signup?list=news&campaign=spring%3Csale").await).await;
    let (_, both) = status_and_body(get(&app, "/signup?list=news&list=other").await).await;

    // Assert: a labelled text input with its length and required, a select with an empty first
    // option, the hidden value from the query (escaped)
    assert_eq!(status, 200);
    for expected in [
        r#"<label for="field-first_name">First name</label>"#,
        r#"<input type="text" id="field-first_name" name="first_name" value="" maxlength="10" required>"#,
        r#"<label for="field-topic">Topic <span class="optional">(optional)</span></label>"#,
        r#"<select id="field-topic" name="topic">"#,
        r#"<option value="">Choose one</option>"#,
        "<option>Rust</option>",
        r#"<input type="hidden" name="campaign" value="spring&#60;sale">"#,
    ] {
        assert!(page.contains(expected), "{expected} in\n{page}");
    }
    // Assert: two lists, each name once, as the first list describes it
    assert_eq!(both.matches(r#"name="topic""#).count(), 1, "{both}");
    assert!(both.contains(r#"<label for="field-city">City"#), "{both}");
    assert!(!both.contains("Subject"), "the first list's label: {both}");
}

// ---------------------------------------------------------------------------------------------
// Refusals: nothing written

#[actix_web::test]
async fn a_missing_or_bad_field_is_invalid_field_naming_it_for_every_client_and_writes_nothing() {
    // Arrange
    let app = app().await;
    let before = dump(&app);
    let long = "x".repeat(11);
    let form_cases: Vec<FormCase<'_>> = vec![
        ("the required field missing", vec![], "first_name"),
        ("the required field blank", vec![("first_name", "   ")], "first_name"),
        ("too long", vec![("first_name", long.as_str())], "first_name"),
        ("a line break", vec![("first_name", "Ann\nX")], "first_name"),
        ("not an option, by case", vec![("first_name", "Ann"), ("topic", "rust")], "topic"),
        ("a control character in a hidden field", vec![("first_name", "Ann"), ("campaign", "a\u{7}")], "campaign"),
        ("bytes that were not text", vec![("first_name", "Ann"), ("campaign", "\u{FFFD}")], "campaign"),
    ];
    let json_cases: Vec<(&str, Value, &str)> = vec![
        ("the required field null", json!({"first_name": null}), "first_name"),
        ("a number", json!({"first_name": 12}), "first_name"),
        ("an array", json!({"first_name": ["Ann"]}), "first_name"),
        ("an object", json!({"first_name": "Ann", "topic": {"a": 1}}), "topic"),
        ("not an option", json!({"first_name": "Ann", "topic": "C"}), "topic"),
    ];

    // Act + Assert: a form asking for JSON, a JSON body; nothing written anywhere, not even a
    // rate-limit counter
    for (case, form, name) in form_cases {
        assert_invalid_field(post_form_json(&app, &signup("jane@example.com", &form)).await, name, case).await;
        assert_eq!(dump(&app), before, "{case}: nothing written");
    }
    for (case, extra, name) in json_cases {
        let mut body = json!({"email": "jane@example.com", "consent": true, "list": "news"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        assert_invalid_field(post_json(&app, body).await, name, case).await;
        assert_eq!(dump(&app), before, "{case}: nothing written");
    }
    assert_eq!(count(&app, "intake"), 0);
}

#[actix_web::test]
async fn a_browser_gets_the_form_back_with_what_was_typed_and_the_field_marked_and_return_to_gets_the_name() {
    // Arrange
    let dir_lists = LISTS.replace(
        "id = \"news\"\nname = \"News\"\n",
        "id = \"news\"\nname = \"News\"\nallowed_origins = [\"https://www.example.com\"]\n",
    );
    let app = spawn_app_with(&format!("{RAISED_LIMITS}\n{dir_lists}")).await;
    let typed = [("topic", "Go"), ("campaign", "spring")];

    // Act: the first name missing, from the hosted form and from a page with return_to
    let response = post_form(&app, &signup("jane@example.com", &typed)).await;
    let status = response.status().as_u16();
    let page = response.text().await.unwrap();
    let mut with_return = signup("jane@example.com", &typed);
    with_return.push(("return_to", "https://www.example.com/join"));
    let redirect = post_form(&app, &with_return).await;

    // Assert: 400, the message names the label, the field is marked and described by it, the
    // address and the other values are kept
    assert_eq!(status, 400);
    assert!(page.contains("Please fill in “First name”."), "{page}");
    assert!(
        page.contains(
            r#"name="first_name" value="" maxlength="10" required aria-invalid="true" aria-describedby="form-error">"#
        ),
        "{page}"
    );
    assert_eq!(page.matches(r#"<div class="field invalid">"#).count(), 1, "one control marked for the eye: {page}");
    let marked = page.split(r#"<div class="field invalid">"#).nth(1).unwrap();
    assert!(
        marked.split("</div>").next().unwrap().contains(r#"name="first_name""#),
        "the marked one is First name: {page}"
    );
    assert!(
        page.contains(r#"<input type="checkbox" id="consent" name="consent" value="yes" required checked>"#),
        "the consent box as the visitor left it, ticked: {page}"
    );
    assert!(page.contains("<option selected>Go</option>"), "the chosen option kept: {page}");
    assert!(page.contains(r#"<input type="hidden" name="campaign" value="spring">"#), "{page}");
    assert!(page.contains(r#"value="jane@example.com""#), "{page}");
    assert!(!page.contains(r#"maxlength="254" aria-describedby"#), "the address is not what is wrong: {page}");
    assert_eq!(redirect.status(), 303);
    assert_eq!(
        header(&redirect, "location").as_deref(),
        Some("https://www.example.com/join?signup=error&reason=invalid_field&field=first_name")
    );
    assert_eq!(count(&app, "intake"), 0);
}

#[actix_web::test]
async fn the_consent_box_comes_back_as_the_visitor_left_it_after_any_refusal() {
    // Arrange
    let app = spawn_app_with(&format!("{RAISED_LIMITS}\n{LISTS}")).await;
    let ticked = r#"<input type="checkbox" id="consent" name="consent" value="yes" required checked>"#;
    let unticked = r#"<input type="checkbox" id="consent" name="consent" value="yes" required>"#;

    // Act: refused for the address with the box ticked, and for the consent itself
    let bad_address = post_form(&app, &signup("not-an-address", &[("first_name", "Ada")])).await;
    let bad_address = (bad_address.status().as_u16(), bad_address.text().await.unwrap());
    let no_consent = post_form(&app, &[("email", "ada@example.com"), ("list", "news"), ("first_name", "Ada")]).await;
    let no_consent = (no_consent.status().as_u16(), no_consent.text().await.unwrap());
    let said_no = post_form(&app, &[("email", "ada@example.com"), ("list", "news"), ("consent", "no")]).await;
    let said_no = (said_no.status().as_u16(), said_no.text().await.unwrap());

    // Assert: ticked where it was ticked, never ticked for the visitor where it was not
    assert_eq!(bad_address.0, 400);
    assert!(bad_address.1.contains(ticked) && !bad_address.1.contains(unticked), "{}", bad_address.1);
    for (case, (status, page)) in [("no consent field", no_consent), ("consent=no", said_no)] {
        assert_eq!(status, 400, "{case}");
        assert!(page.contains(unticked) && !page.contains(ticked), "{case}: {page}");
        assert!(!page.contains(r#"class="field invalid""#), "{case}: no field marked: {page}");
    }
    assert_eq!(count(&app, "intake"), 0);
}

// ---------------------------------------------------------------------------------------------
// What is stored

#[actix_web::test]
async fn each_list_keeps_its_own_fields_from_the_first_signup_and_unknown_names_are_ignored() {
    // Arrange
    let app = app().await;

    // Act: one signup for both lists (topic Go suits both), one JSON signup for news only,
    // then a repeat of the first with other values
    let both = [
        ("email", "jane@example.com"),
        ("consent", "yes"),
        ("list", "news"),
        ("list", "other"),
        ("first_name", " Jane "),
        ("topic", "Go"),
        ("city", "Köln"),
        ("shoe_size", "42"),
    ];
    assert_eq!(post_form(&app, &both).await.status(), 303);
    let json = json!({"email": "ann@example.com", "consent": true, "list": "news", "first_name": "Ann",
                      "campaign": "spring", "topic": null});
    assert_eq!(post_json(&app, json).await.status(), 202);
    drain(&app).await;
    let again = [("first_name", "Other"), ("topic", "Rust")];
    assert_eq!(post_form(&app, &signup("jane@example.com", &again)).await.status(), 303);
    drain(&app).await;

    // Assert
    assert_eq!(stored(&app, "news", "jane@example.com").as_deref(), Some(r#"{"first_name":"Jane","topic":"Go"}"#));
    assert_eq!(stored(&app, "other", "jane@example.com").as_deref(), Some(r#"{"topic":"Go","city":"Köln"}"#));
    assert_eq!(stored(&app, "news", "ann@example.com").as_deref(), Some(r#"{"first_name":"Ann","campaign":"spring"}"#));
}

#[actix_web::test]
async fn a_value_for_one_list_that_the_other_refuses_is_invalid_field_for_the_pair() {
    // Arrange
    let app = app().await;
    let zig = [
        ("email", "jane@example.com"),
        ("consent", "yes"),
        ("list", "news"),
        ("list", "other"),
        ("first_name", "Jane"),
        ("topic", "Zig"),
    ];

    // Act + Assert: Zig is an option of other, not of news
    assert_invalid_field(post_form_json(&app, &zig).await, "topic", "Zig for news and other").await;
    assert_eq!(count(&app, "intake"), 0);
}

// ---------------------------------------------------------------------------------------------
// Where the values are shown

#[actix_web::test]
async fn the_values_reach_the_preference_page_the_privacy_page_export_lookup_and_import_and_no_log_line() {
    // Arrange: jane confirmed with a first name and a topic
    let app = app().await;
    let jane = [("first_name", "Zoë<b>"), ("topic", "Rust")];
    assert_eq!(post_form(&app, &signup("jane@example.com", &jane)).await.status(), 303);
    drain(&app).await;
    let mails = send_mail(&app).await;
    let response = post_token(&app, "/api/confirm", &mails[0].confirm_token()).await;
    assert_eq!(location(&response), "/confirmed?list=news");
    let welcome = send_mail(&app).await;

    // Act
    let (_, preferences) = status_and_body(get(&app, &with_token("/manage", &welcome[0].manage_token())).await).await;
    let (_, privacy) = status_and_body(get(&app, "/privacy?list=news").await).await;
    let export = cli(&app, &["export", "--format", "jsonl"]).await;
    let csv = cli(&app, &["export"]).await;
    let lookup = cli(&app, &["lookup", "--json", "jane@example.com"]).await;
    let text = cli(&app, &["lookup", "jane@example.com"]).await;
    let import_file = app.data_dir().join("in.jsonl");
    std::fs::write(
        &import_file,
        "{\"email\":\"bob@example.com\",\"consent_text\":\"old\",\"fields\":{\"first_name\":\"Bob\"},\"topic\":\"Go\"}\n\
         {\"email\":\"cat@example.com\",\"consent_text\":\"old\",\"first_name\":\"Cat\",\"topic\":\"Perl\"}\n\
         {\"email\":\"dan@example.com\",\"consent_text\":\"old\"}\n",
    )
    .unwrap();
    let import = cli(&app, &["import", "--list", "news", import_file.to_str().unwrap()]).await;

    // Assert: the preference page shows them read-only, escaped, by label
    assert!(preferences.contains("<dt>First name</dt>\n        <dd>Zoë&#60;b&#62;</dd>"), "{preferences}");
    assert!(preferences.contains("<dt>Topic</dt>\n        <dd>Rust</dd>"), "{preferences}");
    assert!(!preferences.contains(r#"name="first_name""#), "read-only: {preferences}");
    // Assert: the privacy page names the labels
    assert!(privacy.contains("The form also asks for First name, Topic and Campaign."), "{privacy}");
    // Assert: export (JSON lines: an object; CSV: the same object in one cell) and lookup
    let record: Value = serde_json::from_slice(&export.stdout).unwrap_or_else(|e| panic!("{e}: {export:?}"));
    assert_eq!(record["fields"], json!({"first_name": "Zoë<b>", "topic": "Rust"}));
    assert!(String::from_utf8_lossy(&csv.stdout).contains(r#","{""first_name"":""Zoë<b>"",""topic"":""Rust""}""#));
    let document: Value = serde_json::from_slice(&lookup.stdout).unwrap_or_else(|e| panic!("{e}: {lookup:?}"));
    assert_eq!(document["rows"][0]["fields"], json!({"first_name": "Zoë<b>", "topic": "Rust"}));
    assert!(String::from_utf8_lossy(&text.stdout).contains("fields                first_name: Zoë<b>, topic: Rust"));
    // Assert: import takes the fields object or a column named like the field, checks each value
    // by its rule (cat's topic is no option: refused), and a missing required one is no error
    assert_eq!(import.status.code(), Some(0), "{}", String::from_utf8_lossy(&import.stderr));
    let stderr = String::from_utf8_lossy(&import.stderr);
    assert!(stderr.contains("line 2") && stderr.contains("field topic is not one of its options"), "{stderr}");
    assert!(!stderr.contains("Perl"), "the refusal quotes no value: {stderr}");
    assert_eq!(stored(&app, "news", "bob@example.com").as_deref(), Some(r#"{"first_name":"Bob","topic":"Go"}"#));
    assert_eq!(stored(&app, "news", "dan@example.com"), None);
    assert_eq!(count(&app, "subscribers"), 3, "jane, bob and dan");
}

#[tokio::test]
async fn no_log_line_of_the_server_holds_a_value_accepted_or_refused() {
    // Arrange: the real binary
    let dir = tempfile::tempdir().unwrap();
    let config = process::config(dir.path(), 1000, LISTS);
    let mut server = process::serve(&config);
    let client = process::client();

    // Act: an accepted signup and a refused one, each with values nobody else would send
    let accepted = [("email", "jane@example.com"), ("consent", "yes"), ("list", "news"), ("first_name", "Quixotic")];
    let refused = [("email", "ann@example.com"), ("consent", "yes"), ("list", "news"), ("first_name", "Wanderlust99")];
    let first = client.post(server.url("/api/signup")).form(&accepted).send().await.unwrap();
    let second = client.post(server.url("/api/signup")).form(&refused).send().await.unwrap();
    let database = dir.path().join("data/signupd.sqlite3");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while process::count(&process::read_only(&database), "SELECT count(*) FROM subscribers") == 0 {
        assert!(std::time::Instant::now() < deadline, "the signup was not applied");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server.sigterm();
    server.exit_within(std::time::Duration::from_secs(10)).await.expect("serve exits after SIGTERM");

    // Assert
    assert_eq!((first.status().as_u16(), second.status().as_u16()), (303, 400));
    let log = server.log();
    assert!(log.contains("signup"), "the log has the signup's lines: {log}");
    assert!(!log.contains("Quixotic") && !log.contains("Wanderlust99"), "{log}");
}

#[actix_web::test]
async fn the_confirmed_event_carries_the_fields_as_an_object_and_an_empty_one_without() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let (app, _) = app_with_hooks("", LISTS, &[("crm", &receiver.url(HOOK_PATH))]).await;

    // Act: one subscriber of news with fields, one of other without any
    for (email, list, extra) in [
        ("jane@example.com", "news", vec![("first_name", "Jane"), ("campaign", "spring")]),
        ("ann@example.com", "other", vec![]),
    ] {
        let mut fields = vec![("email", email), ("consent", "yes"), ("list", list)];
        fields.extend(extra);
        assert_eq!(post_form(&app, &fields).await.status(), 303);
        drain(&app).await;
        let mails = send_mail(&app).await;
        assert_eq!(post_token(&app, "/api/confirm", &mails[0].confirm_token()).await.status(), 303);
        send_mail(&app).await;
    }
    let mut delivered = 0;
    for _ in 0..4 {
        delivered += deliver_events(&app, "crm").await.iter().filter(|o| **o == DeliveryOutcome::Delivered).count();
    }

    // Assert
    assert_eq!(delivered, 2);
    let events: Vec<Value> = receiver.requests().iter().map(|request| request.json()).collect();
    let data = |email: &str| events.iter().find(|event| event["data"]["email"] == email).unwrap()["data"].clone();
    assert_eq!(data("jane@example.com")["fields"], json!({"first_name": "Jane", "campaign": "spring"}));
    assert_eq!(data("ann@example.com")["fields"], json!({}));
}
