//! Hearing back from the relay (`docs/operations.md` "Bounces and complaints"): every mail about a subscriber carries `X-Signupd-Ref`, a sealed
//! reference to its list, its kind, its row and its address's every-list suppression key, which
//! opens with the installation's key and with no other, and holds no address; a hard bounce or
//! a complaint, named by such a reference or by a recipient, suppresses the address on every list
//! and removes its rows (`relays::effect`), with the unsubscribe event a confirmed row leaves.

use serde_json::Value;
use signupd::clock::Clock;
use signupd::config::secrets::Secret;
use signupd::domain::{EmailAddress, ListId};
use signupd::outbound::mail::reference::{MailKind, ReferenceKey};
use signupd::relays::effect::{self, Subject, Verdict};
use signupd::storage::suppressions;

use crate::confirm::{SentMail, deliver, location, post_fields, post_token};
use crate::helpers::{TestApp, spawn_app_with};
use crate::signup::{RAISED_LIMITS, db, drain, post_form, valid};
use crate::webhooks::app_with_hooks;

const JANE: &str = "jane.doe+news@example.com";

/// The reference of `mail`, opened with the app's own key.
fn opened(app: &TestApp, mail: &SentMail) -> signupd::outbound::mail::reference::Reference {
    let value = mail.header("X-Signupd-Ref").unwrap_or_else(|| panic!("no X-Signupd-Ref in {}", mail.text()));
    ReferenceKey::derive(&app.state.secrets.hash_key).open(value).unwrap_or_else(|| panic!("{value:?} does not open"))
}

#[actix_web::test]
async fn the_confirmation_and_the_welcome_mail_carry_a_reference_that_opens_to_their_list_kind_row_and_key() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;

    // Act: sign up, mail the confirmation, confirm, mail the welcome
    assert_eq!(post_form(&app, &valid(JANE)).await.status().as_u16(), 303);
    drain(&app).await;
    let confirmation = deliver(&app).await.pop().expect("a confirmation mail");
    let confirmed = post_token(&app, "/api/confirm", &confirmation.confirm_token()).await;
    assert_eq!(location(&confirmed), "/confirmed?list=news");
    let welcome = deliver(&app).await.pop().expect("a welcome mail");

    // Assert: each opens to the list, its kind, the row and the address's every-list key
    let row = confirmation.manage_token().split_once('.').unwrap().0.to_owned();
    let key = suppressions::every_list_hash(&app.state.secrets.hash_key, JANE);
    for (mail, kind) in [(&confirmation, MailKind::Confirmation), (&welcome, MailKind::Welcome)] {
        let reference = opened(&app, mail);
        assert_eq!(reference.list_id, "news");
        assert_eq!(reference.kind, kind);
        assert_eq!(reference.subscriber_id.to_string(), row);
        assert_eq!(reference.suppression_hash(), key);
        assert_ne!(key, suppressions::hash(&app.state.secrets.hash_key, "news", JANE), "not the list's own key");
    }
    // Assert: the value names nothing in the clear, and two mails carry two values
    let values = [&confirmation, &welcome].map(|mail| mail.header("X-Signupd-Ref").unwrap().to_owned());
    assert_ne!(values[0], values[1]);
    for value in &values {
        assert!(!value.contains("jane") && !value.contains("news") && !value.contains(&key[..12]), "{value}");
    }
}

#[actix_web::test]
async fn another_installations_key_opens_no_reference() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    assert_eq!(post_form(&app, &valid(JANE)).await.status().as_u16(), 303);
    drain(&app).await;
    let mail = deliver(&app).await.pop().expect("a confirmation mail");

    // Act
    let value = mail.header("X-Signupd-Ref").expect("a reference");
    let other = ReferenceKey::derive(&Secret::from_bytes(vec![7; 32]));

    // Assert
    assert!(ReferenceKey::derive(&app.state.secrets.hash_key).open(value).is_some());
    assert_eq!(other.open(value), None);
}

// ---------------------------------------------------------------------------------------------
// A hard bounce or a complaint

const BOB: &str = "bob@example.com";
/// Two lists of one sender, beside the default rate limits.
const TWO_LISTS: &str = "[[lists]]\nid = \"news\"\nname = \"News\"\n[[lists]]\nid = \"tips\"\nname = \"Tips\"\n";

/// Signs `email` up for `list` and mails its confirmation; the mail.
async fn signed_up(app: &TestApp, email: &str, list: &str) -> SentMail {
    let fields = [("email", email), ("consent", "yes"), ("list", list)];
    assert_eq!(post_fields(app, "/api/signup", &fields).await.status().as_u16(), 303);
    drain(app).await;
    deliver(app).await.pop().unwrap_or_else(|| panic!("a confirmation mail to {email} for {list}"))
}

/// An app with the lists `news` and `tips` and a webhook endpoint (background workers off, so
/// events stay queued), where JANE is confirmed on `news` and pending on `tips`, and BOB
/// confirmed on `news`. JANE's `news` confirmation mail.
async fn jane_on_two_lists() -> (TestApp, SentMail) {
    let (app, _) = app_with_hooks("", TWO_LISTS, &[("crm", "http://127.0.0.1:9/hook")]).await;
    let mail = signed_up(&app, JANE, "news").await;
    assert_eq!(location(&post_token(&app, "/api/confirm", &mail.confirm_token()).await), "/confirmed?list=news");
    let bobs = signed_up(&app, BOB, "news").await;
    assert_eq!(location(&post_token(&app, "/api/confirm", &bobs.confirm_token()).await), "/confirmed?list=news");
    deliver(&app).await;
    let fields = [("email", JANE), ("consent", "yes"), ("list", "tips")];
    assert_eq!(post_fields(&app, "/api/signup", &fields).await.status().as_u16(), 303);
    drain(&app).await;
    assert_eq!(rows(&app, JANE), ["news confirmed", "tips pending"]);
    assert_eq!(queued_mail(&app, JANE), 1, "the tips confirmation is queued");
    (app, mail)
}

/// `relays::effect::suppress` on every configured list, now.
async fn suppress(
    app: &TestApp,
    subject: Subject<'_>,
    verdict: Verdict,
) -> Vec<signupd::subscribers::subscription::Removed> {
    let lists: Vec<ListId> = app.state.config.lists.iter().map(|list| list.id.clone()).collect();
    effect::suppress(&app.state.subscriptions(), &lists, subject, verdict, app.clock.now()).await.unwrap()
}

/// `list status` of each row of `email`.
pub fn rows(app: &TestApp, email: &str) -> Vec<String> {
    let conn = db(app);
    let mut statement =
        conn.prepare("SELECT list_id || ' ' || status FROM subscribers WHERE email = ?1 ORDER BY list_id").unwrap();
    statement.query_map([email], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

/// The mails queued for `email`'s rows.
pub fn queued_mail(app: &TestApp, email: &str) -> i64 {
    db(app)
        .query_row(
            "SELECT count(*) FROM outbox o JOIN subscribers s ON s.id = o.subscriber_id WHERE s.email = ?1",
            [email],
            |row| row.get(0),
        )
        .unwrap()
}

/// Each suppression's list and reason, of every list's key and the every-list key of `email`.
fn suppressions_of(app: &TestApp, email: &str) -> Vec<(String, String)> {
    let key = &app.state.secrets.hash_key;
    let hashes = ["*", "news", "tips"].map(|list| suppressions::hash(key, list, email));
    let conn = db(app);
    let mut found = Vec::new();
    for hash in &hashes {
        let row: Option<(String, String)> = rusqlite::OptionalExtension::optional(conn.query_row(
            "SELECT list_id, reason FROM suppressions WHERE hash = ?1",
            [hash],
            |row| Ok((row.get(0)?, row.get(1)?)),
        ))
        .unwrap();
        found.extend(row);
    }
    found
}

/// The queued `subscriber.unsubscribed` events' payloads.
fn unsubscribed_events(app: &TestApp) -> Vec<Value> {
    let conn = db(app);
    let mut statement = conn
        .prepare("SELECT payload FROM webhook_deliveries WHERE event_type = 'subscriber.unsubscribed' ORDER BY id")
        .unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|payload| serde_json::from_str(&payload.unwrap()).unwrap())
        .collect()
}

/// Signs `email` up for `list` again: answered as always; whether a mail went out.
async fn mailed_after_new_signup(app: &TestApp, email: &str, list: &str) -> bool {
    let fields = [("email", email), ("consent", "yes"), ("list", list)];
    assert_eq!(post_fields(app, "/api/signup", &fields).await.status().as_u16(), 303, "answered as always");
    drain(app).await;
    !deliver(app).await.is_empty()
}

#[actix_web::test]
async fn a_hard_bounce_named_by_its_reference_suppresses_everywhere_and_removes_every_row_of_the_address() {
    // Arrange
    let (app, mail) = jane_on_two_lists().await;
    let reference = opened(&app, &mail);

    // Act
    let removed = suppress(&app, Subject::Reference(&reference), Verdict::HardBounce).await;

    // Assert: gone from both lists with its queued mail, suppressed on every list as bounced
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(rows(&app, JANE).is_empty());
    assert_eq!(queued_mail(&app, JANE), 0);
    assert_eq!(
        suppressions_of(&app, JANE),
        [("*".into(), "bounced".into()), ("news".into(), "bounced".into()), ("tips".into(), "bounced".into())]
    );
    // Assert: the confirmed row left with its event, the reason and the channel; the pending
    // row was never known to the endpoint
    let events = unsubscribed_events(&app);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["list"], "news", "{}", events[0]);
    assert_eq!(events[0]["data"]["reason"], "bounced", "{}", events[0]);
    assert_eq!(events[0]["data"]["via"], "relay", "{}", events[0]);
    // Assert: a new signup on either list is answered as always and never mailed; Bob is untouched
    assert!(!mailed_after_new_signup(&app, JANE, "news").await);
    assert!(!mailed_after_new_signup(&app, JANE, "tips").await);
    assert!(rows(&app, JANE).is_empty());
    assert_eq!(rows(&app, BOB), ["news confirmed"]);
    assert!(mailed_after_new_signup(&app, BOB, "tips").await, "another address is mailed as before");
}

#[actix_web::test]
async fn a_complaint_named_by_its_recipient_acts_as_one_named_by_its_reference() {
    // Arrange
    let (app, _) = jane_on_two_lists().await;
    let jane = EmailAddress::parse(JANE).unwrap();

    // Act
    let removed = suppress(&app, Subject::Recipient(&jane), Verdict::Complaint).await;

    // Assert
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(rows(&app, JANE).is_empty());
    assert_eq!(queued_mail(&app, JANE), 0);
    assert_eq!(suppressions_of(&app, JANE)[0], ("*".into(), "complained".into()));
    assert_eq!(unsubscribed_events(&app)[0]["data"]["reason"], "complained");
    assert!(!mailed_after_new_signup(&app, JANE, "news").await);
    assert_eq!(rows(&app, BOB), ["news confirmed"]);
}

#[actix_web::test]
async fn a_report_about_a_row_that_is_gone_still_keeps_the_address_from_being_mailed() {
    // Arrange: Jane's pending row, removed ("not me") before the bounce of its mail arrives
    let app = spawn_app_with(RAISED_LIMITS).await;
    let mail = signed_up(&app, JANE, "news").await;
    let reference = opened(&app, &mail);
    let manage = post_token(&app, "/api/manage", &mail.manage_token()).await;
    assert_eq!(location(&manage), "/removed?list=news");
    assert!(rows(&app, JANE).is_empty());

    // Act
    let removed = suppress(&app, Subject::Reference(&reference), Verdict::HardBounce).await;

    // Assert: nothing left to remove; the every-list suppression recorded
    assert!(removed.is_empty(), "{removed:?}");
    assert!(suppressions_of(&app, JANE).contains(&("*".into(), "bounced".into())), "{:?}", suppressions_of(&app, JANE));
    let other = ReferenceKey::derive(&Secret::from_bytes(vec![1; 32]));
    assert_eq!(other.open(mail.header("X-Signupd-Ref").unwrap()), None);
}
