//! The preference page (`GET /manage`, `POST /api/manage` with `save=preferences` or
//! `all=remove`, `GET /saved`) over real HTTP, with a real SQLite file and a real webhook
//! receiver: the page shows the token's sender's lists and no other, ticked where the address
//! is confirmed and marked where it is pending, and never writes; saving unsubscribes unticked
//! confirmed lists and confirms newly ticked ones (`confirm_method = 'preferences'`) in one
//! transaction, idempotently; "remove me from all" removes the address from every list of the
//! sender; foreign lists, bad tokens and hostile bodies change nothing.
//!
//! Three lists: `news` and `offers` share one `from` (Acme; `offers` is German), `club` has
//! another sender.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rusqlite::OptionalExtension;
use serde_json::Value;
use signupd::outbound::webhooks::worker::{DeliveryOutcome, try_deliver_batch};

use crate::confirm::{deliver, dump, get, location, post_fields, post_token, status_and_body, with_token};
use crate::helpers::{START, TestApp, spawn_app_in};
use crate::signup::{RAISED_LIMITS, count, db, drain, post_form, strings};
use crate::webhook_receiver::{Receiver, Reply};

const LISTS: &str = "\
[[lists]]
id = \"news\"
name = \"Acme News\"
from = \"Acme <hello@acme.example>\"
consent_version = \"n1\"
consent_text = \"Send me Acme News.\"

[[lists]]
id = \"offers\"
name = \"Acme Angebote\"
from = \"Acme <hello@acme.example>\"
consent_version = \"o2\"
consent_text = \"Schickt mir Angebote.\"
language = \"de\"

[[lists]]
id = \"club\"
name = \"Book Club\"
from = \"Book Club <club@books.example>\"
consent_text = \"Send me the club letter.\"
";

const JANE: &str = "jane@example.com";

/// The app with the three lists and one webhook endpoint, `crm`, at `receiver`.
async fn spawn(receiver: &Receiver) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("webhook_secret");
    std::fs::write(&secret, format!("whsec_{}\n", STANDARD.encode([7u8; 32]))).unwrap();
    let hook = format!(
        "[[webhooks]]\nname = \"crm\"\nurl = \"{}\"\nsecret_file = {:?}\n",
        receiver.url("/hooks"),
        secret.display().to_string()
    );
    spawn_app_in(dir, &format!("{RAISED_LIMITS}{hook}{LISTS}")).await
}

/// Signs `email` up for `list` and sends its confirmation mail; returns (confirm, removal token).
async fn signed_up(app: &TestApp, email: &str, list: &str) -> (String, String) {
    let response = post_form(app, &[("email", email), ("consent", "yes"), ("list", list)]).await;
    assert_eq!(response.status().as_u16(), 303, "signup of {email} to {list}");
    drain(app).await;
    let mails = deliver(app).await;
    assert_eq!(mails.len(), 1, "one confirmation mail for {list}");
    (mails[0].confirm_token(), mails[0].manage_token())
}

/// The links of `email`'s welcome mail for `list`, after signing up and confirming.
struct Confirmed {
    removal: String,
    /// Path and query of its `List-Unsubscribe` URL.
    one_click: String,
}

async fn confirmed(app: &TestApp, email: &str, list: &str) -> Confirmed {
    let (confirm, _) = signed_up(app, email, list).await;
    let response = post_token(app, "/api/confirm", &confirm).await;
    assert_eq!(location(&response), format!("/confirmed?list={list}"), "confirming {list}");
    let mails = deliver(app).await;
    assert_eq!(mails.len(), 1, "one welcome mail for {list}");
    Confirmed { removal: mails[0].manage_token(), one_click: mails[0].list_unsubscribe() }
}

/// The page's Save: the token, `save=preferences` and `list` once per ticked list.
async fn save(app: &TestApp, token: &str, ticked: &[&str]) -> reqwest::Response {
    let mut fields = vec![("token", token), ("save", "preferences")];
    fields.extend(ticked.iter().map(|list| ("list", *list)));
    post_fields(app, "/api/manage", &fields).await
}

async fn remove_all(app: &TestApp, token: &str) -> reqwest::Response {
    post_fields(app, "/api/manage", &[("token", token), ("all", "remove")]).await
}

/// `(status, confirm_method, consent_version)` of `email`'s row on `list`, if any.
fn row(app: &TestApp, email: &str, list: &str) -> Option<(String, Option<String>, String)> {
    db(app)
        .query_row(
            "SELECT status, confirm_method, consent_version FROM subscribers WHERE list_id = ?1 AND email = ?2",
            [list, email],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()
        .unwrap()
}

fn status(app: &TestApp, email: &str, list: &str) -> Option<String> {
    row(app, email, list).map(|(status, _, _)| status)
}

/// `(list, reason)` of every suppression, sorted.
fn suppressions(app: &TestApp) -> Vec<(String, String)> {
    let conn = db(app);
    let mut statement = conn.prepare("SELECT list_id, reason FROM suppressions ORDER BY list_id").unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Delivers every queued event to the receiver, batch after batch as the endpoint's worker
/// would (one batch holds one event per subscriber: their order is kept), until the queue is
/// empty; returns the bodies the receiver got, in order.
async fn delivered(app: &TestApp, receiver: &Receiver) -> Vec<Value> {
    let before = receiver.requests().len();
    let endpoint = app.state.webhooks.endpoints()[0].clone();
    let deliverer = app.state.deliverer(endpoint);
    for _ in 0..100 {
        let batch = try_deliver_batch(&deliverer, 64, || false);
        let outcomes = tokio::time::timeout(Duration::from_secs(30), batch).await.expect("a batch hung").unwrap();
        if outcomes.iter().all(|outcome| matches!(outcome, DeliveryOutcome::EmptyQueue)) {
            assert_eq!(count(app, "webhook_deliveries"), 0, "every event delivered");
            return receiver.requests()[before..].iter().map(|request| request.json()).collect();
        }
    }
    panic!("the webhook queue never ran empty");
}

/// The `type` and `data.list` of each event.
fn kinds(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|event| (event["type"].as_str().unwrap().to_owned(), event["data"]["list"].as_str().unwrap().to_owned()))
        .collect()
}

/// The `<input>` of the checkbox for `list` on the page.
fn checkbox<'a>(page: &'a str, list: &str) -> Option<&'a str> {
    let at = page.find(&format!(r#"<input type="checkbox" id="list-{list}""#))?;
    Some(&page[at..at + page[at..].find('>').unwrap() + 1])
}

// ---------------------------------------------------------------------------------------------
// The page

#[actix_web::test]
async fn the_page_shows_only_the_senders_lists_ticked_where_confirmed_marks_pending_ones_and_writes_nothing() {
    // Arrange: jane confirmed on news, pending on offers, confirmed on the other sender's club
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    let (_, offers_removal) = signed_up(&app, JANE, "offers").await;
    let club = confirmed(&app, JANE, "club").await;
    let signed_news = news.one_click.strip_prefix("/api/unsubscribe?token=").unwrap().to_owned();
    let before = dump(&app);

    for (case, token) in [("removal token", &news.removal), ("signed unsubscribe token", &signed_news)] {
        // Act
        let (code, page) = status_and_body(get(&app, &with_token("/manage", token)).await).await;
        let head = app.client.head(app.url(&with_token("/manage", token))).send().await.unwrap();

        // Assert
        assert_eq!(code, 200, "{case}: {page}");
        assert_eq!(head.status().as_u16(), 200, "{case}: HEAD");
        assert!(page.contains("<h1>Your email preferences</h1>"), "{case}: in the token's list's language: {page}");
        let news_box = checkbox(&page, "news").unwrap_or_else(|| panic!("{case}: a box for news: {page}"));
        let offers_box = checkbox(&page, "offers").unwrap_or_else(|| panic!("{case}: a box for offers: {page}"));
        assert!(news_box.contains(r#"name="list" value="news""#) && news_box.contains("checked"), "{case}: {news_box}");
        assert!(offers_box.contains(r#"name="list" value="offers""#), "{case}: {offers_box}");
        assert!(!offers_box.contains("checked"), "{case}: a pending list is not ticked: {offers_box}");
        for (list, name, consent) in
            [("news", "Acme News", "Send me Acme News."), ("offers", "Acme Angebote", "Schickt mir Angebote.")]
        {
            assert!(page.contains(&format!(r#"<label for="list-{list}""#)), "{case}: {list} has a label: {page}");
            assert!(page.contains(name) && page.contains(consent), "{case}: {list}'s name and consent text: {page}");
        }
        assert!(
            page.contains(r#"<label for="list-offers" lang="de"><strong>Acme Angebote</strong>"#),
            "{case}: the German list says so: {page}"
        );
        assert_eq!(page.matches("Pending: waiting for your confirmation.").count(), 1, "{case}: offers is pending");
        let pending_at = page.find("Pending: waiting").unwrap();
        assert!(pending_at > page.find("list-offers").unwrap(), "{case}: the mark is offers': {page}");
        assert!(!page.to_lowercase().contains("club"), "{case}: the other sender's list never shows: {page}");
        assert!(page.contains(r#"<input type="hidden" name="save" value="preferences">"#), "{case}: {page}");
        assert!(page.contains(&format!(r#"<input type="hidden" name="token" value="{token}">"#)), "{case}: {page}");
        assert!(page.contains(r#"<button type="submit">Save</button>"#), "{case}: {page}");
        assert!(
            page.contains(r#"<button type="submit" name="all" value="remove">Remove me from all</button>"#),
            "{case}: {page}"
        );
        assert!(!page.contains("<script"), "{case}: works without JavaScript");
        assert_eq!(dump(&app), before, "{case}: GET and HEAD never write");
    }

    // Act and assert: the German list's link shows the same lists, in German; club's only club
    let (code, page) = status_and_body(get(&app, &with_token("/manage", &offers_removal)).await).await;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("<h1>Ihre E-Mail-Einstellungen</h1>"), "{page}");
    assert!(page.contains("Ausstehend: wartet auf Ihre Bestätigung."), "{page}");
    assert!(checkbox(&page, "news").unwrap().contains("checked") && checkbox(&page, "offers").is_some(), "{page}");
    assert!(!page.to_lowercase().contains("club"), "{page}");
    let (code, page) = status_and_body(get(&app, &with_token("/manage", &club.removal)).await).await;
    assert_eq!(code, 200, "{page}");
    assert!(checkbox(&page, "club").unwrap().contains("checked"), "{page}");
    assert!(checkbox(&page, "news").is_none() && checkbox(&page, "offers").is_none(), "{page}");
    assert!(!page.contains("Acme"), "the other sender's lists never show: {page}");
    assert_eq!(dump(&app), before, "GET never writes");
}

// ---------------------------------------------------------------------------------------------
// Saving

#[actix_web::test]
async fn unticking_a_confirmed_list_unsubscribes_it_with_a_suppression_and_an_event_and_keeps_the_rest() {
    // Arrange: jane confirmed on news and offers; their confirmation events delivered
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    confirmed(&app, JANE, "offers").await;
    assert_eq!(delivered(&app, &receiver).await.len(), 2, "two confirmations");

    // Act: offers unticked
    let response = save(&app, &news.removal, &["news"]).await;

    // Assert
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(status(&app, JANE, "news").as_deref(), Some("confirmed"), "the ticked list stays");
    assert_eq!(status(&app, JANE, "offers"), None, "the unticked list is removed");
    assert_eq!(suppressions(&app), [("offers".to_owned(), "unsubscribed".to_owned())]);
    let events = delivered(&app, &receiver).await;
    assert_eq!(kinds(&events), [("subscriber.unsubscribed".to_owned(), "offers".to_owned())]);
    let data = &events[0]["data"];
    assert_eq!(
        (data["email"].as_str(), data["reason"].as_str(), data["via"].as_str()),
        (Some(JANE), Some("unsubscribed"), Some("manage"))
    );
    let (code, page) = status_and_body(get(&app, "/saved?list=news").await).await;
    assert_eq!(code, 200);
    assert!(page.contains("Preferences saved") && page.contains("Acme News"), "{page}");
    let (_, page) = status_and_body(get(&app, "/saved?list=offers").await).await;
    assert!(page.contains("Einstellungen gespeichert"), "translated: {page}");
}

#[actix_web::test]
async fn ticking_a_new_list_confirms_it_with_the_preferences_method_its_consent_and_an_event() {
    // Arrange: jane confirmed on news only
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    delivered(&app, &receiver).await;
    app.clock.advance(Duration::from_secs(600));

    // Act
    let response = save(&app, &news.removal, &["news", "offers"]).await;

    // Assert: a confirmed row with the list's consent version now, and its removal hash
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(row(&app, JANE, "offers"), Some(("confirmed".into(), Some("preferences".into()), "o2".into())));
    let (id, confirmed_at, created_at, removal_hash): (String, i64, i64, String) = db(&app)
        .query_row(
            "SELECT id, confirmed_at, created_at, removal_hash FROM subscribers WHERE list_id = 'offers'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .unwrap();
    assert_eq!((confirmed_at, created_at), (START + 600, START + 600));
    assert!(removal_hash.starts_with(&format!("v2:{id}:")), "a removal hash of the new row: {removal_hash}");
    assert_eq!(
        strings(&app, "SELECT consent_text FROM consent_texts WHERE list_id = 'offers'"),
        ["Schickt mir Angebote."]
    );
    let events = delivered(&app, &receiver).await;
    assert_eq!(kinds(&events), [("subscriber.confirmed".to_owned(), "offers".to_owned())]);
    let data = &events[0]["data"];
    assert_eq!(data["confirm_method"], "preferences");
    assert_eq!(data["consent_version"], "o2");
    assert_eq!(data["consent_text"], "Schickt mir Angebote.");
    assert_eq!(data["subscriber_id"], id.as_str());
    assert_eq!(data["email"], JANE);
    // The welcome mail brings the new list's own links.
    let mails = deliver(&app).await;
    assert_eq!(mails.len(), 1, "one welcome mail for offers");
    assert!(mails[0].manage_token().starts_with(&id), "the new row's own removal link");
}

#[actix_web::test]
async fn ticking_a_pending_list_confirms_that_row_and_a_not_me_list_is_confirmed_with_its_suppression_lifted() {
    // Arrange: ann pending on news; on offers she said "not me" (the form posted the token alone)
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let (news_confirm, news_removal) = signed_up(&app, "ann@example.com", "news").await;
    let (_, offers_removal) = signed_up(&app, "ann@example.com", "offers").await;
    assert_eq!(location(&post_token(&app, "/api/manage", &offers_removal).await), "/removed?list=offers");
    assert_eq!(suppressions(&app), [("offers".to_owned(), "not_me".to_owned())]);
    let news_id: String =
        db(&app).query_row("SELECT id FROM subscribers WHERE list_id = 'news'", [], |row| row.get(0)).unwrap();

    // Act: the link from news' confirmation mail, both ticked
    let response = save(&app, &news_removal, &["news", "offers"]).await;

    // Assert
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(
        row(&app, "ann@example.com", "news"),
        Some(("confirmed".into(), Some("preferences".into()), "n1".into()))
    );
    assert_eq!(strings(&app, "SELECT id FROM subscribers WHERE list_id = 'news'"), [news_id], "the same row");
    assert_eq!(status(&app, "ann@example.com", "offers").as_deref(), Some("confirmed"));
    assert!(suppressions(&app).is_empty(), "the not_me suppression is lifted");
    assert_eq!(strings(&app, "SELECT kind FROM outbox ORDER BY kind"), ["welcome", "welcome"], "no confirm mail left");
    let events = delivered(&app, &receiver).await;
    assert_eq!(
        kinds(&events),
        [
            ("subscriber.confirmed".to_owned(), "news".to_owned()),
            ("subscriber.confirmed".to_owned(), "offers".to_owned())
        ]
    );
    let (code, page) = status_and_body(get(&app, &with_token("/confirm", &news_confirm)).await).await;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("Already confirmed"), "the mailed confirm link says so: {page}");
}

#[actix_web::test]
async fn a_pending_list_left_unticked_stays_pending_and_nothing_ticked_unsubscribes_every_confirmed_list() {
    // Arrange: jane confirmed on news, pending on offers
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    signed_up(&app, JANE, "offers").await;
    delivered(&app, &receiver).await;

    // Act: nothing ticked
    let response = save(&app, &news.removal, &[]).await;

    // Assert
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(status(&app, JANE, "news"), None, "unsubscribed");
    assert_eq!(status(&app, JANE, "offers").as_deref(), Some("pending"), "left as it was");
    assert_eq!(suppressions(&app), [("news".to_owned(), "unsubscribed".to_owned())]);
    assert_eq!(kinds(&delivered(&app, &receiver).await), [("subscriber.unsubscribed".to_owned(), "news".to_owned())]);
    // The link named the row that is gone: it now ends where any unknown link ends.
    assert_eq!(location(&save(&app, &news.removal, &["news"]).await), "/removed");
    assert_eq!(status(&app, JANE, "news"), None);
}

#[actix_web::test]
async fn saving_the_same_choice_twice_changes_nothing_the_second_time_and_sends_no_second_event() {
    // Arrange: jane confirmed on news and club
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    confirmed(&app, JANE, "club").await;
    let (_, offers_removal) = signed_up(&app, JANE, "offers").await;
    assert_eq!(location(&save(&app, &offers_removal, &["offers"]).await), "/saved?list=offers");
    deliver(&app).await;
    delivered(&app, &receiver).await;
    let before = dump(&app);
    app.clock.advance(Duration::from_secs(60));

    for (case, token, ticked) in [
        ("the same choice from news' link", &news.removal, &["offers"][..]),
        ("the same choice from offers' link", &offers_removal, &["offers"][..]),
        ("the same choice, a list named twice", &offers_removal, &["offers", "offers"][..]),
    ] {
        // Act
        let response = save(&app, token, ticked).await;

        // Assert
        let expected = if case.contains("news") { "/removed" } else { "/saved?list=offers" };
        assert_eq!(location(&response), expected, "{case}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
        assert!(delivered(&app, &receiver).await.is_empty(), "{case}: no event");
    }
    assert_eq!(status(&app, JANE, "news"), None, "news was unticked by the first save");
    assert_eq!(status(&app, JANE, "club").as_deref(), Some("confirmed"), "the other sender's list is untouched");
}

#[actix_web::test]
async fn a_list_of_another_sender_or_an_unknown_list_in_the_form_is_ignored() {
    // Arrange: jane confirmed on news; pending on the other sender's club; ann confirmed on club
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    signed_up(&app, JANE, "club").await;
    confirmed(&app, "ann@example.com", "club").await;
    delivered(&app, &receiver).await;
    let before = dump(&app);

    // Act: club ticked, and lists that do not exist
    let response = save(&app, &news.removal, &["news", "club", "nope", "", "NEWS", "offers\u{0}"]).await;

    // Assert
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(dump(&app), before, "nothing changed: club was never the page's to tick");
    assert_eq!(status(&app, JANE, "club").as_deref(), Some("pending"));

    // Act: news unticked, club ticked
    let response = save(&app, &news.removal, &["club"]).await;

    // Assert: news left; club untouched for both addresses
    assert_eq!(location(&response), "/saved?list=news");
    assert_eq!(status(&app, JANE, "news"), None);
    assert_eq!(status(&app, JANE, "club").as_deref(), Some("pending"));
    assert_eq!(status(&app, "ann@example.com", "club").as_deref(), Some("confirmed"));
    assert_eq!(kinds(&delivered(&app, &receiver).await), [("subscriber.unsubscribed".to_owned(), "news".to_owned())]);
}

// ---------------------------------------------------------------------------------------------
// Removing

#[actix_web::test]
async fn remove_me_from_all_removes_the_address_from_every_list_of_the_sender_and_no_other() {
    // Arrange: jane confirmed on news, pending on offers, confirmed on club; ann on news
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    signed_up(&app, JANE, "offers").await;
    confirmed(&app, JANE, "club").await;
    confirmed(&app, "ann@example.com", "news").await;
    delivered(&app, &receiver).await;

    // Act
    let response = remove_all(&app, &news.removal).await;

    // Assert: news as unsubscribed (with its event), offers as not_me, club and ann untouched
    assert_eq!(location(&response), "/removed?list=news");
    assert_eq!((status(&app, JANE, "news"), status(&app, JANE, "offers")), (None, None));
    assert_eq!(status(&app, JANE, "club").as_deref(), Some("confirmed"));
    assert_eq!(status(&app, "ann@example.com", "news").as_deref(), Some("confirmed"));
    assert_eq!(
        suppressions(&app),
        [("news".to_owned(), "unsubscribed".to_owned()), ("offers".to_owned(), "not_me".to_owned())]
    );
    assert_eq!(count(&app, "outbox"), 0, "no mail left for jane");
    let events = delivered(&app, &receiver).await;
    assert_eq!(kinds(&events), [("subscriber.unsubscribed".to_owned(), "news".to_owned())]);
    assert_eq!(events[0]["data"]["via"], "manage");

    // Act and assert: a repeat ends at /removed and changes nothing
    let before = dump(&app);
    let again = remove_all(&app, &news.removal).await;
    assert!(location(&again).starts_with("/removed"), "a repeat ends at /removed");
    assert_eq!(dump(&app), before);
}

#[actix_web::test]
async fn the_token_alone_still_removes_only_its_own_row_and_one_click_only_its_own_list() {
    // Arrange: jane confirmed on news and offers
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    let offers = confirmed(&app, JANE, "offers").await;

    // Act: a POST of the token alone (API clients, pages from before), and one-click for offers
    let manage = post_token(&app, "/api/manage", &news.removal).await;
    let one_click = app
        .client
        .post(app.url(&offers.one_click))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();

    // Assert
    assert_eq!(location(&manage), "/removed?list=news");
    let (code, text) = status_and_body(one_click).await;
    assert_eq!((code, text.as_str()), (200, "Unsubscribed"));
    assert_eq!((status(&app, JANE, "news"), status(&app, JANE, "offers")), (None, None));

    // Arrange again: each one-click removes one list only
    let news = confirmed(&app, "bob@example.com", "news").await;
    confirmed(&app, "bob@example.com", "offers").await;
    let one_click = app
        .client
        .post(app.url(&news.one_click))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(one_click.status().as_u16(), 200);
    assert_eq!(status(&app, "bob@example.com", "news"), None);
    assert_eq!(status(&app, "bob@example.com", "offers").as_deref(), Some("confirmed"));
}

// ---------------------------------------------------------------------------------------------
// Bad tokens and hostile bodies

#[actix_web::test]
async fn a_malformed_token_gets_400_and_an_unknown_one_ends_at_removed_with_nothing_changed() {
    // Arrange
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    confirmed(&app, JANE, "news").await;
    signed_up(&app, JANE, "offers").await;
    let before = dump(&app);
    let unknown = "A".repeat(43);
    let unknown_row = format!("{}.{}", uuid::Uuid::now_v7(), "A".repeat(43));

    for (case, token, expected) in [
        ("malformed", "cut-off", None),
        ("a 42-character token", &"A".repeat(42)[..], None),
        ("unknown 43-character token", &unknown[..], Some("/removed")),
        ("a removal token naming no row", &unknown_row[..], Some("/removed")),
    ] {
        // Act
        let saved = save(&app, token, &["news", "offers"]).await;
        let removed = remove_all(&app, token).await;
        let (page, _) = status_and_body(get(&app, &with_token("/manage", token)).await).await;

        // Assert
        for (what, response) in [("save", saved), ("remove all", removed)] {
            match expected {
                None => assert_eq!(response.status().as_u16(), 400, "{case}, {what}"),
                Some(path) => assert_eq!(location(&response), path, "{case}, {what}"),
            }
        }
        assert_eq!(page, if expected.is_none() { 400 } else { 200 }, "{case}: the page");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
}

#[actix_web::test]
async fn a_hostile_body_gets_a_clear_status_and_writes_nothing() {
    // Arrange: jane confirmed on news; offers would be confirmed by any save that got through
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    let token = news.removal.as_str();
    let before = dump(&app);
    let json = serde_json::json!({"token": token, "save": "preferences", "list": ["news", "offers"]}).to_string();
    let form = format!("token={token}&save=preferences&list=offers");
    let oversized = format!("{form}&padding={}", "a".repeat(5000));
    let many = format!("token={token}&save=preferences{}", "&list=offers".repeat(200));
    let fields: Vec<(&str, &str)> = [("token", token), ("save", "preferences")]
        .into_iter()
        .chain(std::iter::repeat_n(("list", "offers"), 200))
        .collect();
    let (multipart_type, multipart) = crate::signup::multipart_body(&fields);
    let urlencoded = "application/x-www-form-urlencoded";
    let cases: Vec<(&str, Option<&str>, Vec<u8>, u16)> = vec![
        ("JSON", Some("application/json"), json.into_bytes(), 415),
        ("plain text", Some("text/plain"), form.clone().into_bytes(), 415),
        ("no content type", None, form.clone().into_bytes(), 415),
        ("over max_body_bytes", Some(urlencoded), oversized.into_bytes(), 413),
        ("200 list fields", Some(urlencoded), many.into_bytes(), 400),
        // A multipart body of 200 fields is larger than any limit that keeps a form small.
        ("200 multipart list fields", Some(multipart_type.as_str()), multipart, 413),
        ("multipart without a boundary", Some("multipart/form-data"), form.into_bytes(), 400),
    ];

    for (case, content_type, body, expected) in cases {
        // Act
        let mut request = app.client.post(app.url("/api/manage")).body(body);
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        let (code, page) = status_and_body(request.send().await.unwrap()).await;

        // Assert
        assert_eq!(code, expected, "{case}: {page}");
        assert!(page.contains("The form could not be read"), "{case}: {page}");
        assert_eq!(dump(&app), before, "{case}: nothing changed");
    }
    assert_eq!(status(&app, JANE, "offers"), None);
}

#[actix_web::test]
async fn a_save_is_one_transaction_while_another_process_holds_the_write_lock_it_answers_503_and_changes_nothing() {
    // Arrange: a save that would remove news and confirm offers; another process holds the lock
    let receiver = Receiver::start(Reply::Status(204));
    let app = spawn(&receiver).await;
    let news = confirmed(&app, JANE, "news").await;
    signed_up(&app, JANE, "offers").await;
    let before = dump(&app);
    let blocker = db(&app);
    blocker.execute_batch("BEGIN EXCLUSIVE;").unwrap();

    // Act
    let saved = save(&app, &news.removal, &["offers"]).await;
    let removed = remove_all(&app, &news.removal).await;

    // Assert: neither half of either was written
    for (case, response) in [("save", saved), ("remove all", removed)] {
        assert_eq!(response.status().as_u16(), 503, "{case}");
        assert_eq!(crate::signup::header(&response, "retry-after").as_deref(), Some("30"), "{case}");
    }
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(dump(&app), before, "nothing changed");

    // Act and assert: once the lock is gone, the same save does both at once
    assert_eq!(location(&save(&app, &news.removal, &["offers"]).await), "/saved?list=news");
    assert_eq!(status(&app, JANE, "news"), None);
    assert_eq!(status(&app, JANE, "offers").as_deref(), Some("confirmed"));
}
