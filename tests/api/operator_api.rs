//! The operator API under `/api/v1/` on the real server: each endpoint without a token, with a
//! wrong one, with one lacking the scope and with the right one; what each call reads or
//! changes in the real SQLite file; hostile queries and bodies answered with their exact status
//! and nothing written; the windows, also under concurrent requests; and the audit entry every
//! call appends, which names the token and never the address.

use std::path::PathBuf;

use reqwest::{Method, RequestBuilder, Response};
use serde_json::{Value, json};
use signupd::storage::suppressions;
use tempfile::TempDir;

use crate::confirm::{confirmed_and_welcomed, deliver, signed_up_and_mailed};
use crate::helpers::{TestApp, spawn_app_with};
use crate::signup::{RAISED_LIMITS, count, db, drain, form_body};

const READER: &str = "reader-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const WRITER: &str = "writer-token-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const ADMIN: &str = "admin-token-cccccccccccccccccccccccccccccccccccccccccccc";
const WRONG: &str = "wrong-token-dddddddddddddddddddddddddddddddddddddddddddd";

/// An audit log row: actor, action, list, count, address hash.
type AuditRow = (String, String, Option<String>, Option<i64>, Option<String>);

struct Api {
    app: TestApp,
    _tokens: TempDir,
}

/// A server with three tokens: `reader` (read), `writer` (write), `ops` (admin), and the lists
/// `news` and `other`.
async fn api() -> Api {
    api_with("").await
}

/// [`api`] with `extra` configuration before the tokens.
async fn api_with(extra: &str) -> Api {
    let tokens = tempfile::tempdir().unwrap();
    let file = |name: &str, token: &str| -> PathBuf {
        let path = tokens.path().join(name);
        std::fs::write(&path, format!("{token}\n")).unwrap();
        path
    };
    let entries = [("reader", READER, "read"), ("writer", WRITER, "write"), ("ops", ADMIN, "admin")]
        .map(|(name, token, scope)| {
            format!(
                "[[api_tokens]]\nname = \"{name}\"\ntoken_file = {:?}\nscopes = [\"{scope}\"]\n",
                file(name, token).display().to_string()
            )
        })
        .join("");
    let lists = "[[lists]]\nid = \"news\"\nname = \"News\"\nconsent_text = \"News, now and then.\"\n[[lists]]\nid = \"other\"\n";
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{extra}{entries}{lists}")).await;
    Api { app, _tokens: tokens }
}

impl Api {
    fn request(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let request = self.app.client.request(method, self.app.url(path));
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn get(&self, path: &str, token: &str) -> Response {
        self.request(Method::GET, path, Some(token)).send().await.unwrap()
    }

    /// The audit log's rows: actor, action, list, count, address hash.
    fn audit(&self) -> Vec<AuditRow> {
        let conn = db(&self.app);
        let mut statement =
            conn.prepare("SELECT actor, action, list_id, count, address_hash FROM audit_log ORDER BY id").unwrap();
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn hash(&self, email: &str) -> String {
        suppressions::every_list_hash(&self.app.state.secrets.hash_key, email)
    }
}

async fn json_of(response: Response, status: u16, case: &str) -> Value {
    assert_eq!(response.status().as_u16(), status, "{case}");
    response.json().await.unwrap_or_else(|error| panic!("{case}: not JSON: {error}"))
}

async fn assert_error(response: Response, status: u16, code: &str, case: &str) -> Value {
    let body = json_of(response, status, case).await;
    assert_eq!(body["ok"], false, "{case}: {body}");
    assert_eq!(body["error"], code, "{case}: {body}");
    body
}

/// Every endpoint, with the scope it needs.
fn endpoints() -> Vec<(Method, &'static str, &'static str)> {
    vec![
        (Method::GET, "/api/v1/subscribers?email=ann@example.com", "read"),
        (Method::GET, "/api/v1/export", "read"),
        (Method::GET, "/api/v1/stats", "read"),
        (Method::DELETE, "/api/v1/subscribers?email=ann@example.com", "write"),
        (Method::POST, "/api/v1/suppressions", "write"),
        (Method::POST, "/api/v1/import?list=news", "write"),
    ]
}

fn body_for(method: &Method, path: &str, request: RequestBuilder) -> RequestBuilder {
    match (method, path) {
        (&Method::POST, "/api/v1/suppressions") => {
            request.header("Content-Type", "application/json").body(r#"{"email":"zed@example.com"}"#)
        }
        (&Method::POST, _) => request
            .header("Content-Type", "application/x-ndjson")
            .body("{\"email\":\"imp@example.com\",\"consent_text\":\"Yes.\"}\n"),
        _ => request,
    }
}

#[actix_web::test]
async fn without_a_configured_token_every_api_path_is_not_found() {
    let app = spawn_app_with("").await;
    for (method, path, _) in endpoints() {
        let response = app.client.request(method.clone(), app.url(path)).bearer_auth(READER).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 404, "{method} {path}");
    }
}

#[actix_web::test]
async fn each_endpoint_refuses_no_token_a_wrong_one_and_a_missing_scope_and_answers_the_right_one() {
    let api = api().await;
    for (method, path, scope) in endpoints() {
        let case = format!("{method} {path}");
        for (variant, request) in [
            ("no token", api.request(method.clone(), path, None)),
            ("wrong token", api.request(method.clone(), path, Some(WRONG))),
            ("Basic instead of Bearer", api.request(method.clone(), path, None).basic_auth("ops", Some(ADMIN))),
            ("a token cut short", api.request(method.clone(), path, Some(&ADMIN[..ADMIN.len() - 1]))),
            ("no scheme", api.request(method.clone(), path, None).header("Authorization", ADMIN)),
            (
                "another scheme",
                api.request(method.clone(), path, None).header("Authorization", format!("Token {ADMIN}")),
            ),
        ] {
            let response = body_for(&method, path, request).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 401, "{case}: {variant}");
            assert_eq!(
                response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()),
                Some("Bearer realm=\"signupd\""),
                "{case}: {variant}"
            );
            assert!(response.bytes().await.unwrap().is_empty(), "{case}: {variant}: nothing else said");
        }
        // Six failed authentications an endpoint: a new window for each, below the client's 20.
        api.app.clock.advance(std::time::Duration::from_secs(signupd::operator::api::limits::WINDOW_SECS as u64));
        let (lacking, holding) = if scope == "read" { (WRITER, READER) } else { (READER, WRITER) };
        let response = body_for(&method, path, api.request(method.clone(), path, Some(lacking))).send().await.unwrap();
        let body = assert_error(response, 403, "forbidden", &format!("{case}: without the scope")).await;
        assert!(body["message"].as_str().unwrap().contains(scope), "{case}: {body}");
        for token in [holding, ADMIN] {
            let response =
                body_for(&method, path, api.request(method.clone(), path, Some(token))).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200, "{case}: with the scope");
        }
    }
    // A 401 is not audited (nobody made it); a 403 is, under the token that was refused, and
    // each answered call by its token.
    let audit = api.audit();
    let actors: Vec<&str> = audit.iter().map(|(actor, ..)| actor.as_str()).collect();
    assert_eq!(actors.len(), 18, "{audit:?}");
    assert_eq!(actors.iter().filter(|actor| **actor == "ops").count(), 6, "{audit:?}");
    let forbidden: Vec<(&str, &str)> = audit
        .iter()
        .filter(|(_, action, ..)| action.ends_with("_forbidden"))
        .map(|(actor, action, ..)| (actor.as_str(), action.as_str()))
        .collect();
    assert_eq!(
        forbidden,
        [
            ("writer", "lookup_forbidden"),
            ("writer", "export_forbidden"),
            ("writer", "stats_forbidden"),
            ("reader", "remove_forbidden"),
            ("reader", "suppress_forbidden"),
            ("reader", "import_forbidden"),
        ],
        "every 403 audited under the token refused and what it tried"
    );
    assert!(
        audit
            .iter()
            .filter(|(_, action, ..)| action.ends_with("_forbidden"))
            .all(|(.., count, hash)| count.is_none() && hash.is_none()),
        "a refused call names no address: {audit:?}"
    );
}

#[actix_web::test]
async fn a_lookup_answers_the_record_of_each_list_and_audits_the_hash_not_the_address() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    let response = app
        .client
        .post(app.url("/api/signup"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_body(&[("email", "ann@example.com"), ("consent", "yes"), ("list", "other")]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    drain(app).await;
    let before = count(app, "subscribers");

    let response = api.get("/api/v1/subscribers?email=Ann@Example.com", READER).await;
    assert_eq!(response.headers().get("cache-control").unwrap(), "no-store", "an answer that names an address");
    let all = json_of(response, 200, "lookup").await;
    assert_eq!(all["email"], "ann@example.com");
    assert_eq!(all["address_hash"], api.hash("ann@example.com"));
    let lists: Vec<(&str, &str)> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["list"].as_str().unwrap(), row["status"].as_str().unwrap()))
        .collect();
    assert_eq!(lists.len(), 2, "{all}");
    assert!(lists.contains(&("news", "confirmed")) && lists.contains(&("other", "pending")), "{lists:?}");
    let news = all["rows"].as_array().unwrap().iter().find(|row| row["list"] == "news").unwrap();
    assert_eq!(news["consent_text"], "News, now and then.");
    assert_eq!(news["confirm_method"], "button");
    assert_eq!(all["queued_mail"].as_array().unwrap().len(), 1, "the pending row's confirmation: {all}");

    let one = json_of(api.get("/api/v1/subscribers?email=ann@example.com&list=other", ADMIN).await, 200, "list").await;
    assert_eq!(one["rows"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["rows"][0]["list"], "other");
    assert_eq!(one["queued_mail"].as_array().unwrap().len(), 1, "{one}");

    let nobody = json_of(api.get("/api/v1/subscribers?email=nobody@example.com", READER).await, 200, "unknown").await;
    for field in ["rows", "signups_waiting", "queued_mail", "queued_events", "suppressions"] {
        assert_eq!(nobody[field], json!([]), "{field}: {nobody}");
    }

    assert_eq!(count(app, "subscribers"), before, "a lookup changes nothing");
    let audit = api.audit();
    assert_eq!(
        audit,
        [
            ("reader".into(), "lookup".into(), None, Some(2), Some(api.hash("ann@example.com"))),
            ("ops".into(), "lookup".into(), Some("other".into()), Some(1), Some(api.hash("ann@example.com"))),
            ("reader".into(), "lookup".into(), None, Some(0), Some(api.hash("nobody@example.com"))),
        ]
    );
    let text = format!("{audit:?}");
    assert!(!text.contains("ann@") && !text.contains("example.com"), "no address in the audit log: {text}");
}

#[actix_web::test]
async fn hostile_queries_are_answered_exactly_and_change_nothing() {
    let api = api().await;
    let app = &api.app;
    signed_up_and_mailed(app, "ann@example.com").await;
    let snapshot = || (count(app, "subscribers"), count(app, "suppressions"), count(app, "audit_log"));
    let before = snapshot();
    for (method, path, status, code) in [
        (Method::GET, "/api/v1/subscribers", 400, "invalid_email"),
        (Method::GET, "/api/v1/subscribers?email=not-an-address", 400, "invalid_email"),
        (Method::GET, "/api/v1/subscribers?email=ann@example.com&list=nope", 400, "unknown_list"),
        (Method::DELETE, "/api/v1/subscribers?email=%00ann@example.com", 400, "invalid_email"),
        (Method::DELETE, "/api/v1/subscribers?email=ann@example.com&reason=bounced", 400, "invalid_reason"),
        (Method::DELETE, "/api/v1/subscribers?email=ann@example.com&list=../news", 400, "unknown_list"),
        (Method::GET, "/api/v1/export?status=everything", 400, "invalid_status"),
        (Method::GET, "/api/v1/export?since=yesterday", 400, "invalid_since"),
        (Method::GET, "/api/v1/export?list=nope", 400, "unknown_list"),
        (Method::PUT, "/api/v1/subscribers", 405, "method_not_allowed"),
        (Method::GET, "/api/v1/import", 405, "method_not_allowed"),
        (Method::GET, "/api/v1/nothing-here", 404, "not_found"),
    ] {
        let case = format!("{method} {path}");
        let response = api.request(method, path, Some(ADMIN)).send().await.unwrap();
        let allow = response.headers().get("allow").map(|value| value.to_str().unwrap().to_owned());
        let expected_allow = match (status, path) {
            (405, "/api/v1/subscribers") => Some("GET, DELETE".to_owned()),
            (405, _) => Some("POST".to_owned()),
            _ => None,
        };
        assert_eq!(allow, expected_allow, "{case}: Allow");
        assert_eq!(response.headers().get("cache-control").unwrap(), "no-store", "{case}");
        let body = assert_error(response, status, code, &case).await;
        let message = body["message"].as_str().unwrap();
        assert!(!message.contains("not-an-address") && !message.contains("ann@"), "{case}: {message}");
    }
    for (content_type, body, status, code) in [
        ("application/json", "not json", 400, "invalid_body"),
        ("application/json", r#"{"email":"ann@example.com","extra":1}"#, 400, "invalid_body"),
        ("application/json", r#"{"email":["ann@example.com"]}"#, 400, "invalid_body"),
        ("application/json", r#"{"list":"news"}"#, 400, "invalid_email"),
        ("application/json", r#"{"email":"ann@example.com","reason":"complained"}"#, 400, "invalid_reason"),
        ("application/json", r#"{"email":"ann@example.com","list":"nope"}"#, 400, "unknown_list"),
        ("text/plain", r#"{"email":"ann@example.com"}"#, 415, "unsupported_media_type"),
    ] {
        let case = format!("suppressions {content_type} {body}");
        let request = api.request(Method::POST, "/api/v1/suppressions", Some(WRITER));
        let response = request.header("Content-Type", content_type).body(body).send().await.unwrap();
        let answer = assert_error(response, status, code, &case).await;
        assert!(!answer["message"].as_str().unwrap().contains("ann@"), "{case}: {answer}");
    }
    let huge = format!("{{\"email\":\"ann@example.com\",\"list\":\"{}\"}}", "x".repeat(5000));
    let request = api.request(Method::POST, "/api/v1/suppressions", Some(WRITER));
    let response = request.header("Content-Type", "application/json").body(huge).send().await.unwrap();
    assert_error(response, 413, "payload_too_large", "an oversized suppression").await;
    assert_eq!(snapshot(), before, "nothing written, not even an audit entry");
}

#[actix_web::test]
async fn a_removal_removes_the_row_everywhere_keeps_its_suppression_and_says_what_it_removed() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    signed_up_and_mailed(app, "bob@example.com").await;

    let path = "/api/v1/subscribers?email=ann@example.com";
    let body = json_of(api.request(Method::DELETE, path, Some(WRITER)).send().await.unwrap(), 200, "remove").await;
    assert_eq!(body["removed"], json!([{"list": "news", "reason": "unsubscribed"}]));
    let again = json_of(api.request(Method::DELETE, path, Some(WRITER)).send().await.unwrap(), 200, "again").await;
    assert_eq!(again["removed"], json!([]), "a repeat finds nothing and is harmless");
    let pending = "/api/v1/subscribers?email=bob@example.com&list=news&reason=not_me";
    let body = json_of(api.request(Method::DELETE, pending, Some(ADMIN)).send().await.unwrap(), 200, "pending").await;
    assert_eq!(body["removed"], json!([{"list": "news", "reason": "not_me"}]));

    assert_eq!(count(app, "subscribers"), 0);
    let reasons = crate::signup::strings(app, "SELECT reason FROM suppressions ORDER BY reason");
    assert_eq!(reasons, ["not_me", "unsubscribed"]);
    // New signups are answered as always: the unsubscribed address starts a new double opt-in,
    // the one removed as `not_me` is never mailed again.
    for (email, mails) in [("ann@example.com", 1), ("bob@example.com", 0)] {
        let response = app
            .client
            .post(app.url("/api/signup"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(&[("email", email), ("consent", "yes"), ("list", "news")]))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 303, "{email}");
        drain(app).await;
        assert_eq!(deliver(app).await.len(), mails, "{email} after its removal");
    }
    let audit: Vec<(String, String, Option<i64>)> =
        api.audit().into_iter().map(|(actor, action, _, count, _)| (actor, action, count)).collect();
    assert_eq!(
        audit,
        [
            ("writer".into(), "remove".into(), Some(1)),
            ("writer".into(), "remove".into(), Some(0)),
            ("ops".into(), "remove".into(), Some(1)),
        ]
    );
}

#[actix_web::test]
async fn a_suppression_holds_on_lists_without_a_row_and_removes_the_rows_there_are() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    let suppress = |body: Value| {
        api.request(Method::POST, "/api/v1/suppressions", Some(WRITER))
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
    };
    let body = json_of(suppress(json!({"email": "ann@example.com"})).await.unwrap(), 200, "ann").await;
    assert_eq!(body["suppressed"], json!(["news", "other"]));
    assert_eq!(body["removed"], json!([{"list": "news", "reason": "unsubscribed"}]));
    let body = json_of(
        suppress(json!({"email": "zed@example.com", "list": "other", "reason": "not_me"})).await.unwrap(),
        200,
        "zed",
    )
    .await;
    assert_eq!(body["suppressed"], json!(["other"]));
    assert_eq!(body["removed"], json!([]));
    assert_eq!(count(app, "subscribers"), 0);
    assert_eq!(count(app, "suppressions"), 3, "ann on both lists, zed on other");
    let hash = suppressions::hash(&app.state.secrets.hash_key, "other", "zed@example.com");
    let reason: String =
        db(app).query_row("SELECT reason FROM suppressions WHERE hash = ?1", [hash], |row| row.get(0)).unwrap();
    assert_eq!(reason, "not_me");
    // On a list it was suppressed on, `unsubscribed` asks for a new double opt-in, `not_me`
    // is never mailed again.
    for (email, list, mails) in [("zed@example.com", "other", 0), ("ann@example.com", "other", 1)] {
        let response = app
            .client
            .post(app.url("/api/signup"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(&[("email", email), ("consent", "yes"), ("list", list)]))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 303, "{email}");
        drain(app).await;
        assert_eq!(deliver(app).await.len(), mails, "{email} on {list}");
    }
}

#[actix_web::test]
async fn the_export_streams_the_subscribers_as_json_lines_with_working_unsubscribe_links() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    signed_up_and_mailed(app, "bob@example.com").await;

    let response = api.get("/api/v1/export", READER).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers().get("content-type").unwrap(), "application/x-ndjson");
    let text = response.text().await.unwrap();
    let records: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(records.len(), 1, "confirmed only by default: {text}");
    assert_eq!(records[0]["email"], "ann@example.com");
    assert_eq!(records[0]["status"], "confirmed");
    let unsubscribe = records[0]["unsubscribe_url"].as_str().unwrap();
    // The tests' public URL; the server itself listens on a port of its own.
    let path = unsubscribe.strip_prefix("http://127.0.0.1:8080").unwrap_or_else(|| panic!("{unsubscribe}"));
    let response = app
        .client
        .post(app.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "the exported link unsubscribes: {}", response.status());

    let all = api.get("/api/v1/export?status=all&list=news&since=2020-01-01", ADMIN).await.text().await.unwrap();
    let emails: Vec<String> = all
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["email"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(emails, ["bob@example.com"], "ann unsubscribed through the exported link: {all}");
    let pending = api.get("/api/v1/export?list=other&status=pending", READER).await.text().await.unwrap();
    assert_eq!(pending, "", "no rows on other");
    let audit: Vec<(String, String, Option<String>)> =
        api.audit().into_iter().map(|(actor, action, list, ..)| (actor, action, list)).collect();
    assert_eq!(
        audit,
        [
            ("reader".into(), "export".into(), None),
            ("ops".into(), "export".into(), Some("news".into())),
            ("reader".into(), "export".into(), Some("other".into())),
        ]
    );
}

#[actix_web::test]
async fn an_export_of_many_rows_arrives_whole() {
    let api = api().await;
    let app = &api.app;
    let lines: String =
        (0..3000).map(|i| format!("{{\"email\":\"user{i}@example.com\",\"consent_text\":\"Yes.\"}}\n")).collect();
    let request = api.request(Method::POST, "/api/v1/import?list=news", Some(WRITER));
    let body = json_of(
        request.header("Content-Type", "application/x-ndjson").body(lines).send().await.unwrap(),
        200,
        "import",
    )
    .await;
    assert_eq!(body["imported"], 3000);
    let text = api.get("/api/v1/export", READER).await.text().await.unwrap();
    let mut emails: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["email"].as_str().unwrap().to_owned())
        .collect();
    emails.sort();
    emails.dedup();
    assert_eq!(emails.len(), 3000, "every record once, over several chunks ({} bytes)", text.len());
    assert_eq!(count(app, "subscribers"), 3000);
}

#[actix_web::test]
async fn an_import_takes_json_lines_as_the_command_does_and_a_dry_run_writes_nothing() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    let lines = "{\"email\":\"new@example.com\",\"source\":\"crm\"}\n\
                 {\"email\":\"ann@example.com\"}\n\
                 {\"email\":\"not an address\"}\n\
                 this is not json\n\
                 {\"email\":\"old@example.com\",\"confirmed_at\":\"2025-03-01T09:30:00Z\",\"consent_text\":\"Old wording.\"}\n";
    let import = |query: &str, token: &str, content_type: &str, body: String| {
        api.request(Method::POST, &format!("/api/v1/import?{query}"), Some(token))
            .header("Content-Type", content_type)
            .body(body)
            .send()
    };
    let query = "list=news&consent_text=Send%20me%20news.&dry_run=true";
    let dry = json_of(import(query, WRITER, "application/x-ndjson", lines.into()).await.unwrap(), 200, "dry run").await;
    assert_eq!(
        (dry["dry_run"].clone(), dry["imported"].clone(), dry["existing"].clone()),
        (json!(true), json!(2), json!(1))
    );
    assert_eq!(dry["refused"], 2, "{dry}");
    assert_eq!(count(app, "subscribers"), 1, "a dry run writes nothing");

    let query = "list=news&consent_text=Send%20me%20news.";
    let body = json_of(import(query, ADMIN, "application/jsonl", lines.into()).await.unwrap(), 200, "import").await;
    assert_eq!(
        (body["imported"].clone(), body["existing"].clone(), body["refused"].clone()),
        (json!(2), json!(1), json!(2))
    );
    let refusals: Vec<&str> = body["refusals"].as_array().unwrap().iter().map(|line| line.as_str().unwrap()).collect();
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(refusals[0].starts_with("line 3: refused") && refusals[1].starts_with("line 4: refused"), "{refusals:?}");
    assert!(!refusals.iter().any(|line| line.contains("not an address")), "nothing quoted: {refusals:?}");
    let rows = crate::signup::strings(
        app,
        "SELECT email || ' ' || confirm_method || ' ' || coalesce(source, '-') FROM subscribers ORDER BY email",
    );
    assert_eq!(rows, ["ann@example.com button -", "new@example.com import crm", "old@example.com import -"]);
    assert!(deliver(app).await.is_empty(), "an import mails nothing");

    let snapshot = || (count(app, "subscribers"), count(app, "audit_log"));
    let before = snapshot();
    for (query, content_type, body, status, code) in [
        ("list=news", "application/json", lines.to_owned(), 415, "unsupported_media_type"),
        ("", "application/x-ndjson", lines.to_owned(), 400, "unknown_list"),
        ("list=nope", "application/x-ndjson", lines.to_owned(), 400, "unknown_list"),
        (
            "list=news&consent_version=bad%20version",
            "application/x-ndjson",
            lines.to_owned(),
            400,
            "invalid_consent_version",
        ),
        ("list=news&consent_text=", "application/x-ndjson", lines.to_owned(), 400, "invalid_consent_text"),
        ("list=news", "application/x-ndjson", "x".repeat(8 * 1024 * 1024 + 1), 413, "payload_too_large"),
    ] {
        let case = format!("import {query} {content_type}");
        assert_error(import(query, WRITER, content_type, body).await.unwrap(), status, code, &case).await;
    }
    assert_eq!(snapshot(), before, "refused imports write nothing");
    // Regression: the dry run told a write token which addresses exist, unaudited.
    let audit: Vec<(String, String, Option<String>, Option<i64>)> =
        api.audit().into_iter().map(|(actor, action, list, count, _)| (actor, action, list, count)).collect();
    assert_eq!(
        audit,
        [
            ("writer".into(), "import_dry_run".into(), Some("news".into()), Some(5)),
            ("ops".into(), "import".into(), Some("news".into()), Some(2))
        ],
        "the dry run is audited with every record it looked at; the import with those imported"
    );
}

#[actix_web::test]
async fn stats_answer_the_figures_of_each_list() {
    let api = api().await;
    let app = &api.app;
    confirmed_and_welcomed(app, "ann@example.com").await;
    signed_up_and_mailed(app, "bob@example.com").await;
    let stats = json_of(api.get("/api/v1/stats", READER).await, 200, "stats").await;
    let news = stats["lists"].as_array().unwrap().iter().find(|list| list["id"] == "news").unwrap();
    assert_eq!((news["pending"].clone(), news["confirmed"].clone()), (json!(1), json!(1)), "{stats}");
    assert_eq!(stats["mail_budget"]["max_per_hour"], app.state.config.mail.max_mails_per_hour);
    assert_eq!(api.audit().last().map(|entry| entry.1.clone()), Some("stats".into()));
}

#[actix_web::test]
async fn thirty_wrong_tokens_from_one_client_leave_the_right_token_served_and_the_wrong_one_refused() {
    // Regression: the failures' window was checked before the token, so 20 wrong
    // tokens from a shared egress address locked every tool behind it out for a minute.
    let api = api().await;
    let failures = signupd::operator::api::limits::FAILURES_PER_CLIENT as usize;
    let mut statuses = Vec::new();
    for _ in 0..30 {
        statuses.push(api.get("/api/v1/stats", WRONG).await.status().as_u16());
    }
    let expected: Vec<u16> = (0..30).map(|attempt| if attempt < failures { 401 } else { 429 }).collect();
    assert_eq!(statuses, expected, "401 until the client's failures fill their window, then 429");

    for token in [READER, ADMIN] {
        let response = api.get("/api/v1/stats", token).await;
        assert_eq!(response.status().as_u16(), 200, "a valid token is served whatever its network did");
    }
    let response = api.get("/api/v1/subscribers?email=ann@example.com", READER).await;
    assert_eq!(response.status().as_u16(), 200);

    for (case, request) in [
        ("a wrong token", api.request(Method::GET, "/api/v1/stats", Some(WRONG))),
        ("no token", api.request(Method::GET, "/api/v1/stats", None)),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 429, "{case} after them is still refused");
        let retry: u64 = response.headers().get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry), "{case}: {retry}");
    }
    let actions: Vec<String> = api.audit().into_iter().map(|(actor, action, ..)| format!("{actor} {action}")).collect();
    assert_eq!(actions, ["reader stats", "ops stats", "reader lookup"], "only the valid token's calls audited");

    api.app.clock.advance(std::time::Duration::from_secs(61));
    assert_eq!(api.get("/api/v1/stats", WRONG).await.status().as_u16(), 401, "a new window");
}

#[actix_web::test]
async fn a_flood_of_wrong_tokens_writes_no_audit_row_and_moves_the_failures_metric() {
    let tokens = tempfile::tempdir().unwrap();
    let path = tokens.path().join("reader");
    std::fs::write(&path, READER).unwrap();
    let app = spawn_app_with(&format!(
        "{RAISED_LIMITS}[server]\nmetrics_listen = \"127.0.0.1:0\"\n\
         [[api_tokens]]\nname = \"reader\"\ntoken_file = {:?}\nscopes = [\"read\"]\n",
        path.display().to_string()
    ))
    .await;
    let port = app.metrics_port.expect("a metrics listener");
    let failures = || async {
        let text =
            app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap().text().await.unwrap();
        let line = text
            .lines()
            .find(|line| line.starts_with("signupd_api_auth_failures_total{surface=\"api\"}"))
            .unwrap_or_else(|| panic!("the API's series from the first scrape:\n{text}"));
        line.rsplit(' ').next().unwrap().parse::<f64>().unwrap()
    };
    let before = failures().await;

    let mut statuses = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let response = app.client.get(app.url("/api/v1/stats")).bearer_auth(WRONG).send().await.unwrap();
        statuses.insert(response.status().as_u16());
    }

    assert_eq!(statuses, [401, 429].into(), "refused, then slowed");
    // The recorder is the process's: other tests in it may add failures, never take them away.
    let after = failures().await;
    assert!(after - before >= 50.0, "every call without a valid token counted: {before} then {after}");
    assert_eq!(count(&app, "audit_log"), 0, "a flood of 401s fills no table");
    let served = app.client.get(app.url("/api/v1/stats")).bearer_auth(READER).send().await.unwrap();
    assert_eq!(served.status().as_u16(), 200);
    assert_eq!(count(&app, "audit_log"), 1);
}

#[actix_web::test]
async fn fifty_thousand_failing_networks_behind_the_proxy_leave_a_valid_token_served() {
    // Regression: failing clients and tokens shared one 100,000-key table, each failing client
    // took two keys, and a valid token from another network was refused 429 once 50,001
    // wrong-token calls from distinct /64s had filled it.
    use futures_util::StreamExt;
    let api = api_with("[server]\ntrusted_proxies = [\"127.0.0.1\"]\nclient_ip_header = \"X-Forwarded-For\"\n").await;
    let call = |token: &str, client: String| {
        let request = api.request(Method::GET, "/api/v1/stats", Some(token)).header("X-Forwarded-For", client);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let network = |n: u32| format!("2001:db8:{:x}:{:x}::1", n >> 16, n & 0xffff);
    let mut statuses: Vec<u16> =
        futures_util::stream::iter(0..50_001u32).map(|n| call(WRONG, network(n))).buffer_unordered(16).collect().await;
    statuses.dedup();
    assert_eq!(statuses, [401], "each network failed once");

    for attempt in 0..3 {
        let status = call(READER, "198.51.100.7".into()).await;
        assert_eq!(status, 200, "after 50,001 failing networks, the valid token's call {attempt}");
    }
    let status = call(WRONG, "198.51.100.8".into()).await;
    assert_eq!(status, 401, "a new failing network still finds room: refused, not slowed");
}

#[actix_web::test]
async fn a_token_gets_its_window_and_no_more_when_calls_race() {
    let api = api().await;
    let total = signupd::operator::api::limits::PER_TOKEN as usize + 100;
    let calls = (0..total).map(|_| {
        let request = api.request(Method::GET, "/api/v1/subscribers?email=ann@example.com", Some(READER));
        async move { request.send().await.unwrap().status().as_u16() }
    });
    let statuses = futures_util::future::join_all(calls).await;
    let answered = statuses.iter().filter(|status| **status == 200).count();
    let limited = statuses.iter().filter(|status| **status == 429).count();
    assert_eq!((answered, limited), (signupd::operator::api::limits::PER_TOKEN as usize, 100), "{statuses:?}");
    assert_eq!(count(&api.app, "audit_log"), answered as i64, "every answered call audited, no other");
}

#[actix_web::test]
async fn the_bearer_scheme_is_read_in_any_case() {
    let api = api().await;
    for header in [format!("Bearer {READER}"), format!("bearer {READER}"), format!("BEARER  {READER} ")] {
        let request = api.request(Method::GET, "/api/v1/stats", None).header("Authorization", &header);
        assert_eq!(request.send().await.unwrap().status().as_u16(), 200, "{header:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_authentications_are_logged_once_a_minute_per_client_without_its_address() {
    // Arrange: the real binary, whose log is what an operator reads
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("reader");
    std::fs::write(&token_file, READER).unwrap();
    let config = crate::process::config(
        dir.path(),
        100,
        &format!(
            "[[api_tokens]]\nname = \"reader\"\ntoken_file = {:?}\nscopes = [\"read\"]\n",
            token_file.display().to_string()
        ),
    );
    let mut server = crate::process::serve(&config);
    let client = crate::process::client();

    // Act: 30 wrong tokens, then the right one, whose access line closes what was written before it
    for _ in 0..30 {
        let response = client.get(server.url("/api/v1/stats")).bearer_auth(WRONG).send().await.unwrap();
        assert!([401, 429].contains(&response.status().as_u16()));
    }
    let served = client.get(server.url("/api/v1/stats")).bearer_auth(READER).send().await.unwrap();
    assert_eq!(served.status().as_u16(), 200);
    server.wait_for(|line| line.contains("path=/api/v1/stats") && line.contains("status=200"));

    // Assert
    let warned: Vec<&String> =
        server.seen().iter().filter(|line| line.contains("a call without a valid token")).collect();
    assert_eq!(warned.len(), 1, "one line for the minute's 30 failures:\n{}", server.seen().join("\n"));
    assert!(warned[0].contains("surface=\"api\"") && warned[0].contains("client=\""), "{}", warned[0]);
    assert!(!warned[0].contains("127.0.0.1") && !warned[0].contains(WRONG), "no address, no token: {}", warned[0]);
}
