//! `POST /api/signup` over real HTTP (docs/http-api.md "Signing up"): the success answers, the honeypot, `Origin`,
//! `return_to`, CORS, the hosted pages, and the one answer for every state of an address.
//! Bad input lives in `signup_input.rs`; rate limits, client IPs and concurrency in
//! `signup_abuse.rs`. The helpers here are shared by all three.

use std::collections::BTreeMap;

use reqwest::{RequestBuilder, Response};
use serde_json::{Value, json};
use signupd::door::signup::{ExecutionOutcome, try_execute_task};

use crate::helpers::{START, TestApp, spawn_app, spawn_app_with};

pub const SIGNUP: &str = "/api/signup";

/// For tests that are not about rate limiting: enough budget for any number of signups.
pub const RAISED_LIMITS: &str = "[signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\n";

/// Two lists: `news` accepts posts from one other site, `other` names no origins.
pub const WITH_ORIGINS: &str = "[signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\n\
    [[lists]]\nid = \"news\"\nallowed_origins = [\"https://site.example\"]\n\
    [[lists]]\nid = \"other\"\n";

// ---------------------------------------------------------------------------------------------
// Requests

/// A urlencoded body, encoded the way a browser encodes a form.
pub fn form_body(fields: &[(&str, &str)]) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in fields {
        serializer.append_pair(key, value);
    }
    serializer.finish()
}

/// A multipart/form-data body built by hand, as a browser sends it: returns the content type
/// (with its boundary) and the bytes.
pub fn multipart_body(fields: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "----signupdTestBoundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (key, value) in fields {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{key}\"\r\n\r\n").as_bytes());
        body.extend_from_slice(value.as_bytes());
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The fields of a valid signup of `email` to `news`.
pub fn valid(email: &str) -> Vec<(&str, &str)> {
    vec![("email", email), ("consent", "yes"), ("list", "news")]
}

pub fn signup_request(app: &TestApp) -> RequestBuilder {
    app.client.post(app.url(SIGNUP))
}

/// A urlencoded post from an HTML client (reqwest's default `Accept: */*`).
pub async fn post_form(app: &TestApp, fields: &[(&str, &str)]) -> Response {
    form_request(app, fields).send().await.unwrap()
}

/// A urlencoded post from a client that asks for JSON.
pub async fn post_form_json(app: &TestApp, fields: &[(&str, &str)]) -> Response {
    form_request(app, fields).header("Accept", "application/json").send().await.unwrap()
}

pub fn form_request(app: &TestApp, fields: &[(&str, &str)]) -> RequestBuilder {
    signup_request(app).header("Content-Type", "application/x-www-form-urlencoded").body(form_body(fields))
}

pub async fn post_json(app: &TestApp, body: Value) -> Response {
    json_request(app, body).send().await.unwrap()
}

pub fn json_request(app: &TestApp, body: Value) -> RequestBuilder {
    signup_request(app).header("Content-Type", "application/json").body(body.to_string())
}

pub fn valid_json(email: &str) -> Value {
    json!({ "email": email, "consent": true, "list": "news" })
}

// ---------------------------------------------------------------------------------------------
// Answers

/// Status, headers (minus the ones that differ per request) and body, for comparing answers.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: BTreeMap<String, Vec<String>>,
    pub body: Vec<u8>,
}

impl Answer {
    pub async fn of(response: Response) -> Self {
        let status = response.status().as_u16();
        let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in response.headers() {
            if matches!(name.as_str(), "date" | "x-request-id") {
                continue;
            }
            headers
                .entry(name.as_str().to_owned())
                .or_default()
                .push(String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
        let body = response.bytes().await.unwrap().to_vec();
        Self { status, headers, body }
    }
}

pub fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// The JSON success answer: 202 with exactly `{"ok":true,"next":"confirm_email"}`.
pub async fn assert_json_accepted(response: Response, case: &str) {
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type").unwrap_or_default();
    let body = response.text().await.unwrap();
    assert_eq!(status, 202, "{case}: status (body {body:?})");
    assert!(content_type.starts_with("application/json"), "{case}: content type {content_type:?}");
    let value: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{case}: {body:?} is not JSON: {e}"));
    assert_eq!(value, json!({"ok": true, "next": "confirm_email"}), "{case}: body");
}

/// The HTML success answer: 303 to `/check-inbox?list=<list>`.
pub fn assert_redirected_to_check_inbox(response: &Response, list: &str, case: &str) {
    assert_eq!(response.status().as_u16(), 303, "{case}: status");
    assert_eq!(
        header(response, "location").as_deref(),
        Some(format!("/check-inbox?list={list}").as_str()),
        "{case}: Location"
    );
}

/// A JSON error: the status and exactly `{"ok":false,"error":"<code>"}`.
pub async fn assert_json_error(response: Response, status: u16, code: &str, case: &str) {
    let actual = response.status().as_u16();
    let body = response.text().await.unwrap();
    assert_eq!(actual, status, "{case}: status (body {body:?})");
    let value: Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{case}: error body {body:?} is not JSON: {e}"));
    assert_eq!(value, json!({"ok": false, "error": code}), "{case}: body");
}

// ---------------------------------------------------------------------------------------------
// Database

pub fn db(app: &TestApp) -> rusqlite::Connection {
    rusqlite::Connection::open(app.state.db.path()).unwrap()
}

pub fn count(app: &TestApp, table: &str) -> i64 {
    db(app).query_row(&format!("SELECT count(*) FROM {table}"), [], |row| row.get(0)).unwrap()
}

pub fn strings(app: &TestApp, sql: &str) -> Vec<String> {
    let conn = db(app);
    let mut statement = conn.prepare(sql).unwrap();
    statement.query_map([], |row| row.get::<_, String>(0)).unwrap().map(Result::unwrap).collect()
}

/// Nothing of the request reached the database: no intake, no subscriber, and (for requests
/// refused before the rate limit, step 5) no counter either.
pub fn assert_nothing_saved(app: &TestApp, counted: bool, case: &str) {
    assert_eq!(count(app, "intake"), 0, "{case}: intake must stay empty");
    assert_eq!(count(app, "subscribers"), 0, "{case}: subscribers must stay empty");
    if !counted {
        assert_eq!(count(app, "rate_limits"), 0, "{case}: refused before the rate limit");
    }
}

/// Applies every queued signup, the way the background worker does.
pub async fn drain(app: &TestApp) {
    for _ in 0..10_000 {
        let outcome = try_execute_task(&app.state.intake()).await.unwrap();
        if matches!(outcome, ExecutionOutcome::EmptyQueue) {
            return;
        }
    }
    panic!("the signup queue never ran empty");
}

// ---------------------------------------------------------------------------------------------
// Success answers

#[actix_web::test]
async fn a_json_signup_is_recorded_before_the_202_and_becomes_a_pending_subscriber() {
    let app = spawn_app().await;

    let response = post_json(&app, json!({"email": "jane@example.com", "consent": true, "list": "news"})).await;

    assert_json_accepted(response, "JSON signup").await;
    let intake = db(&app)
        .query_row("SELECT list_id, email, consent_version, received_at FROM intake", [], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, i64>(3)?))
        })
        .unwrap();
    assert_eq!(intake, ("news".into(), "jane@example.com".into(), "v1".into(), START), "persisted before the answer");

    drain(&app).await;

    assert_eq!(count(&app, "intake"), 0, "the worker consumed the intake");
    assert_eq!(
        strings(&app, "SELECT list_id || ' ' || email || ' ' || status || ' ' || consent_version FROM subscribers"),
        ["news jane@example.com pending v1"]
    );
    assert_eq!(strings(&app, "SELECT o.kind FROM outbox o JOIN subscribers s ON s.id = o.subscriber_id"), ["confirm"]);
}

#[actix_web::test]
async fn a_form_signup_from_a_browser_redirects_to_check_inbox() {
    let app = spawn_app().await;

    let response = post_form(&app, &valid("jane@example.com")).await;

    assert_redirected_to_check_inbox(&response, "news", "form signup");
    assert_eq!(strings(&app, "SELECT email FROM intake"), ["jane@example.com"]);
}

#[actix_web::test]
async fn a_hand_built_multipart_signup_is_accepted_like_a_form() {
    let app = spawn_app().await;
    let (content_type, body) = multipart_body(&valid("jane@example.com"));

    let response = signup_request(&app).header("Content-Type", content_type).body(body).send().await.unwrap();

    assert_redirected_to_check_inbox(&response, "news", "multipart signup");
    assert_eq!(strings(&app, "SELECT email FROM intake"), ["jane@example.com"]);
}

#[actix_web::test]
async fn every_body_encoding_gets_the_answer_its_client_asked_for() {
    struct Case {
        name: &'static str,
        content_type: String,
        body: Vec<u8>,
        accept: Option<&'static str>,
        json_answer: bool,
    }
    let (multipart_type, multipart) = multipart_body(&valid("jane@example.com"));
    let cases = [
        Case {
            name: "form, Accept: application/json",
            content_type: "application/x-www-form-urlencoded".into(),
            body: form_body(&valid("jane@example.com")).into_bytes(),
            accept: Some("application/json"),
            json_answer: true,
        },
        Case {
            name: "form, Accept lists JSON among others",
            content_type: "application/x-www-form-urlencoded".into(),
            body: form_body(&valid("jane@example.com")).into_bytes(),
            accept: Some("text/html;q=0.9, application/json"),
            json_answer: true,
        },
        Case {
            name: "form, Accept: text/html",
            content_type: "application/x-www-form-urlencoded".into(),
            body: form_body(&valid("jane@example.com")).into_bytes(),
            accept: Some("text/html,application/xhtml+xml,*/*;q=0.8"),
            json_answer: false,
        },
        Case {
            name: "multipart, Accept: application/json",
            content_type: multipart_type.clone(),
            body: multipart.clone(),
            accept: Some("application/json"),
            json_answer: true,
        },
        Case {
            name: "JSON body without Accept",
            content_type: "application/json".into(),
            body: valid_json("jane@example.com").to_string().into_bytes(),
            accept: None,
            json_answer: true,
        },
        Case {
            name: "JSON body with a charset",
            content_type: "application/json; charset=utf-8".into(),
            body: valid_json("jane@example.com").to_string().into_bytes(),
            accept: None,
            json_answer: true,
        },
        Case {
            name: "JSON body with consent \"yes\"",
            content_type: "application/json".into(),
            body: json!({"email": "jane@example.com", "consent": "yes", "list": "news"}).to_string().into_bytes(),
            accept: None,
            json_answer: true,
        },
    ];
    for case in cases {
        let app = spawn_app().await;
        let mut request = signup_request(&app).header("Content-Type", case.content_type).body(case.body);
        if let Some(accept) = case.accept {
            request = request.header("Accept", accept);
        }

        let response = request.send().await.unwrap();

        if case.json_answer {
            assert_json_accepted(response, case.name).await;
        } else {
            assert_redirected_to_check_inbox(&response, "news", case.name);
        }
        assert_eq!(count(&app, "intake"), 1, "{}: recorded", case.name);
    }
}

#[actix_web::test]
async fn the_list_may_be_omitted_when_only_one_list_is_configured() {
    let app = spawn_app().await;

    let response = post_form(&app, &[("email", "jane@example.com"), ("consent", "yes")]).await;

    assert_redirected_to_check_inbox(&response, "news", "list omitted");
    assert_eq!(strings(&app, "SELECT list_id FROM intake"), ["news"]);
}

#[actix_web::test]
async fn signup_with_filled_honeypot_saves_nothing() {
    let app = spawn_app().await;
    let mut fields = valid("bot@example.com");
    fields.push(("website", "http://spam.example"));

    let html = post_form(&app, &fields).await;
    let json =
        post_json(&app, json!({"email": "bot@example.com", "consent": true, "list": "news", "website": "x"})).await;

    assert_redirected_to_check_inbox(&html, "news", "honeypot, HTML client");
    assert_json_accepted(json, "honeypot, JSON client").await;
    drain(&app).await;
    assert_nothing_saved(&app, false, "honeypot");
    assert_eq!(count(&app, "outbox"), 0, "no mail for a bot");
}

#[actix_web::test]
async fn the_success_answer_is_the_same_for_unknown_pending_and_confirmed_addresses() {
    // A list of two languages: the answer's language (and its `lang`) comes from the request
    // alone, never from the language an address signed up in before.
    let app = spawn_app_with(&format!("{RAISED_LIMITS}[[lists]]\nid = \"news\"\nlanguages = [\"de\"]\n")).await;
    // Both addresses first become pending subscribers, in German; one is then confirmed behind
    // the app's back, as a click on its confirm link would.
    for email in ["pending@example.com", "confirmed@example.com"] {
        let fields = [valid(email), vec![("lang", "de")]].concat();
        assert_eq!(post_form(&app, &fields).await.status(), 303, "{email}: arrange");
    }
    drain(&app).await;
    db(&app)
        .execute(
            "UPDATE subscribers SET status = 'confirmed', confirmed_at = ?1, confirm_method = 'button' \
             WHERE email = 'confirmed@example.com'",
            [START],
        )
        .unwrap();
    let rows_before =
        strings(&app, "SELECT email || removal_hash || created_at || status FROM subscribers ORDER BY email");

    for (client, json_client) in [("HTML client", false), ("JSON client", true)] {
        let mut answers = Vec::new();
        for (state, email) in [
            ("unknown", format!("unknown-{json_client}@example.com")),
            ("pending", "pending@example.com".to_owned()),
            ("confirmed", "confirmed@example.com".to_owned()),
        ] {
            let response = if json_client {
                post_json(&app, valid_json(&email)).await
            } else {
                post_form(&app, &valid(&email)).await
            };
            answers.push((state, Answer::of(response).await));
        }

        let (_, unknown) = &answers[0];
        assert!(matches!(unknown.status, 202 | 303), "{client}: {unknown:?}");
        if !json_client {
            assert_eq!(unknown.headers["location"], ["/check-inbox?list=news&lang=en"], "the request's language");
        }
        for (state, answer) in &answers[1..] {
            assert_eq!(answer, unknown, "{client}: the answer for a {state} address differs from an unknown one");
        }
    }

    drain(&app).await;
    assert_eq!(
        strings(
            &app,
            "SELECT email || removal_hash || created_at || status FROM subscribers WHERE email NOT LIKE 'unknown-%' ORDER BY email"
        ),
        rows_before,
        "a repeated signup changes neither the removal hash, the creation time nor the status"
    );
    assert_eq!(
        strings(
            &app,
            "SELECT email || ' ' || language FROM subscribers WHERE email NOT LIKE 'unknown-%' ORDER BY email"
        ),
        ["confirmed@example.com de", "pending@example.com de"],
        "a repeated signup in another language keeps the row's language"
    );
    assert_eq!(
        strings(
            &app,
            "SELECT s.email FROM outbox o JOIN subscribers s ON s.id = o.subscriber_id \
             WHERE s.email NOT LIKE 'unknown-%' ORDER BY s.email"
        ),
        ["confirmed@example.com", "pending@example.com"],
        "no second confirmation mail is queued for a pending or confirmed address"
    );
}

#[actix_web::test]
async fn an_accepted_signup_records_the_consent_text_once() {
    let text = "Send me the News digest, nothing else.";
    let app = spawn_app_with(&format!(
        "{RAISED_LIMITS}[[lists]]\nid = \"news\"\nconsent_version = \"v1\"\nconsent_text = \"{text}\"\n"
    ))
    .await;

    for email in ["jane@example.com", "john@example.com"] {
        assert_eq!(post_form(&app, &valid(email)).await.status(), 303, "{email}");
    }
    drain(&app).await;

    let rows = strings(
        &app,
        "SELECT list_id || '|' || consent_version || '|' || consent_text || '|' || text_sha256 FROM consent_texts",
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(rows, [format!("news|v1|{text}|{hex}")]);
}

#[actix_web::test]
async fn a_signup_that_cannot_be_stored_answers_503_with_retry_after() {
    // The last of the signup checks (docs/http-api.md): another process holding the write lock is what a
    // wedged disk looks like.
    let app = spawn_app().await;
    let blocker = db(&app);
    blocker.execute_batch("BEGIN EXCLUSIVE;").unwrap();

    let response = post_form_json(&app, &valid("jane@example.com")).await;

    let retry_after = header(&response, "retry-after");
    assert_json_error(response, 503, "storage_unavailable", "database locked").await;
    assert!(retry_after.is_some(), "503 carries Retry-After");
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_nothing_saved(&app, false, "database locked");
}

// ---------------------------------------------------------------------------------------------
// HTML errors

#[actix_web::test]
async fn html_errors_rerender_the_form_with_the_status_and_the_typed_address() {
    let cases = [
        ("invalid email", valid("jane@@example.com"), 400, "jane@@example.com"),
        ("consent missing", vec![("email", "jane@example.com"), ("list", "news")], 400, "value=\"jane@example.com\""),
        (
            "unknown list",
            vec![("email", "jane@example.com"), ("consent", "yes"), ("list", "nope")],
            400,
            "jane@example.com",
        ),
    ];
    for (name, fields, status, kept) in cases {
        let app = spawn_app().await;
        let form_page = app.client.get(app.url("/")).send().await.unwrap().text().await.unwrap();

        let response = post_form(&app, &fields).await;

        assert_eq!(response.status().as_u16(), status, "{name}");
        let content_type = header(&response, "content-type").unwrap_or_default();
        assert!(content_type.starts_with("text/html"), "{name}: {content_type:?}");
        let body = response.text().await.unwrap();
        assert!(body.contains("action=\"/api/signup\""), "{name}: the form is shown again: {body}");
        assert!(body.contains(kept), "{name}: the typed address {kept:?} is kept: {body}");
        assert_ne!(body, form_page, "{name}: the page explains what went wrong");
        assert_nothing_saved(&app, false, name);
    }
}

#[actix_web::test]
async fn an_html_error_page_escapes_the_typed_address() {
    let cases = [
        ("script tag", "<script>alert(1)</script>@example.com", "<script>alert(1)</script>"),
        ("attribute break-out", "x\"onfocus=\"alert(1)@example.com", "\"onfocus=\""),
        ("single-quoted break-out", "x'onfocus='alert(1)@example.com", "'onfocus='"),
    ];
    for (name, email, raw) in cases {
        let app = spawn_app().await;

        let response = post_form(&app, &valid(email)).await;

        assert_eq!(response.status(), 400, "{name}");
        let body = response.text().await.unwrap();
        assert!(!body.contains(raw), "{name}: {raw:?} came back unescaped: {body}");
        assert!(body.contains("alert(1)"), "{name}: the typed address is kept (escaped): {body}");
    }
    let app = spawn_app().await;
    let body = post_form(&app, &valid("<script>alert(1)</script>@example.com")).await.text().await.unwrap();
    let lower = body.to_ascii_lowercase();
    assert!(
        ["&lt;script", "&#60;script", "&#x3c;script"].iter().any(|entity| lower.contains(entity)),
        "`<` escaped as an entity: {body}"
    );
}

// ---------------------------------------------------------------------------------------------
// Origin

#[actix_web::test]
async fn the_origin_decides_whether_a_post_is_accepted() {
    let cases = [
        ("no Origin", None, "news", Ok(())),
        ("Origin: null counts as absent", Some("null"), "news", Ok(())),
        ("an allowed origin", Some("https://site.example"), "news", Ok(())),
        ("the public_url origin", Some("http://127.0.0.1:8080"), "news", Ok(())),
        ("another origin", Some("https://evil.example"), "news", Err(())),
        ("the allowed host over http", Some("http://site.example"), "news", Err(())),
        ("a look-alike host", Some("https://site.example.evil.com"), "news", Err(())),
        ("the allowed host on another port", Some("https://site.example:8443"), "news", Err(())),
        ("any origin for a list without allowed_origins", Some("https://evil.example"), "other", Ok(())),
    ];
    for (name, origin, list, expected) in cases {
        let app = spawn_app_with(WITH_ORIGINS).await;
        let mut request = json_request(&app, json!({"email": "jane@example.com", "consent": true, "list": list}));
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }

        let response = request.send().await.unwrap();

        match expected {
            Ok(()) => {
                assert_json_accepted(response, name).await;
                assert_eq!(count(&app, "intake"), 1, "{name}: recorded");
            }
            Err(()) => {
                assert_json_error(response, 403, "origin_not_allowed", name).await;
                assert_nothing_saved(&app, false, name);
            }
        }
    }
}

#[actix_web::test]
async fn the_origin_is_checked_before_the_honeypot_and_the_fields() {
    let cases = [
        ("filled honeypot", json!({"email": "jane@example.com", "consent": true, "list": "news", "website": "x"})),
        ("invalid email", json!({"email": "nope", "consent": true, "list": "news"})),
        ("missing consent", json!({"email": "jane@example.com", "list": "news"})),
    ];
    for (name, body) in cases {
        let app = spawn_app_with(WITH_ORIGINS).await;

        let response = json_request(&app, body).header("Origin", "https://evil.example").send().await.unwrap();

        assert_json_error(response, 403, "origin_not_allowed", name).await;
        assert_nothing_saved(&app, false, name);
    }
}

#[actix_web::test]
async fn a_refused_origin_from_a_browser_gets_the_form_with_403() {
    let app = spawn_app_with(WITH_ORIGINS).await;

    let response =
        form_request(&app, &valid("jane@example.com")).header("Origin", "https://evil.example").send().await.unwrap();

    assert_eq!(response.status(), 403);
    assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"));
    assert_nothing_saved(&app, false, "refused origin");
}

// ---------------------------------------------------------------------------------------------
// return_to

#[actix_web::test]
async fn an_allowed_return_to_receives_the_success_with_its_query_kept() {
    let app = spawn_app_with(WITH_ORIGINS).await;
    let mut fields = valid("jane@example.com");
    fields.push(("return_to", "https://site.example/thanks?from=footer#top"));

    let response = post_form(&app, &fields).await;

    assert_eq!(response.status(), 303);
    let location = url::Url::parse(&header(&response, "location").unwrap()).unwrap();
    assert_eq!(location.origin().ascii_serialization(), "https://site.example");
    assert_eq!(location.path(), "/thanks");
    let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    assert!(query.contains(&("from".into(), "footer".into())), "{location}");
    assert!(query.contains(&("signup".into(), "check-inbox".into())), "{location}");
    assert_eq!(count(&app, "intake"), 1);
}

#[actix_web::test]
async fn an_allowed_return_to_receives_errors_with_their_reason() {
    let cases = [
        ("invalid email", valid("not-an-address"), "invalid_email"),
        ("consent missing", vec![("email", "jane@example.com"), ("list", "news")], "consent_required"),
    ];
    for (name, mut fields, reason) in cases {
        let app = spawn_app_with(WITH_ORIGINS).await;
        fields.push(("return_to", "https://site.example/join"));

        let response = post_form(&app, &fields).await;

        assert_eq!(response.status(), 303, "{name}");
        let location = url::Url::parse(&header(&response, "location").unwrap()).unwrap();
        assert_eq!(location.origin().ascii_serialization(), "https://site.example", "{name}");
        assert_eq!(location.path(), "/join", "{name}");
        let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
        assert!(query.contains(&("signup".into(), "error".into())), "{name}: {location}");
        assert!(query.contains(&("reason".into(), reason.into())), "{name}: {location}");
        assert_nothing_saved(&app, false, name);
    }
}

#[actix_web::test]
async fn a_return_to_outside_the_allowed_origins_is_ignored() {
    let targets = [
        "https://evil.example/x",
        "//evil.example",
        "///evil.example",
        "javascript:alert(1)",
        "/relative",
        "http://site.example.evil.com",
        "https://site.example.evil.com/",
        "https://site.example@evil.example/",
        "http://site.example/thanks",
        "https://site.example:8443/thanks",
        "data:text/html,hi",
        "",
    ];
    for target in targets {
        let app = spawn_app_with(WITH_ORIGINS).await;
        let mut fields = valid("jane@example.com");
        fields.push(("return_to", target));

        let response = post_form(&app, &fields).await;

        assert_redirected_to_check_inbox(&response, "news", &format!("return_to {target:?}"));
        assert_eq!(count(&app, "intake"), 1, "return_to {target:?}: the signup itself counts");
    }
}

#[actix_web::test]
async fn an_ignored_return_to_leaves_errors_on_the_hosted_form() {
    let app = spawn_app_with(WITH_ORIGINS).await;
    let mut fields = valid("not-an-address");
    fields.push(("return_to", "https://evil.example/x"));

    let response = post_form(&app, &fields).await;

    assert_eq!(response.status(), 400);
    assert_eq!(header(&response, "location"), None, "never a redirect off-site");
    assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"));
}

#[actix_web::test]
async fn a_json_client_gets_json_even_with_a_return_to() {
    let app = spawn_app_with(WITH_ORIGINS).await;

    let response = post_json(
        &app,
        json!({"email": "jane@example.com", "consent": true, "list": "news", "return_to": "https://site.example/t"}),
    )
    .await;

    assert_json_accepted(response, "JSON with return_to").await;
}

// ---------------------------------------------------------------------------------------------
// CORS

fn preflight(app: &TestApp, origin: &str) -> RequestBuilder {
    app.client
        .request(reqwest::Method::OPTIONS, app.url(SIGNUP))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type")
}

fn header_list_contains(value: Option<String>, wanted: &str) -> bool {
    value.is_some_and(|value| value.split(',').any(|item| item.trim().eq_ignore_ascii_case(wanted)))
}

#[actix_web::test]
async fn a_preflight_from_an_allowed_origin_is_answered() {
    let app = spawn_app_with(WITH_ORIGINS).await;

    let response = preflight(&app, "https://site.example").send().await.unwrap();

    assert!(response.status().is_success(), "{}", response.status());
    assert_eq!(header(&response, "access-control-allow-origin").as_deref(), Some("https://site.example"));
    assert!(header_list_contains(header(&response, "access-control-allow-methods"), "POST"));
    assert!(header_list_contains(header(&response, "access-control-allow-headers"), "content-type"));
    assert!(header_list_contains(header(&response, "vary"), "origin"));
    assert_eq!(header(&response, "access-control-allow-credentials"), None, "no credentials");
    assert_nothing_saved(&app, false, "preflight");
}

#[actix_web::test]
async fn a_preflight_from_another_origin_gets_no_cors_headers() {
    let app = spawn_app_with(WITH_ORIGINS).await;

    for origin in ["https://evil.example", "null", "https://site.example.evil.com"] {
        let response = preflight(&app, origin).send().await.unwrap();

        assert_eq!(header(&response, "access-control-allow-origin"), None, "origin {origin}");
    }
}

#[actix_web::test]
async fn posts_from_an_allowed_origin_carry_cors_headers_on_success_and_error() {
    let cases = [
        ("success", valid_json("jane@example.com"), 202),
        ("error", json!({"email": "nope", "consent": true, "list": "news"}), 400),
    ];
    for (name, body, status) in cases {
        let app = spawn_app_with(WITH_ORIGINS).await;

        let response = json_request(&app, body).header("Origin", "https://site.example").send().await.unwrap();

        assert_eq!(response.status().as_u16(), status, "{name}");
        assert_eq!(header(&response, "access-control-allow-origin").as_deref(), Some("https://site.example"), "{name}");
        assert!(header_list_contains(header(&response, "vary"), "origin"), "{name}");
    }
}

#[actix_web::test]
async fn posts_without_an_allowed_origin_carry_no_cors_headers() {
    let app = spawn_app_with(WITH_ORIGINS).await;

    let response = json_request(&app, json!({"email": "jane@example.com", "consent": true, "list": "other"}))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 202);
    assert_eq!(header(&response, "access-control-allow-origin"), None);
}

// ---------------------------------------------------------------------------------------------
// Hosted pages

/// The byte range of the element whose opening tag starts at `open` (same-name nesting counted).
fn element_end(html: &str, open: usize) -> usize {
    let tag: String = html[open + 1..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
    if tag.eq_ignore_ascii_case("input") {
        return open + html[open..].find('>').unwrap();
    }
    let (opening, closing) = (format!("<{tag}"), format!("</{tag}"));
    let mut depth = 0usize;
    let mut at = open;
    loop {
        let next_open = html[at..].find(&opening).map(|i| i + at);
        let next_close = html[at..].find(&closing).map(|i| i + at);
        match (next_open, next_close) {
            (Some(o), Some(c)) if o < c => {
                depth += 1;
                at = o + opening.len();
            }
            (_, Some(c)) => {
                depth -= 1;
                if depth == 0 {
                    return c;
                }
                at = c + closing.len();
            }
            _ => panic!("<{tag}> at {open} is never closed"),
        }
    }
}

/// The whole tag around position `at`.
fn tag_around(html: &str, at: usize) -> &str {
    let start = html[..at].rfind('<').unwrap();
    let end = at + html[at..].find('>').unwrap();
    &html[start..=end]
}

fn assert_signup_form(page: &str, consent_text: &str, case: &str) {
    assert!(page.contains("action=\"/api/signup\""), "{case}: the form posts to /api/signup: {page}");
    assert!(page.to_ascii_lowercase().contains("method=\"post\""), "{case}: a POST form");
    let email = tag_around(page, page.find("name=\"email\"").expect("an email input"));
    assert!(email.starts_with("<input"), "{case}: {email}");
    let consent = tag_around(page, page.find("name=\"consent\"").expect("a consent input"));
    assert!(consent.contains("type=\"checkbox\""), "{case}: {consent}");
    assert!(consent.contains("value=\"yes\""), "{case}: {consent}");
    assert!(page.contains(consent_text), "{case}: the list's consent text is shown");

    let at = page.find("name=\"website\"").expect("the honeypot input");
    let honeypot = tag_around(page, at);
    assert!(honeypot.starts_with("<input"), "{case}: {honeypot}");
    assert!(honeypot.contains("tabindex=\"-1\""), "{case}: {honeypot}");
    assert!(honeypot.contains("autocomplete=\"off\""), "{case}: {honeypot}");
    let hidden = page[..at]
        .match_indices("aria-hidden=\"true\"")
        .map(|(i, _)| page[..i].rfind('<').unwrap())
        .any(|open| element_end(page, open) > at);
    assert!(hidden, "{case}: the honeypot sits inside an aria-hidden element: {page}");
}

#[actix_web::test]
async fn the_hosted_form_has_the_fields_the_spec_names() {
    let text = "Send me the News digest, nothing else.";
    let app = spawn_app_with(&format!("[[lists]]\nid = \"news\"\nconsent_text = \"{text}\"\n")).await;

    for path in ["/", "/signup?list=news"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();

        assert_eq!(response.status(), 200, "{path}");
        assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"), "{path}");
        assert_signup_form(&response.text().await.unwrap(), text, path);
    }
}

#[actix_web::test]
async fn the_signup_page_shows_the_named_list() {
    let app = spawn_app_with(
        "[[lists]]\nid = \"news\"\nconsent_text = \"Send me news.\"\n\
         [[lists]]\nid = \"other\"\nconsent_text = \"Send me the other thing.\"\n",
    )
    .await;

    let page = app.client.get(app.url("/signup?list=other")).send().await.unwrap().text().await.unwrap();

    assert_signup_form(&page, "Send me the other thing.", "/signup?list=other");
    assert!(!page.contains("Send me news."), "only the named list's text");
}

#[actix_web::test]
async fn the_signup_page_of_an_unknown_list_is_404() {
    let app = spawn_app().await;

    let response = app.client.get(app.url("/signup?list=nope")).send().await.unwrap();

    assert_eq!(response.status(), 404);
}

#[actix_web::test]
async fn the_check_inbox_page_is_served() {
    let app = spawn_app().await;

    let response = app.client.get(app.url("/check-inbox?list=news")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"));
}

#[actix_web::test]
async fn every_html_response_carries_the_security_headers() {
    const EXPECTED: &[(&str, &str)] = &[
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("x-robots-tag", "noindex, nofollow"),
        ("x-content-type-options", "nosniff"),
        (
            "content-security-policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    ];
    let app = spawn_app().await;
    let cases = [
        ("GET /", app.client.get(app.url("/"))),
        ("GET /signup?list=news", app.client.get(app.url("/signup?list=news"))),
        ("GET /check-inbox?list=news", app.client.get(app.url("/check-inbox?list=news"))),
        ("POST /api/signup, invalid email", form_request(&app, &valid("nope"))),
        ("POST /api/signup, consent missing", form_request(&app, &[("email", "jane@example.com"), ("list", "news")])),
    ];
    for (name, request) in cases {
        let response = request.send().await.unwrap();

        assert!(
            header(&response, "content-type").unwrap_or_default().starts_with("text/html"),
            "{name}: an HTML response"
        );
        for (header_name, value) in EXPECTED {
            assert_eq!(header(&response, header_name).as_deref(), Some(*value), "{name}: {header_name}");
        }
    }
}

#[actix_web::test]
async fn the_stylesheet_is_served_as_css() {
    let app = spawn_app().await;

    let response = app.client.get(app.url("/static/style.css")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/css"));
    assert!(!response.text().await.unwrap().trim().is_empty());
}
