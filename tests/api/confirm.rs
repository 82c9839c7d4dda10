//! `GET /confirm` and `POST /api/confirm` over real HTTP (docs/http-api.md "Confirming"): the page only reads,
//! the POST is the one atomic transition (idempotent within the link's lifetime, once under
//! concurrency), malformed tokens never reach the database, tokens do not cross purposes, retype
//! mode, and confirming lifts an `unsubscribed` suppression.
//!
//! The helpers here (signing up through the real mail, reading the `.eml` files of the file
//! transport, dumping the database) are shared by `manage.rs` and `scanner.rs`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::Response;
use rusqlite::OptionalExtension;
use signupd::outbound::mail::{MailOutcome, try_execute_task as send_next_mail};

use crate::helpers::{START, TestApp, link_token_at, spawn_app_with};
use crate::signup::{RAISED_LIMITS, count, db, drain, form_body, header, post_form, strings, valid};

/// The `public_url` the mailed links start with.
const PUBLIC_URL: &str = "http://127.0.0.1:8080";
/// The default confirm link lifetime (`confirm_ttl`, 48 h).
pub const CONFIRM_TTL: Duration = Duration::from_secs(48 * 3600);
/// Longer than the default resend cooldown (10 min).
pub const PAST_COOLDOWN: Duration = Duration::from_secs(11 * 60);

/// The list `news` in retype mode, with rate limits out of the way.
const RETYPE: &str = "[signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\n\
    [[lists]]\nid = \"news\"\nname = \"News\"\nconfirm_mode = \"retype\"\n";

/// Malformed opaque tokens, each named: none may reach the database.
pub fn malformed_tokens() -> Vec<(&'static str, String)> {
    vec![
        ("empty", String::new()),
        ("42 characters", "a".repeat(42)),
        ("44 characters", "a".repeat(44)),
        ("a '+' (base64, not base64url)", format!("{}+", "a".repeat(42))),
        ("a '/' (base64, not base64url)", format!("{}/", "a".repeat(42))),
        ("SQL", "' OR '1'='1".to_owned()),
        ("SQL padded to 43 characters", format!("{:<43}", "' OR '1'='1")),
    ]
}

// ---------------------------------------------------------------------------------------------
// Mail, read from the file transport

/// A mail written by the file transport, with quoted-printable soft line breaks and `=3D` undone
/// and headers unfolded, which is all it takes to read its links.
#[derive(Debug)]
pub struct SentMail {
    text: String,
}

impl SentMail {
    fn read(path: &PathBuf) -> Self {
        let raw = std::fs::read_to_string(path).unwrap();
        let text = raw.replace("=\r\n", "").replace("=3D", "=").replace("\r\n ", " ").replace("\r\n\t", " ");
        Self { text }
    }

    /// The token of the `{public_url}{path}?token=` link; every occurrence agrees.
    fn token(&self, path: &str) -> String {
        let needle = format!("{PUBLIC_URL}{path}?token=");
        let tokens: BTreeSet<String> =
            self.text.match_indices(&needle).map(|(at, _)| link_token_at(&self.text[at + needle.len()..])).collect();
        assert_eq!(tokens.len(), 1, "one {path} token in the mail, found {tokens:?}");
        tokens.into_iter().next().unwrap()
    }

    /// The whole mail, soft line breaks and `=3D` undone.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 43-character token of the confirm link.
    pub fn confirm_token(&self) -> String {
        let token = self.token("/confirm");
        assert_eq!(token.len(), 43, "a 43-character confirm token: {token:?}");
        token
    }

    /// The removal token of the manage link: `<subscriber id>.<43-character secret>`.
    pub fn manage_token(&self) -> String {
        let token = self.token("/manage");
        let (id, secret) = token.split_once('.').unwrap_or_else(|| panic!("<id>.<secret>: {token:?}"));
        assert_eq!((id.len(), secret.len()), (36, 43), "a UUID and a 43-character secret: {token:?}");
        token
    }

    /// The value of the mail's header `name` (unfolded), if it has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        let head = self.text.split("\r\n\r\n").next().unwrap();
        head.split("\r\n").find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field.eq_ignore_ascii_case(name).then_some(value.trim())
        })
    }

    /// Path and query of the `List-Unsubscribe` header's URL.
    pub fn list_unsubscribe(&self) -> String {
        let value = self
            .header("List-Unsubscribe")
            .unwrap_or_else(|| panic!("a List-Unsubscribe header in {}", self.text.split("\r\n\r\n").next().unwrap()));
        let url = value
            .trim()
            .strip_prefix('<')
            .and_then(|rest| rest.split_once('>'))
            .map(|(url, _)| url.replace(' ', ""))
            .unwrap_or_else(|| panic!("List-Unsubscribe: <url>, got {value:?}"));
        url.strip_prefix(PUBLIC_URL).unwrap_or_else(|| panic!("{url} starts with the public URL")).to_owned()
    }
}

fn mail_files(app: &TestApp) -> BTreeSet<PathBuf> {
    let Ok(entries) = std::fs::read_dir(app.data_dir().join("mail")) else {
        return BTreeSet::new();
    };
    entries.map(|entry| entry.unwrap().path()).collect()
}

/// Runs the mail worker until its queue is empty; returns the mails it wrote, oldest first.
pub async fn deliver(app: &TestApp) -> Vec<SentMail> {
    let before = mail_files(app);
    for _ in 0..1_000 {
        match send_next_mail(&app.state.mailer()).await.unwrap() {
            MailOutcome::EmptyQueue => {
                // File names are UUIDv7: sorted by name is sorted by time.
                return mail_files(app).difference(&before).map(SentMail::read).collect();
            }
            MailOutcome::Sent | MailOutcome::Skipped => {}
            other => panic!("the file transport cannot fail: {other:?}"),
        }
    }
    panic!("the mail queue never ran empty");
}

// ---------------------------------------------------------------------------------------------
// Driving the flow over HTTP

/// Signs `email` up through the hosted form, applies the signup queue and sends the one
/// confirmation mail; returns its (confirm token, removal token).
pub async fn signed_up_and_mailed(app: &TestApp, email: &str) -> (String, String) {
    let response = post_form(app, &valid(email)).await;
    assert_eq!(response.status().as_u16(), 303, "signup of {email}");
    drain(app).await;
    let mails = deliver(app).await;
    assert_eq!(mails.len(), 1, "one confirmation mail to {email}");
    (mails[0].confirm_token(), mails[0].manage_token())
}

/// The links of a welcome mail.
#[derive(Debug)]
pub struct Welcome {
    /// The confirm token that confirmed the row (it still answers within its lifetime).
    pub confirm: String,
    /// The removal token of its manage link.
    pub removal: String,
    /// Path and query of its `List-Unsubscribe` URL (`/api/unsubscribe?token=<signed>`).
    pub unsubscribe_path: String,
    /// The signed unsubscribe token in that URL.
    pub signed: String,
}

/// Signs `email` up, confirms it with the button and sends the welcome mail.
pub async fn confirmed_and_welcomed(app: &TestApp, email: &str) -> Welcome {
    let (confirm, _) = signed_up_and_mailed(app, email).await;
    let response = post_token(app, "/api/confirm", &confirm).await;
    assert_eq!(location(&response), "/confirmed?list=news", "confirming {email}");
    let mails = deliver(app).await;
    assert_eq!(mails.len(), 1, "one welcome mail to {email}");
    let unsubscribe_path = mails[0].list_unsubscribe();
    let signed = unsubscribe_path
        .strip_prefix("/api/unsubscribe?token=")
        .unwrap_or_else(|| panic!("an unsubscribe URL: {unsubscribe_path}"))
        .to_owned();
    Welcome { confirm, removal: mails[0].manage_token(), unsubscribe_path, signed }
}

/// A browser form post of `fields` to `path`.
pub async fn post_fields(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> Response {
    app.client
        .post(app.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_body(fields))
        .send()
        .await
        .unwrap()
}

/// A browser form post of `token=T` to `path`.
pub async fn post_token(app: &TestApp, path: &str, token: &str) -> Response {
    post_fields(app, path, &[("token", token)]).await
}

pub async fn get(app: &TestApp, path_and_query: &str) -> Response {
    app.client.get(app.url(path_and_query)).send().await.unwrap()
}

/// `path?token=T`, the token encoded as a browser would.
pub fn with_token(path: &str, token: &str) -> String {
    format!("{path}?{}", form_body(&[("token", token)]))
}

/// The `Location` of a `303 See Other`.
pub fn location(response: &Response) -> String {
    assert_eq!(response.status().as_u16(), 303, "a redirect to {:?}", header(response, "location"));
    header(response, "location").expect("a Location header")
}

/// Status and body of an answer.
pub async fn status_and_body(response: Response) -> (u16, String) {
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

// ---------------------------------------------------------------------------------------------
// The database

/// What confirming records on a row.
#[derive(Debug, PartialEq, Eq)]
pub struct Confirmation {
    pub status: String,
    pub confirm_method: Option<String>,
    pub confirmed_at: Option<i64>,
    pub confirm_delay_secs: Option<i64>,
}

pub fn confirmation(app: &TestApp, email: &str) -> Confirmation {
    db(app)
        .query_row(
            "SELECT status, confirm_method, confirmed_at, confirm_delay_secs FROM subscribers WHERE email = ?1",
            [email],
            |row| {
                Ok(Confirmation {
                    status: row.get(0)?,
                    confirm_method: row.get(1)?,
                    confirmed_at: row.get(2)?,
                    confirm_delay_secs: row.get(3)?,
                })
            },
        )
        .unwrap_or_else(|error| panic!("the row of {email}: {error}"))
}

/// The status of `email`'s row in `news`, or `None` if it has none.
pub fn status_of(app: &TestApp, email: &str) -> Option<String> {
    db(app)
        .query_row("SELECT status FROM subscribers WHERE list_id = 'news' AND email = ?1", [email], |row| row.get(0))
        .optional()
        .unwrap()
}

/// Every row of every table, one line each (`table: value | value …`), sorted: two dumps are
/// equal exactly when no request wrote anything.
pub fn dump(app: &TestApp) -> Vec<String> {
    let conn = db(app);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut lines = Vec::new();
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let values: Vec<String> = (0..columns)
                .map(|column| match row.get_ref(column).unwrap() {
                    rusqlite::types::ValueRef::Null => "NULL".to_owned(),
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    rusqlite::types::ValueRef::Real(x) => x.to_string(),
                    rusqlite::types::ValueRef::Text(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    rusqlite::types::ValueRef::Blob(bytes) => format!("x'{}'", hex::encode(bytes)),
                })
                .collect();
            lines.push(format!("{table}: {}", values.join(" | ")));
        }
    }
    lines.sort();
    lines
}

// ---------------------------------------------------------------------------------------------
// The confirm page

#[actix_web::test]
async fn the_confirm_page_shows_one_button_posting_the_token_and_writes_nothing() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);

    // Act
    let (status, body) = status_and_body(get(&app, &with_token("/confirm", &token)).await).await;

    // Assert
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("News"), "names the list: {body}");
    assert!(body.contains(r#"<form method="post" action="/api/confirm">"#), "a form posting to /api/confirm: {body}");
    assert!(
        body.contains(&format!(r#"<input type="hidden" name="token" value="{token}">"#)),
        "the token in a hidden field: {body}"
    );
    assert_eq!(body.matches("<button").count(), 1, "one button: {body}");
    assert!(body.contains("Confirm signup"), "{body}");
    assert!(!body.contains(r#"name="email""#), "no address field in button mode: {body}");
    assert_eq!(dump(&app), before, "GET never writes");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

#[actix_web::test]
async fn a_malformed_token_on_the_confirm_page_gets_400() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);

    let mut paths: Vec<(&str, String)> =
        malformed_tokens().into_iter().map(|(case, token)| (case, with_token("/confirm", &token))).collect();
    paths.push(("no token at all", "/confirm".to_owned()));
    for (case, path) in paths {
        let (status, body) = status_and_body(get(&app, &path).await).await;

        assert_eq!(status, 400, "{case}: {body}");
        assert!(body.contains("<html"), "{case}: an HTML page: {body}");
        assert!(!body.contains("/api/confirm"), "{case}: no confirm form: {body}");
    }
    assert_eq!(dump(&app), before, "nothing written");
}

#[actix_web::test]
async fn an_unknown_or_expired_token_on_the_confirm_page_gets_the_410_page() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;

    // Act
    let unknown = status_and_body(get(&app, &with_token("/confirm", &"A".repeat(43))).await).await;
    app.clock.advance(CONFIRM_TTL + Duration::from_secs(1));
    let before = dump(&app);
    let expired = status_and_body(get(&app, &with_token("/confirm", &token)).await).await;

    // Assert
    // An unknown token names no list: its page links to the hosted form at `/`.
    for (case, (status, body), signup) in
        [("unknown", unknown, r#"href="/""#), ("expired", expired, r#"href="/signup?list=news""#)]
    {
        assert_eq!(status, 410, "{case}: {body}");
        assert!(body.contains("expired"), "{case}: says the link expired: {body}");
        assert!(
            body.contains(signup) && body.contains("Sign up again"),
            "{case}: links to signing up again ({signup}): {body}"
        );
        assert!(!body.contains("/api/confirm"), "{case}: no confirm form: {body}");
    }
    assert_eq!(dump(&app), before, "GET never writes, even for an expired link");
}

#[actix_web::test]
async fn the_confirm_page_of_a_confirmed_row_says_already_confirmed_within_the_lifetime() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    location(&post_token(&app, "/api/confirm", &token).await);
    let before = dump(&app);

    // Act
    let (status, body) = status_and_body(get(&app, &with_token("/confirm", &token)).await).await;

    // Assert
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Already confirmed"), "{body}");
    assert!(!body.contains("/api/confirm"), "no second form: {body}");
    assert_eq!(dump(&app), before);
}

// ---------------------------------------------------------------------------------------------
// POST /api/confirm

#[actix_web::test]
async fn posting_the_token_confirms_and_records_method_time_and_delay_and_queues_a_welcome() {
    // Arrange: the mail goes out at START; the person clicks 90 s later
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    app.clock.advance(Duration::from_secs(90));

    // Act
    let response = post_token(&app, "/api/confirm", &token).await;

    // Assert
    assert_eq!(location(&response), "/confirmed?list=news");
    assert_eq!(
        confirmation(&app, "jane@example.com"),
        Confirmation {
            status: "confirmed".into(),
            confirm_method: Some("button".into()),
            confirmed_at: Some(START + 90),
            confirm_delay_secs: Some(90),
        }
    );
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["welcome"]);
    let (status, body) = status_and_body(get(&app, "/confirmed?list=news").await).await;
    assert_eq!(status, 200);
    assert!(body.contains("News"), "the confirmed page names the list: {body}");
}

#[actix_web::test]
async fn a_repeat_post_of_a_used_token_ends_at_the_same_confirmed_page_and_changes_nothing() {
    // Arrange: a scanner pressed the button first
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let first = post_token(&app, "/api/confirm", &token).await;
    app.clock.advance(Duration::from_secs(3600));
    let before = dump(&app);

    // Act: the person clicks an hour later
    let second = post_token(&app, "/api/confirm", &token).await;

    // Assert
    assert_eq!(location(&first), "/confirmed?list=news");
    assert_eq!(location(&second), "/confirmed?list=news");
    assert_eq!(dump(&app), before, "the second POST changed nothing");
    assert_eq!(count(&app, "outbox"), 1, "still one welcome mail");
}

#[actix_web::test]
async fn posting_an_expired_token_gets_410_and_leaves_the_row_pending() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    app.clock.advance(CONFIRM_TTL + Duration::from_secs(1));
    let before = dump(&app);

    let (status, body) = status_and_body(post_token(&app, "/api/confirm", &token).await).await;

    assert_eq!(status, 410, "{body}");
    assert!(body.contains("expired"), "{body}");
    assert_eq!(dump(&app), before);
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

#[actix_web::test]
async fn posting_a_token_at_the_last_second_of_its_lifetime_still_confirms() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    app.clock.advance(CONFIRM_TTL);

    let response = post_token(&app, "/api/confirm", &token).await;

    assert_eq!(location(&response), "/confirmed?list=news");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
}

#[actix_web::test]
async fn a_token_only_in_the_query_string_is_ignored_with_400() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);
    let url = app.url(&with_token("/api/confirm", &token));
    let cases = [
        ("empty urlencoded body", Some("application/x-www-form-urlencoded"), ""),
        ("other fields only", Some("application/x-www-form-urlencoded"), "confirm=yes"),
        ("no body, no content type", None, ""),
    ];

    for (case, content_type, body) in cases {
        // Act
        let mut request = app.client.post(&url).body(body);
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        let (status, page) = status_and_body(request.send().await.unwrap()).await;

        // Assert
        assert_eq!(status, 400, "{case}: {page}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
}

#[actix_web::test]
async fn malformed_tokens_posted_to_confirm_get_400_and_change_nothing() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);

    for (case, token) in malformed_tokens() {
        let (status, body) = status_and_body(post_token(&app, "/api/confirm", &token).await).await;

        assert_eq!(status, 400, "{case}: {body}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

#[actix_web::test]
async fn two_concurrent_posts_of_one_token_confirm_once_and_queue_one_welcome() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;

    // Act
    let (first, second) =
        tokio::join!(post_token(&app, "/api/confirm", &token), post_token(&app, "/api/confirm", &token));

    // Assert
    assert_eq!(location(&first), "/confirmed?list=news", "first POST");
    assert_eq!(location(&second), "/confirmed?list=news", "second POST");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["welcome"], "exactly one welcome");
    assert_eq!(deliver(&app).await.len(), 1, "one welcome mail sent");
}

#[actix_web::test]
async fn a_removal_token_posted_to_confirm_gets_410_in_the_old_form_and_400_in_the_new_and_leaves_the_row_pending() {
    // docs/http-api.md, "Tokens and links": no token works for another purpose. The old
    // 43-character form of a removal token (its secret) has a confirm token's shape, so it is
    // looked up and unknown; the new form `<id>.<secret>` has not, so it is malformed here.
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (_, removal) = signed_up_and_mailed(&app, "jane@example.com").await;
    let (_, old_form) = removal.split_once('.').unwrap();
    let before = dump(&app);

    let (status, body) = status_and_body(post_token(&app, "/api/confirm", old_form).await).await;
    let (page_status, _) = status_and_body(get(&app, &with_token("/confirm", old_form)).await).await;
    let (new_status, new_body) = status_and_body(post_token(&app, "/api/confirm", &removal).await).await;
    let (new_page_status, _) = status_and_body(get(&app, &with_token("/confirm", &removal)).await).await;

    assert_eq!(status, 410, "{body}");
    assert_eq!(page_status, 410, "the confirm page does not take a removal token either");
    assert_eq!(new_status, 400, "{new_body}");
    assert_eq!(new_page_status, 400, "the confirm page: not a confirm token's shape");
    assert_eq!(dump(&app), before);
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

#[actix_web::test]
async fn a_resent_mail_replaces_the_link_and_the_old_token_stops_working() {
    // docs/http-api.md, "Tokens and links": resending mints a new token and the old one stops working.
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (old, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    app.clock.advance(PAST_COOLDOWN);
    let (new, _) = signed_up_and_mailed(&app, "jane@example.com").await;

    let (old_status, _) = status_and_body(post_token(&app, "/api/confirm", &old).await).await;
    let status_after_old = status_of(&app, "jane@example.com");
    let fresh = post_token(&app, "/api/confirm", &new).await;

    assert_ne!(old, new);
    assert_eq!(old_status, 410, "the replaced link");
    assert_eq!(status_after_old.as_deref(), Some("pending"));
    assert_eq!(location(&fresh), "/confirmed?list=news");
}

// ---------------------------------------------------------------------------------------------
// Retype mode

#[actix_web::test]
async fn in_retype_mode_the_confirm_page_asks_for_the_address() {
    let app = spawn_app_with(RETYPE).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);

    let (status, body) = status_and_body(get(&app, &with_token("/confirm", &token)).await).await;

    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#"type="email""#), "an email input: {body}");
    assert!(body.contains(r#"name="email""#), "{body}");
    assert!(body.contains(r#"<label for="email">"#), "the field has a label: {body}");
    assert!(!body.contains("jane@example.com"), "the page does not give the address away: {body}");
    assert!(body.contains("Confirm signup"), "{body}");
    assert_eq!(dump(&app), before);
}

#[actix_web::test]
async fn in_retype_mode_the_right_address_in_another_case_confirms_with_method_retype() {
    let app = spawn_app_with(RETYPE).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;

    let response = post_fields(&app, "/api/confirm", &[("token", &token), ("email", " Jane@EXAMPLE.com ")]).await;

    assert_eq!(location(&response), "/confirmed?list=news");
    let row = confirmation(&app, "jane@example.com");
    assert_eq!(row.status, "confirmed");
    assert_eq!(row.confirm_method.as_deref(), Some("retype"));
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["welcome"]);
}

#[actix_web::test]
async fn in_retype_mode_an_international_domain_typed_in_unicode_matches_its_punycode_row() {
    let app = spawn_app_with(RETYPE).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@bücher.example").await;

    let response = post_fields(&app, "/api/confirm", &[("token", &token), ("email", "Jane@BÜCHER.example")]).await;

    assert_eq!(location(&response), "/confirmed?list=news");
    assert_eq!(status_of(&app, "jane@xn--bcher-kva.example").as_deref(), Some("confirmed"));
}

#[actix_web::test]
async fn in_retype_mode_a_wrong_or_missing_address_gets_400_and_changes_nothing() {
    // Arrange
    let app = spawn_app_with(RETYPE).await;
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        ("another address", vec![("token", &token), ("email", "john@example.com")]),
        ("not an address", vec![("token", &token), ("email", "jane")]),
        ("an empty address", vec![("token", &token), ("email", "")]),
        ("no address field", vec![("token", &token)]),
    ];

    for (case, fields) in cases {
        // Act
        let (status, body) = status_and_body(post_fields(&app, "/api/confirm", &fields).await).await;

        // Assert
        assert_eq!(status, 400, "{case}: {body}");
        assert!(
            body.contains(r#"name="email""#) && body.contains(&token),
            "{case}: the page asks again, keeping the token: {body}"
        );
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

// ---------------------------------------------------------------------------------------------
// Suppressions

#[actix_web::test]
async fn confirming_again_after_an_unsubscribe_lifts_the_suppression() {
    // Arrange: confirmed, then unsubscribed: an `unsubscribed` suppression
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let removed = post_token(&app, "/api/manage", &welcome.removal).await;
    assert_eq!(location(&removed), "/removed?list=news");
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["unsubscribed"]);
    app.clock.advance(PAST_COOLDOWN);

    // Act: a new double opt-in
    let (token, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let response = post_token(&app, "/api/confirm", &token).await;

    // Assert
    assert_eq!(location(&response), "/confirmed?list=news");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
    assert_eq!(count(&app, "suppressions"), 0, "confirming lifted the suppression");
}
