//! `GET /manage`, `POST /api/manage` and RFC 8058 one-click `POST /api/unsubscribe` over real HTTP (docs/http-api.md,
//! "Removing and unsubscribing"): the page only reads, removing deletes the address from every table and leaves only a
//! suppression hash, repeats and unknown tokens reveal nothing, suppressions decide what a later signup does, signed
//! tokens resist tampering and survive a key rotation while the old secret stays in the verify list, removal tokens name
//! their row (`<id>.<secret>`) and only their own secret removes it, and removal links mailed before they did still work.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use signupd::config::secrets::Secret;
use signupd::config::tokens::Keyring;

use crate::confirm::{
    PAST_COOLDOWN, Welcome, confirmed_and_welcomed, deliver, dump, get, location, malformed_tokens, post_token,
    signed_up_and_mailed, status_and_body, status_of, with_token,
};
use crate::helpers::{START, TestApp, spawn_app_in, spawn_app_with};
use crate::signup::{RAISED_LIMITS, count, db, drain, header, multipart_body, post_form, strings, valid};

const ONE_CLICK: &str = "List-Unsubscribe=One-Click";

fn subscriber_id(app: &TestApp, email: &str) -> String {
    db(app)
        .query_row("SELECT id FROM subscribers WHERE email = ?1", [email], |row| row.get(0))
        .unwrap_or_else(|error| panic!("the row of {email}: {error}"))
}

/// No table holds the address (or its local part followed by `@`) any more.
fn assert_address_gone(app: &TestApp, email: &str, case: &str) {
    let local = format!("{}@", email.split('@').next().unwrap());
    let found: Vec<String> = dump(app).into_iter().filter(|line| line.to_lowercase().contains(&local)).collect();
    assert!(found.is_empty(), "{case}: {email} is still stored: {found:?}");
}

/// RFC 8058 one-click: a urlencoded `List-Unsubscribe=One-Click` posted to `path`.
pub async fn one_click(app: &TestApp, path: &str) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(ONE_CLICK)
        .send()
        .await
        .unwrap()
}

/// `token` with the `index`th of its `.`-separated parts replaced.
fn with_part(token: &str, index: usize, part: &str) -> String {
    let mut parts: Vec<&str> = token.split('.').collect();
    parts[index] = part;
    parts.join(".")
}

/// `token` with the character at `at` changed to another base64url character.
fn with_char_changed(token: &str, at: usize) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// Signed tokens that must not verify, each named: tampered copies of `signed` (which names
/// `subscriber`), and a token for the same row signed by a keyring this app does not have.
fn forged_tokens(signed: &str, list: &str, subscriber: &str, other_subscriber: &str) -> Vec<(&'static str, String)> {
    let signature_at = signed.rfind('.').unwrap() + 1;
    let foreign = Keyring::new(&Secret::from_bytes(vec![7; 32]), &[]);
    vec![
        ("last signature character changed", with_char_changed(signed, signed.len() - 1)),
        ("first signature character changed", with_char_changed(signed, signature_at)),
        ("first character changed", with_char_changed(signed, 0)),
        ("subscriber id swapped for another row's", with_part(signed, 4, &URL_SAFE_NO_PAD.encode(other_subscriber))),
        ("list id changed", with_part(signed, 3, &URL_SAFE_NO_PAD.encode("other"))),
        ("issued-at changed", with_part(signed, 5, &URL_SAFE_NO_PAD.encode("0"))),
        ("purpose changed", with_part(signed, 2, &URL_SAFE_NO_PAD.encode("confirm"))),
        ("signature removed", signed[..signature_at - 1].to_owned()),
        ("signed by a foreign keyring", foreign.sign_unsubscribe(list, subscriber, START)),
    ]
}

// ---------------------------------------------------------------------------------------------
// The manage page

#[actix_web::test]
async fn the_manage_page_names_the_list_with_its_box_a_save_and_a_remove_all_button_and_writes_nothing() {
    // Arrange: a pending row (removal token) and a confirmed one (removal and signed tokens)
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (_, pending_removal) = signed_up_and_mailed(&app, "ann@example.com").await;
    let welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    let before = dump(&app);
    let cases = [
        ("removal token of a pending row", pending_removal),
        ("removal token from the welcome mail", welcome.removal),
        ("signed unsubscribe token", welcome.signed),
    ];

    for (case, token) in cases {
        // Act
        let (status, body) = status_and_body(get(&app, &with_token("/manage", &token)).await).await;

        // Assert
        assert_eq!(status, 200, "{case}: {body}");
        assert!(body.contains("<strong>News</strong>"), "{case}: names the list: {body}");
        assert!(
            body.contains(r#"<form method="post" action="/api/manage">"#),
            "{case}: a form posting to /api/manage: {body}"
        );
        assert!(
            body.contains(&format!(r#"<input type="hidden" name="token" value="{token}">"#)),
            "{case}: the token in a hidden field: {body}"
        );
        assert_eq!(body.matches("<button").count(), 2, "{case}: save, and remove from all: {body}");
        assert!(body.contains(r#"name="list" value="news""#), "{case}: the list's box: {body}");
        assert!(body.contains("Remove me from all"), "{case}: {body}");
        assert_eq!(dump(&app), before, "{case}: GET never writes");
    }
}

#[actix_web::test]
async fn a_malformed_tampered_or_foreign_token_on_the_manage_page_gets_400() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    signed_up_and_mailed(&app, "ann@example.com").await;
    let (bob, ann) = (subscriber_id(&app, "bob@example.com"), subscriber_id(&app, "ann@example.com"));
    let before = dump(&app);
    let mut paths: Vec<(&str, String)> = malformed_tokens()
        .into_iter()
        .chain(forged_tokens(&welcome.signed, "news", &bob, &ann))
        .map(|(case, token)| (case, with_token("/manage", &token)))
        .collect();
    paths.push(("no token at all", "/manage".to_owned()));

    for (case, path) in paths {
        let (status, body) = status_and_body(get(&app, &path).await).await;

        assert_eq!(status, 400, "{case}: {body}");
        assert!(!body.contains("/api/manage"), "{case}: no remove form: {body}");
    }
    assert_eq!(dump(&app), before, "nothing written");
}

// ---------------------------------------------------------------------------------------------
// POST /api/manage

#[actix_web::test]
async fn removing_a_pending_address_deletes_it_from_every_table_and_leaves_a_not_me_suppression() {
    // Arrange: ann has a resend queued and another signup not yet applied; bob stays
    let app = spawn_app_with(RAISED_LIMITS).await;
    signed_up_and_mailed(&app, "bob@example.com").await;
    let (_, removal) = signed_up_and_mailed(&app, "ann@example.com").await;
    app.clock.advance(PAST_COOLDOWN);
    post_form(&app, &valid("ann@example.com")).await;
    drain(&app).await;
    post_form(&app, &valid("Ann@Example.com")).await;
    assert_eq!(count(&app, "outbox"), 1, "ann's resend is queued");
    assert_eq!(count(&app, "intake"), 1, "ann's last signup is not applied yet");
    assert!(dump(&app).iter().any(|line| line.contains("ann@example.com")), "the dump would show the address");

    // Act
    let response = post_token(&app, "/api/manage", &removal).await;

    // Assert
    assert_eq!(location(&response), "/removed?list=news");
    assert_eq!(status_of(&app, "ann@example.com"), None, "the row is gone");
    assert_eq!(count(&app, "outbox"), 0, "its queued mail is gone");
    assert_eq!(count(&app, "intake"), 0, "its unapplied signup is gone");
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["not_me"]);
    assert_address_gone(&app, "ann@example.com", "after removal");
    assert_eq!(status_of(&app, "bob@example.com").as_deref(), Some("pending"), "others stay");
    let (status, body) = status_and_body(get(&app, "/removed?list=news").await).await;
    assert_eq!(status, 200);
    assert!(body.contains("News"), "the removed page names the list: {body}");
}

#[actix_web::test]
async fn removing_a_confirmed_address_drops_its_queued_welcome_and_leaves_an_unsubscribed_suppression() {
    // Arrange: confirmed, the welcome mail still queued
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (confirm, removal) = signed_up_and_mailed(&app, "jane@example.com").await;
    location(&post_token(&app, "/api/confirm", &confirm).await);
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["welcome"]);

    // Act
    let response = post_token(&app, "/api/manage", &removal).await;

    // Assert
    assert_eq!(location(&response), "/removed?list=news");
    assert_eq!(status_of(&app, "jane@example.com"), None);
    assert_eq!(count(&app, "outbox"), 0, "the welcome mail is not sent");
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["unsubscribed"]);
    assert_address_gone(&app, "jane@example.com", "after removal");
    assert!(deliver(&app).await.is_empty(), "no mail after removal");
}

#[actix_web::test]
async fn posting_a_signed_unsubscribe_token_to_manage_removes_the_row() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;

    let response = post_token(&app, "/api/manage", &welcome.signed).await;

    assert_eq!(location(&response), "/removed?list=news");
    assert_eq!(status_of(&app, "jane@example.com"), None);
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["unsubscribed"]);
    assert_address_gone(&app, "jane@example.com", "after removal");
}

#[actix_web::test]
async fn a_repeated_removal_still_ends_at_removed_and_changes_nothing() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    location(&post_token(&app, "/api/manage", &welcome.removal).await);
    let before = dump(&app);

    // Act
    let removal_again = post_token(&app, "/api/manage", &welcome.removal).await;
    let signed_again = post_token(&app, "/api/manage", &welcome.signed).await;
    let (one_click_status, one_click_body) = status_and_body(one_click(&app, &welcome.unsubscribe_path).await).await;

    // Assert
    for (case, response) in [("removal token", removal_again), ("signed token", signed_again)] {
        let location = location(&response);
        assert!(
            location == "/removed" || location.starts_with("/removed?"),
            "{case}: ends at /removed, got {location}"
        );
    }
    assert_eq!((one_click_status, one_click_body.as_str()), (200, "Unsubscribed"));
    assert_eq!(dump(&app), before, "repeats change nothing");
}

#[actix_web::test]
async fn a_well_formed_token_that_matches_nothing_ends_at_removed_and_changes_nothing() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);
    let cases = [
        ("unknown 43-character token", "A".repeat(43)),
        (
            "signed token for a row that does not exist",
            app.state.keyring.sign_unsubscribe("news", "00000000-0000-0000-0000-000000000000", START),
        ),
        (
            "signed token naming the row under another list",
            app.state.keyring.sign_unsubscribe("other", &subscriber_id(&app, "jane@example.com"), START),
        ),
    ];

    for (case, token) in cases {
        // Act
        let response = post_token(&app, "/api/manage", &token).await;

        // Assert
        let location = location(&response);
        assert!(
            location == "/removed" || location.starts_with("/removed?"),
            "{case}: ends at /removed, got {location}"
        );
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
}

#[actix_web::test]
async fn a_confirm_token_posted_to_manage_ends_at_removed_but_removes_nothing() {
    // docs/http-api.md, "Tokens and links": no token works for another purpose.
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (confirm, _) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);

    let response = post_token(&app, "/api/manage", &confirm).await;

    let location = location(&response);
    assert!(location == "/removed" || location.starts_with("/removed?"), "ends at /removed, got {location}");
    assert_eq!(dump(&app), before, "the row is not deleted");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

#[actix_web::test]
async fn malformed_or_forged_tokens_posted_to_manage_get_400_and_change_nothing() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    signed_up_and_mailed(&app, "ann@example.com").await;
    let (bob, ann) = (subscriber_id(&app, "bob@example.com"), subscriber_id(&app, "ann@example.com"));
    let before = dump(&app);

    for (case, token) in malformed_tokens().into_iter().chain(forged_tokens(&welcome.signed, "news", &bob, &ann)) {
        let (status, body) = status_and_body(post_token(&app, "/api/manage", &token).await).await;

        assert_eq!(status, 400, "{case}: {body}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
}

// ---------------------------------------------------------------------------------------------
// Removal tokens: `<id>.<secret>`, and the 43-character form mailed before

/// A row as a database from before removal tokens carried the row id holds it, and the removal
/// token its mails carried then.
struct RowFromBeforeTheUpgrade {
    id: String,
    /// The 43-character token mailed then: HMAC-SHA256(hash key, "signupd/removal/v1\n" ‖ id),
    /// base64url.
    old_form: String,
}

impl RowFromBeforeTheUpgrade {
    /// Inserts the row with a random (version 4) id, as ids were once made, and `removal_hash`
    /// the bare SHA-256 hex of the token, minted here the old way, not by signupd's code.
    fn insert(app: &TestApp, email: &str, status: &str) -> Self {
        let id = uuid::Uuid::new_v4().to_string();
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, app.state.secrets.hash_key.expose());
        let tag = ring::hmac::sign(&key, format!("signupd/removal/v1\n{id}").as_bytes());
        let old_form = URL_SAFE_NO_PAD.encode(tag.as_ref());
        assert_eq!(old_form.len(), 43);
        db(app)
            .execute(
                "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash)
                 VALUES (?1, 'news', ?2, ?3, 'v1', ?4, ?5)",
                rusqlite::params![id, email, status, START, sha256_hex(&old_form)],
            )
            .unwrap();
        Self { id, old_form }
    }

    /// The removal token every mail carries now: `<id>.<secret>`, the secret being the old token.
    fn new_form(&self) -> String {
        format!("{}.{}", self.id, self.old_form)
    }
}

fn sha256_hex(text: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn removal_hash_of(app: &TestApp, email: &str) -> String {
    db(app)
        .query_row("SELECT removal_hash FROM subscribers WHERE email = ?1", [email], |row| row.get(0))
        .unwrap_or_else(|error| panic!("the removal_hash of {email}: {error}"))
}

/// The manage page's answer to `token`, with the token (echoed in its hidden field) taken out, so
/// that the answers to different tokens compare.
async fn manage_page_without_token(app: &TestApp, token: &str) -> (u16, String) {
    let (status, body) = status_and_body(get(app, &with_token("/manage", token)).await).await;
    (status, body.replace(token, "TOKEN"))
}

#[actix_web::test]
async fn removal_links_mailed_before_the_upgrade_still_work_and_so_does_the_new_form_for_their_rows() {
    // Arrange: four rows as a database from before the upgrade holds them
    let app = spawn_app_with(RAISED_LIMITS).await;
    let ann = RowFromBeforeTheUpgrade::insert(&app, "ann@example.com", "pending");
    let bob = RowFromBeforeTheUpgrade::insert(&app, "bob@example.com", "confirmed");
    let cid = RowFromBeforeTheUpgrade::insert(&app, "cid@example.com", "pending");
    let dan = RowFromBeforeTheUpgrade::insert(&app, "dan@example.com", "confirmed");
    let before = dump(&app);

    // Act and assert: the manage page takes both forms for such a row, and writes nothing
    for (case, token) in [("the old form", ann.old_form.clone()), ("the new form", ann.new_form())] {
        let (status, body) = status_and_body(get(&app, &with_token("/manage", &token)).await).await;
        assert_eq!(status, 200, "{case}: {body}");
        assert!(body.contains("<strong>News</strong>"), "{case}: names the list: {body}");
        assert!(body.contains(&format!(r#"name="token" value="{token}""#)), "{case}: {body}");
    }
    assert_eq!(dump(&app), before, "GET never writes");

    // Act: each row removed by one of the four ways in
    let ann_removed = location(&post_token(&app, "/api/manage", &ann.old_form).await);
    let bob_removed = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &bob.old_form)).await).await;
    let cid_removed = location(&post_token(&app, "/api/manage", &cid.new_form()).await);
    let dan_removed = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &dan.new_form())).await).await;

    // Assert
    assert_eq!(ann_removed, "/removed?list=news", "the old form posted to /api/manage");
    assert_eq!((bob_removed.0, bob_removed.1.as_str()), (200, "Unsubscribed"), "the old form, one-click");
    assert_eq!(cid_removed, "/removed?list=news", "the new form posted to /api/manage");
    assert_eq!((dan_removed.0, dan_removed.1.as_str()), (200, "Unsubscribed"), "the new form, one-click");
    assert_eq!(count(&app, "subscribers"), 0, "every row is gone");
    assert_eq!(
        strings(&app, "SELECT reason FROM suppressions ORDER BY reason"),
        ["not_me", "not_me", "unsubscribed", "unsubscribed"]
    );
    for email in ["ann@example.com", "bob@example.com", "cid@example.com", "dan@example.com"] {
        assert_address_gone(&app, email, "after removal");
    }
}

#[actix_web::test]
async fn a_new_rows_removal_token_names_its_row_and_nothing_but_its_own_secret_removes_it() {
    // Arrange: two new rows; the answers to an unknown token
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (_, jane_token) = signed_up_and_mailed(&app, "jane@example.com").await;
    let (_, bob_token) = signed_up_and_mailed(&app, "bob@example.com").await;
    let (jane, bob) = (subscriber_id(&app, "jane@example.com"), subscriber_id(&app, "bob@example.com"));
    let (id, secret) = jane_token.split_once('.').unwrap();
    let (_, bob_secret) = bob_token.split_once('.').unwrap();
    assert_eq!(id, jane, "the token starts with its row's id");
    assert_eq!(
        removal_hash_of(&app, "jane@example.com"),
        format!("v2:{jane}:{}", sha256_hex(secret)),
        "the row stores its id and the hash of the secret, never the secret"
    );
    let unknown = "A".repeat(43);
    let unknown_page = manage_page_without_token(&app, &unknown).await;
    let unknown_manage = location(&post_token(&app, "/api/manage", &unknown).await);
    let unknown_one_click = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &unknown)).await).await;
    assert_eq!((unknown_page.0, unknown_manage.as_str()), (200, "/removed"));
    let before = dump(&app);
    let refused = [
        ("a forged secret under jane's id", format!("{jane}.{}", "A".repeat(43))),
        ("bob's secret under jane's id", format!("{jane}.{bob_secret}")),
        ("jane's secret under bob's id", format!("{bob}.{secret}")),
        ("jane's secret under an id no row has", format!("{}.{secret}", uuid::Uuid::now_v7())),
        ("jane's secret alone, the old form: no row stores its bare hash", secret.to_owned()),
    ];

    for (case, token) in refused {
        // Act
        let page = manage_page_without_token(&app, &token).await;
        let manage = location(&post_token(&app, "/api/manage", &token).await);
        let unsubscribed = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &token)).await).await;

        // Assert: exactly the answers to an unknown token, and nothing removed
        assert_eq!(page, unknown_page, "{case}: the manage page");
        assert_eq!(manage, unknown_manage, "{case}: POST /api/manage");
        assert_eq!(unsubscribed, unknown_one_click, "{case}: one-click");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }

    // Act and assert: jane's own token removes jane, and only her
    let (page, body) = status_and_body(get(&app, &with_token("/manage", &jane_token)).await).await;
    assert_eq!(page, 200, "{body}");
    assert!(body.contains("<strong>News</strong>"), "the manage page names the list: {body}");
    assert_eq!(location(&post_token(&app, "/api/manage", &jane_token).await), "/removed?list=news");
    assert_eq!(status_of(&app, "jane@example.com"), None);
    assert_eq!(status_of(&app, "bob@example.com").as_deref(), Some("pending"), "others stay");
    assert_address_gone(&app, "jane@example.com", "after removal");
}

#[actix_web::test]
async fn a_malformed_removal_token_of_the_new_form_gets_400_before_the_database_is_asked() {
    // Arrange: jane's real token, bent out of shape; another process holds the write lock, so a
    // token that reached the database for a removal would get 503
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (_, removal) = signed_up_and_mailed(&app, "jane@example.com").await;
    let (id, secret) = removal.split_once('.').unwrap();
    let cases = [
        ("the id in upper case", format!("{}.{secret}", id.to_uppercase())),
        ("the id without hyphens", format!("{}.{secret}", id.replace('-', ""))),
        ("the id one character short", format!("{}.{secret}", &id[1..])),
        ("the id in braces", format!("{{{id}}}.{secret}")),
        ("SQL for the id", format!("{:<36}.{secret}", "' OR '1'='1")),
        ("the secret one character short", format!("{id}.{}", &secret[1..])),
        ("the secret one character long", format!("{id}.{secret}A")),
        ("a '+' in the secret (base64, not base64url)", format!("{id}.+{}", &secret[1..])),
        ("the dot doubled", format!("{id}..{secret}")),
        ("an extra part", format!("{id}.{secret}.{secret}")),
        ("no secret", format!("{id}.")),
        ("no id", format!(".{secret}")),
    ];
    let before = dump(&app);
    let blocker = db(&app);
    blocker.execute_batch("BEGIN EXCLUSIVE;").unwrap();

    for (case, token) in cases {
        // Act
        let (page, page_body) = status_and_body(get(&app, &with_token("/manage", &token)).await).await;
        let (manage, _) = status_and_body(post_token(&app, "/api/manage", &token).await).await;
        let unsubscribed = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &token)).await).await;

        // Assert: the answers to any malformed token
        assert_eq!(page, 400, "{case}: the manage page");
        assert!(!page_body.contains("/api/manage"), "{case}: no remove form: {page_body}");
        assert_eq!(manage, 400, "{case}: POST /api/manage");
        assert_eq!((unsubscribed.0, unsubscribed.1.as_str()), (400, "Invalid unsubscribe link."), "{case}: one-click");
    }
    let well_formed = post_token(&app, "/api/manage", &removal).await;
    assert_eq!(well_formed.status().as_u16(), 503, "the well-formed token did reach the database");
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(dump(&app), before, "nothing changed");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"));
}

// ---------------------------------------------------------------------------------------------
// What a suppression does to a later signup

#[actix_web::test]
async fn after_removing_a_pending_address_signing_it_up_again_sends_nothing() {
    // Arrange: "this was not me"
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (_, removal) = signed_up_and_mailed(&app, "jane@example.com").await;
    location(&post_token(&app, "/api/manage", &removal).await);
    app.clock.advance(PAST_COOLDOWN);

    // Act
    let response = post_form(&app, &valid("jane@example.com")).await;
    drain(&app).await;
    let mails = deliver(&app).await;

    // Assert
    assert_eq!(response.status().as_u16(), 303, "the same answer as for any address");
    assert_eq!(status_of(&app, "jane@example.com"), None, "no new row");
    assert!(mails.is_empty(), "no mail: {mails:?}");
    assert_address_gone(&app, "jane@example.com", "after the second signup");
}

#[actix_web::test]
async fn after_an_unsubscribe_signing_up_again_starts_a_new_double_opt_in() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let (status, _) = status_and_body(one_click(&app, &welcome.unsubscribe_path).await).await;
    assert_eq!(status, 200);

    // Act
    let (confirm, removal) = signed_up_and_mailed(&app, "jane@example.com").await;

    // Assert
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"), "a new pending row");
    assert_ne!(removal, welcome.removal, "a new row with its own removal link");
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["unsubscribed"]);
    let (page, _) = status_and_body(get(&app, &with_token("/confirm", &confirm)).await).await;
    assert_eq!(page, 200, "the new confirmation link works");
}

// ---------------------------------------------------------------------------------------------
// RFC 8058 one-click unsubscribe

#[actix_web::test]
async fn one_click_unsubscribe_with_a_urlencoded_body_removes_the_row_at_once() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;

    // Act
    let response = one_click(&app, &welcome.unsubscribe_path).await;

    // Assert
    let content_type = header(&response, "content-type").unwrap_or_default();
    let (status, body) = status_and_body(response).await;
    assert_eq!(status, 200, "{body}");
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    assert_eq!(body, "Unsubscribed");
    assert_eq!(status_of(&app, "jane@example.com"), None);
    assert_eq!(strings(&app, "SELECT reason FROM suppressions"), ["unsubscribed"]);
    assert_address_gone(&app, "jane@example.com", "after one-click");
}

#[actix_web::test]
async fn one_click_unsubscribe_with_a_multipart_body_removes_the_row_at_once() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let (content_type, body) = multipart_body(&[("List-Unsubscribe", "One-Click")]);

    let response = app
        .client
        .post(app.url(&welcome.unsubscribe_path))
        .header("Content-Type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();

    let (status, text) = status_and_body(response).await;
    assert_eq!((status, text.as_str()), (200, "Unsubscribed"));
    assert_eq!(status_of(&app, "jane@example.com"), None);
    assert_address_gone(&app, "jane@example.com", "after one-click");
}

#[actix_web::test]
async fn one_click_unsubscribe_with_a_removal_token_removes_the_row() {
    // docs/http-api.md, "Tokens and links": removal tokens are used by `/api/unsubscribe` too.
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;

    let response = one_click(&app, &with_token("/api/unsubscribe", &welcome.removal)).await;

    let (status, text) = status_and_body(response).await;
    assert_eq!((status, text.as_str()), (200, "Unsubscribed"));
    assert_eq!(status_of(&app, "jane@example.com"), None);
}

#[actix_web::test]
async fn one_click_without_the_one_click_body_gets_400_and_changes_nothing() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let before = dump(&app);
    let (multipart_type, multipart) = multipart_body(&[("List-Unsubscribe", "Yes")]);
    let cases: [(&str, Option<&str>, Vec<u8>); 6] = [
        ("no body, no content type", None, Vec::new()),
        ("empty urlencoded body", Some("application/x-www-form-urlencoded"), Vec::new()),
        ("another value", Some("application/x-www-form-urlencoded"), b"List-Unsubscribe=Yes".to_vec()),
        (
            "the token in the body instead",
            Some("application/x-www-form-urlencoded"),
            format!("token={}", welcome.signed).into_bytes(),
        ),
        ("multipart with another value", Some(multipart_type.as_str()), multipart),
        ("the right words as JSON", Some("application/json"), br#"{"List-Unsubscribe":"One-Click"}"#.to_vec()),
    ];

    for (case, content_type, body) in cases {
        // Act
        let mut request = app.client.post(app.url(&welcome.unsubscribe_path)).body(body);
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        let (status, text) = status_and_body(request.send().await.unwrap()).await;

        // Assert
        assert_eq!(status, 400, "{case}: {text}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
}

#[actix_web::test]
async fn get_and_head_on_the_unsubscribe_url_redirect_to_the_manage_page_and_change_nothing() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let before = dump(&app);

    let get_response = get(&app, &welcome.unsubscribe_path).await;
    let head_response = app.client.head(app.url(&welcome.unsubscribe_path)).send().await.unwrap();

    let expected = format!("/manage?token={}", welcome.signed);
    assert_eq!(location(&get_response), expected, "GET");
    assert_eq!(location(&head_response), expected, "HEAD");
    assert_eq!(dump(&app), before);
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
}

#[actix_web::test]
async fn tampered_or_foreign_unsubscribe_tokens_get_400_and_change_nothing() {
    // Arrange: bob's link, tampered to name ann (and other ways)
    let app = spawn_app_with(RAISED_LIMITS).await;
    let bob_welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    confirmed_and_welcomed(&app, "ann@example.com").await;
    let (bob, ann) = (subscriber_id(&app, "bob@example.com"), subscriber_id(&app, "ann@example.com"));
    let before = dump(&app);

    for (case, token) in forged_tokens(&bob_welcome.signed, "news", &bob, &ann) {
        // Act
        let (status, body) = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &token)).await).await;

        // Assert
        assert_eq!(status, 400, "{case}: {body}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
    assert_eq!(count(&app, "subscribers"), 2);
}

// ---------------------------------------------------------------------------------------------
// Key rotation

/// A secret file of at least 32 bytes; returns its path.
fn write_secret(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{name}-secret-for-tests-").repeat(4)).unwrap();
    path.display().to_string()
}

/// Jane's welcome mail is signed with the old secret; the app then restarts on the same data
/// directory with a new signing secret, keeping the old one for verifying or not.
async fn welcomed_then_rotated(keep_old: bool) -> (TestApp, Welcome, tempfile::TempDir) {
    let secrets = tempfile::tempdir().unwrap();
    let old = write_secret(secrets.path(), "old");
    let new = write_secret(secrets.path(), "new");
    let app = spawn_app_with(&format!("{RAISED_LIMITS}[secrets]\ntoken_secret_file = {old:?}\n")).await;
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    let dir = {
        // Dropping the rest of the app stops its server.
        let app = app;
        app.dir
    };
    let verify = if keep_old { format!("verify_only_secret_files = [{old:?}]\n") } else { String::new() };
    let restarted =
        spawn_app_in(dir, &format!("{RAISED_LIMITS}[secrets]\ntoken_secret_file = {new:?}\n{verify}")).await;
    let fresh = restarted.state.keyring.sign_unsubscribe("news", "row", START);
    assert_ne!(
        fresh.split('.').nth(1),
        welcome.signed.split('.').nth(1),
        "the restarted app signs with another key id"
    );
    (restarted, welcome, secrets)
}

#[actix_web::test]
async fn an_unsubscribe_link_signed_before_a_key_rotation_works_while_the_old_secret_is_listed() {
    // Arrange
    let (app, welcome, _secrets) = welcomed_then_rotated(true).await;

    // Act
    let (page, _) = status_and_body(get(&app, &with_token("/manage", &welcome.signed)).await).await;
    let (status, body) = status_and_body(one_click(&app, &welcome.unsubscribe_path).await).await;

    // Assert
    assert_eq!(page, 200, "the manage page accepts the old link");
    assert_eq!((status, body.as_str()), (200, "Unsubscribed"));
    assert_eq!(status_of(&app, "jane@example.com"), None);
}

#[actix_web::test]
async fn an_unsubscribe_link_signed_with_a_dropped_secret_is_rejected() {
    // Arrange
    let (app, welcome, _secrets) = welcomed_then_rotated(false).await;
    let before = dump(&app);

    // Act
    let (page, _) = status_and_body(get(&app, &with_token("/manage", &welcome.signed)).await).await;
    let (status, body) = status_and_body(one_click(&app, &welcome.unsubscribe_path).await).await;

    // Assert
    assert_eq!(page, 400, "the manage page refuses the old link");
    assert_eq!(status, 400, "{body}");
    assert_eq!(dump(&app), before);
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("confirmed"));
    let (removal, _) = status_and_body(one_click(&app, &with_token("/api/unsubscribe", &welcome.removal)).await).await;
    assert_eq!(removal, 200, "the removal link does not depend on the token secret");
}

#[actix_web::test]
async fn while_another_process_holds_the_write_lock_confirm_manage_and_one_click_answer_503_with_retry_after_and_change_nothing()
 {
    // Arrange: ann is pending, bob confirmed; another process holds the write lock (what a wedged
    // disk looks like)
    let app = spawn_app_with(RAISED_LIMITS).await;
    let (confirm, removal) = signed_up_and_mailed(&app, "ann@example.com").await;
    let bob: Welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    let blocker = db(&app);
    blocker.execute_batch("BEGIN EXCLUSIVE;").unwrap();

    // Act
    let answers = [
        ("confirm", post_token(&app, "/api/confirm", &confirm).await),
        ("manage", post_token(&app, "/api/manage", &removal).await),
        ("one-click", one_click(&app, &bob.unsubscribe_path).await),
    ];

    // Assert: each says to come back, in 30 s
    for (name, response) in answers {
        assert_eq!(response.status().as_u16(), 503, "{name}");
        assert_eq!(header(&response, "retry-after").as_deref(), Some("30"), "{name}");
    }
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(status_of(&app, "ann@example.com").as_deref(), Some("pending"), "nothing confirmed or removed");
    assert_eq!(status_of(&app, "bob@example.com").as_deref(), Some("confirmed"), "nothing unsubscribed");
    assert_eq!(count(&app, "suppressions"), 0);
    // Once the lock is gone, the same links work.
    assert_eq!(location(&post_token(&app, "/api/confirm", &confirm).await), "/confirmed?list=news");
    assert_eq!(one_click(&app, &bob.unsubscribe_path).await.status().as_u16(), 200);
}

#[actix_web::test]
async fn while_the_write_lock_is_held_the_503_pages_speak_the_visitors_language() {
    // Arrange: a list in English, German and French; ann pending; another process holds the lock
    let app = spawn_app_with(&format!("{RAISED_LIMITS}[[lists]]\nid = \"news\"\nlanguages = [\"de\", \"fr\"]\n")).await;
    let (confirm, removal) = signed_up_and_mailed(&app, "ann@example.com").await;
    let blocker = db(&app);
    blocker.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let post = |path: &'static str, body: String, accept_language: &'static str| {
        app.client
            .post(app.url(path))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept-Language", accept_language)
            .body(body)
            .send()
    };

    // Act: a French browser confirms and saves, a German one signs up
    let answers = [
        ("confirm", "fr", post("/api/confirm", format!("token={confirm}"), "fr-FR, en;q=0.5").await.unwrap()),
        ("manage", "fr", post("/api/manage", format!("token={removal}"), "fr").await.unwrap()),
        (
            "signup",
            "de",
            post("/api/signup", "email=bob%40example.com&consent=yes&list=news&lang=de".into(), "fr").await.unwrap(),
        ),
    ];

    // Assert: each page says to come back, in the visitor's words
    for (name, language, response) in answers {
        assert_eq!(header(&response, "retry-after").as_deref(), Some("30"), "{name}");
        let (status, html) = status_and_body(response).await;
        assert_eq!(status, 503, "{name}: {html}");
        assert!(html.contains(&format!("<html lang=\"{language}\"")), "{name}: {html}");
        let words = match (name, language) {
            ("signup", _) => "Ihre Anmeldung konnte gerade nicht gespeichert werden",
            _ => "Veuillez réessayer dans une minute.",
        };
        assert!(html.contains(words), "{name}: {words:?} in {html}");
        assert!(!html.contains("Please try again"), "{name}: no English left: {html}");
    }
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(status_of(&app, "ann@example.com").as_deref(), Some("pending"), "nothing confirmed or removed");
}
