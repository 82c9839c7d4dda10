//! Several lists in one signup (docs/http-api.md): one confirmation mail for the lists of one
//! sender, whose one button confirms them all; another sender's list gets its own mail; the
//! answer stays the same whatever mix of states the lists are in; the hosted form offers a
//! checkbox per list; a list's `confirmed_url` ends the confirmation on the operator's page.
//! The shared mail is tested step by step, through a relay that fails, and with the real mail
//! workers racing.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;
use signupd::outbound::mail::{MailOutcome, try_execute_task};

use crate::confirm::{deliver, get, location, post_fields, post_token, status_and_body};
use crate::helpers::{TestApp, spawn_app_with};
use crate::mail::race_mail_workers;
use crate::signup::{Answer, count, db, drain, form_body, json_request, strings};

/// Lists `a` and `b` share a sender, `c` has its own; the limits leave room for every test.
const LISTS: &str = r#"
[signup]
rate_limits = [ { window = "10m", max = 1000 } ]
network_rate_limits = [ { window = "10m", max = 10000 } ]
max_mails_per_address_per_day = 50

[[lists]]
id = "a"
name = "Alpha News"
from = "Shop <news@shop.example>"
allowed_origins = ["https://www.shop.example"]
confirmed_url = "https://www.shop.example/thanks?from=mail"

[[lists]]
id = "b"
name = "Beta Offers"
from = "Shop <news@shop.example>"

[[lists]]
id = "c"
name = "Club Letter"
from = "Club <letter@club.example>"
"#;

async fn app() -> TestApp {
    spawn_app_with(LISTS).await
}

/// A browser form post of a signup of `email` for `lists`.
async fn sign_up(app: &TestApp, email: &str, lists: &[&str]) -> reqwest::Response {
    let mut fields = vec![("email", email), ("consent", "yes")];
    fields.extend(lists.iter().map(|list| ("list", *list)));
    post_fields(app, "/api/signup", &fields).await
}

/// Each row of `email`: list, status and confirm method.
fn rows(app: &TestApp, email: &str) -> Vec<String> {
    let conn = db(app);
    let mut statement = conn
        .prepare(
            "SELECT list_id || ' ' || status || ' ' || coalesce(confirm_method, '-') FROM subscribers
             WHERE email = ?1 ORDER BY list_id",
        )
        .unwrap();
    statement.query_map([email], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

fn confirm_hashes(app: &TestApp, email: &str) -> Vec<String> {
    let conn = db(app);
    let mut statement =
        conn.prepare("SELECT coalesce(confirm_hash, '-') FROM subscribers WHERE email = ?1 ORDER BY list_id").unwrap();
    statement.query_map([email], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

#[actix_web::test]
async fn lists_of_one_sender_share_one_mail_whose_button_confirms_them_all_and_another_sender_mails_apart() {
    // Arrange
    let app = app().await;
    assert_eq!(location(&sign_up(&app, "ann@example.com", &["a", "b", "c"]).await), "/check-inbox?list=a");
    drain(&app).await;
    assert_eq!(rows(&app, "ann@example.com"), ["a pending -", "b pending -", "c pending -"]);

    // Act
    let mails = deliver(&app).await;

    // Assert: two mails — one for a and b, one for c
    assert_eq!(mails.len(), 2, "one mail per sender");
    let shop = mails.iter().find(|mail| mail.text().contains("From: Shop")).expect("the shop's mail");
    let club = mails.iter().find(|mail| mail.text().contains("From: Club")).expect("the club's mail");
    assert!(shop.text().contains("Alpha News and Beta Offers"), "the shared mail names both lists");
    assert!(!shop.text().contains("Club Letter"));
    assert!(club.text().contains("Club Letter") && !club.text().contains("Alpha News"));
    let hashes = confirm_hashes(&app, "ann@example.com");
    assert_eq!(hashes[0], hashes[1], "a and b carry the one token's hash");
    assert_ne!(hashes[0], hashes[2]);

    // Act: the confirm page, then its one button
    let (status, page) =
        status_and_body(get(&app, &format!("/confirm?{}", form_body(&[("token", &shop.confirm_token())]))).await).await;
    assert_eq!(status, 200);
    assert!(page.contains("Alpha News and Beta Offers"), "the page names both lists");
    let confirmed = post_token(&app, "/api/confirm", &shop.confirm_token()).await;

    // Assert: both confirmed at once, c still waits for its own mail's button
    assert_eq!(location(&confirmed), "https://www.shop.example/thanks?from=mail&signup=confirmed");
    assert_eq!(rows(&app, "ann@example.com"), ["a confirmed button", "b confirmed button", "c pending -"]);
    let welcomes = deliver(&app).await;
    assert_eq!(welcomes.len(), 2, "one welcome per list, each with its own one-click unsubscribe");
    let unsubscribe: BTreeSet<String> = welcomes.iter().map(|mail| mail.list_unsubscribe()).collect();
    assert_eq!(unsubscribe.len(), 2);

    // Act: a repeat of the button ends at the same page; c's own button confirms c alone
    let repeat = post_token(&app, "/api/confirm", &shop.confirm_token()).await;
    let club_confirmed = post_token(&app, "/api/confirm", &club.confirm_token()).await;

    // Assert
    assert_eq!(location(&repeat), "https://www.shop.example/thanks?from=mail&signup=confirmed");
    assert_eq!(location(&club_confirmed), "/confirmed?list=c");
    assert_eq!(rows(&app, "ann@example.com"), ["a confirmed button", "b confirmed button", "c confirmed button"]);
}

#[actix_web::test]
async fn a_list_already_confirmed_or_mailed_lately_stays_out_of_the_shared_mail() {
    // Arrange: ann is confirmed on a
    let app = app().await;
    sign_up(&app, "ann@example.com", &["a"]).await;
    drain(&app).await;
    let first = deliver(&app).await;
    post_token(&app, "/api/confirm", &first[0].confirm_token()).await;
    deliver(&app).await;

    // Act: she signs up for a and b again
    sign_up(&app, "ann@example.com", &["a", "b"]).await;
    drain(&app).await;
    let mails = deliver(&app).await;

    // Assert: one mail, for b only
    assert_eq!(mails.len(), 1);
    assert!(mails[0].text().contains("Beta Offers") && !mails[0].text().contains("Alpha News and"));
    assert_eq!(rows(&app, "ann@example.com"), ["a confirmed button", "b pending -"]);
}

#[actix_web::test]
async fn the_answer_is_the_same_whatever_mix_of_states_the_lists_are_in() {
    // Arrange: mixed states on a, b and c for one address
    let app = app().await;
    sign_up(&app, "mixed@example.com", &["a", "b"]).await;
    drain(&app).await;
    let mails = deliver(&app).await;
    post_token(&app, "/api/confirm", &mails[0].confirm_token()).await;
    db(&app).execute("DELETE FROM subscribers WHERE email = 'mixed@example.com' AND list_id = 'b'", []).unwrap();
    sign_up(&app, "mixed@example.com", &["b"]).await;
    drain(&app).await;
    let before =
        strings(&app, "SELECT list_id || status || removal_hash || created_at FROM subscribers ORDER BY list_id");

    for json_client in [false, true] {
        // Act
        let mut answers = Vec::new();
        for email in [format!("new-{json_client}@example.com"), "mixed@example.com".to_owned()] {
            let response = if json_client {
                json_request(&app, json!({"email": email, "consent": true, "list": ["a", "b", "c"]}))
                    .send()
                    .await
                    .unwrap()
            } else {
                sign_up(&app, &email, &["a", "b", "c"]).await
            };
            answers.push(Answer::of(response).await);
        }

        // Assert
        assert_eq!(
            answers[0], answers[1],
            "json client {json_client}: unknown everywhere vs. confirmed/pending/unknown"
        );
        assert_eq!(answers[0].status, if json_client { 202 } else { 303 });
    }
    drain(&app).await;
    let after = strings(
        &app,
        "SELECT list_id || status || removal_hash || created_at FROM subscribers
         WHERE email NOT LIKE 'new-%' AND list_id IN ('a', 'b') ORDER BY list_id",
    );
    assert_eq!(after, before, "repeats change no existing row");
}

#[actix_web::test]
async fn every_named_list_must_exist_and_each_is_named_once() {
    let app = app().await;

    // Act
    let unknown = sign_up(&app, "ann@example.com", &["a", "nope"]).await;
    let (status, body) = status_and_body(
        json_request(&app, json!({"email": "ann@example.com", "consent": true, "list": ["a", 7]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let repeated = sign_up(&app, "bob@example.com", &["a", "a", "b", "a"]).await;
    drain(&app).await;

    // Assert
    assert_eq!(unknown.status().as_u16(), 400);
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        json!({"ok": false, "error": "unknown_list"})
    );
    assert_eq!(repeated.status().as_u16(), 303);
    assert!(rows(&app, "ann@example.com").is_empty(), "nothing saved for a refused signup");
    assert_eq!(rows(&app, "bob@example.com"), ["a pending -", "b pending -"]);
}

#[actix_web::test]
async fn the_origin_must_suit_every_named_list() {
    // Arrange: a allows only the shop's site; b and c accept any origin
    let app = app().await;
    let post = |lists: &'static [&'static str], origin: &'static str| {
        let mut fields = vec![("email", "ann@example.com"), ("consent", "yes")];
        fields.extend(lists.iter().map(|list| ("list", *list)));
        app.client
            .post(app.url("/api/signup"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .header("Origin", origin)
            .body(form_body(&fields))
            .send()
    };

    // Act
    let foreign = post(&["b", "a"], "https://evil.example").await.unwrap().status().as_u16();
    let allowed = post(&["b", "a"], "https://www.shop.example").await.unwrap().status().as_u16();
    let unrestricted = post(&["b", "c"], "https://evil.example").await.unwrap().status().as_u16();

    // Assert
    assert_eq!((foreign, allowed, unrestricted), (403, 202, 202));
}

#[actix_web::test]
async fn the_hosted_form_offers_a_checkbox_per_list_and_asks_again_when_none_is_ticked() {
    let app = app().await;

    // Act
    let (status, form) = status_and_body(get(&app, "/signup?list=a&list=b&list=c").await).await;
    let unticked = post_fields(
        &app,
        "/api/signup",
        &[("email", "ann@example.com"), ("consent", "yes"), ("offered", "a"), ("offered", "b")],
    )
    .await;
    let unknown = get(&app, "/signup?list=a&list=nope").await.status().as_u16();

    // Assert
    assert_eq!(status, 200);
    for list in ["a", "b", "c"] {
        assert!(
            form.contains(&format!(r#"<input type="checkbox" id="list-{list}" name="list" value="{list}">"#)),
            "{form}"
        );
    }
    assert!(form.contains("Alpha News") && form.contains("Club Letter"));
    let (status, again) = status_and_body(unticked).await;
    assert_eq!(status, 400);
    assert!(again.contains("Please tick at least one list."), "{again}");
    assert!(again.contains(r#"value="ann@example.com""#), "the typed address is kept");
    assert!(again.contains(r#"id="list-b""#) && !again.contains(r#"id="list-c""#), "the same choice as before");
    assert!(
        again.contains(r#"<fieldset class="field lists" aria-describedby="form-error">"#),
        "the message describes the choice"
    );
    assert!(!again.contains(r#"maxlength="254" aria-describedby="form-error""#), "not the address, which was fine");
    assert_eq!(unknown, 404);
    assert_eq!(count(&app, "intake"), 0);
}

#[actix_web::test]
async fn a_retyped_wrong_address_shows_the_page_again_even_with_a_confirmed_url() {
    // Arrange: a asks for the address, and ends on the shop's page
    let config = LISTS.replace("confirmed_url = ", "confirm_mode = \"retype\"\nconfirmed_url = ");
    let app = spawn_app_with(&config).await;
    sign_up(&app, "ann@example.com", &["a", "b"]).await;
    drain(&app).await;
    let token = deliver(&app).await[0].confirm_token();

    // Act
    let wrong = post_fields(&app, "/api/confirm", &[("token", &token), ("email", "eve@example.com")]).await;
    let wrong_status = wrong.status().as_u16();
    let wrong_page = wrong.text().await.unwrap();
    let right = post_fields(&app, "/api/confirm", &[("token", &token), ("email", "ann@example.com")]).await;

    // Assert
    assert_eq!(wrong_status, 400);
    assert!(wrong_page.contains(r#"name="email""#), "the page asks again");
    assert_eq!(location(&right), "https://www.shop.example/thanks?from=mail&signup=confirmed");
    assert_eq!(rows(&app, "ann@example.com"), ["a confirmed retype", "b confirmed retype"]);
}

#[actix_web::test]
async fn a_shared_mail_that_fails_is_retried_for_all_its_lists_and_sent_once() {
    // Arrange: a relay that refuses once (451), then accepts
    let smtp = crate::smtp_server::SmtpServer::start();
    smtp.answer_data_with(&[451]);
    let app = spawn_app_with(&format!("{LISTS}\n{}", smtp.config())).await;
    sign_up(&app, "ann@example.com", &["a", "b"]).await;
    drain(&app).await;

    // Act
    let first = try_execute_task(&app.state.mailer()).await.unwrap();
    let after_failure = confirm_hashes(&app, "ann@example.com");
    app.clock.advance(Duration::from_secs(120));
    let second = try_execute_task(&app.state.mailer()).await.unwrap();
    let third = try_execute_task(&app.state.mailer()).await.unwrap();

    // Assert
    assert!(matches!(first, MailOutcome::Retrying { .. }), "{first:?}");
    assert_eq!(after_failure, ["-", "-"], "both stamps are taken back with the failed mail");
    assert_eq!((second, third), (MailOutcome::Sent, MailOutcome::EmptyQueue));
    assert_eq!(smtp.received().len(), 1, "one mail for both lists");
    let hashes = confirm_hashes(&app, "ann@example.com");
    assert!(hashes[0] != "-" && hashes[0] == hashes[1]);
    assert_eq!(count(&app, "outbox"), 0);
}

#[actix_web::test]
async fn sixteen_real_workers_send_each_address_one_mail_for_its_two_lists() {
    // Arrange: forty addresses, each signed up for a and b
    let app = app().await;
    for n in 0..40 {
        sign_up(&app, &format!("reader{n}@example.com"), &["a", "b"]).await;
    }
    drain(&app).await;
    assert_eq!(count(&app, "outbox"), 80);

    // Act
    race_mail_workers(&app, || count(&app, "outbox") == 0).await;

    // Assert: forty mails, and every address's two rows share one token
    let files = std::fs::read_dir(app.data_dir().join("mail")).unwrap().count();
    assert_eq!(files, 40, "one mail per address");
    let pairs = strings(
        &app,
        "SELECT email FROM subscribers WHERE confirm_hash IS NOT NULL
         GROUP BY email HAVING count(DISTINCT confirm_hash) = 1 AND count(*) = 2",
    );
    assert_eq!(pairs.len(), 40);
    assert_eq!(count(&app, "outbox"), 0);
}

/// The `html` block under "Several lists in one form" in docs/http-api.md.
fn documented_form() -> String {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/http-api.md")).unwrap();
    let section = guide.split("### Several lists in one form").nth(1).expect("the section");
    let block = section.split("```html\n").nth(1).expect("an html example");
    block.split("```").next().unwrap().to_owned()
}

/// The fields a browser sends for `form`'s inputs as they stand: hidden ones, and checkboxes
/// that are `checked`, each `name=value`.
fn fields_sent(form: &str) -> Vec<(String, String)> {
    let attribute = |tag: &str, name: &str| {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[start..].split('"').next()?.to_owned())
    };
    form.split("<input")
        .skip(1)
        .map(|rest| rest.split('>').next().unwrap())
        .filter(|tag| {
            tag.contains(r#"type="hidden""#) || (tag.contains(r#"type="checkbox""#) && tag.contains(" checked"))
        })
        .filter_map(|tag| Some((attribute(tag, "name")?, attribute(tag, "value")?)))
        .collect()
}

#[actix_web::test]
async fn the_documented_two_list_form_signs_up_for_its_ticked_lists_with_its_source() {
    // Arrange: the lists the example names, with the example's site allowed
    let app = spawn_app_with(
        "[[lists]]\nid = \"news\"\nallowed_origins = [\"https://www.example.com\"]\n\
         [[lists]]\nid = \"offers\"\nallowed_origins = [\"https://www.example.com\"]\n",
    )
    .await;
    let form = documented_form();
    assert!(form.contains(r#"action="https://signup.example.com/api/signup""#));
    let mut fields = fields_sent(&form);
    assert!(fields.contains(&("list".to_owned(), "news".to_owned())), "{fields:?}");
    // The visitor ticks the second list too, types an address and ticks consent.
    fields.extend(
        [("list", "offers"), ("email", "ann@example.com"), ("consent", "yes")]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();

    // Act
    let response = app
        .client
        .post(app.url("/api/signup"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", "https://www.example.com")
        .body(form_body(&pairs))
        .send()
        .await
        .unwrap();
    drain(&app).await;

    // Assert
    assert_eq!(location(&response), "https://www.example.com/newsletter/?signup=check-inbox");
    assert_eq!(rows(&app, "ann@example.com"), ["news pending -", "offers pending -"]);
    let sources = strings(&app, "SELECT source FROM subscribers ORDER BY list_id");
    assert_eq!(sources, ["homepage-footer", "homepage-footer"]);
    assert_eq!(deliver(&app).await.len(), 1, "one sender, one mail");
}

#[actix_web::test]
async fn the_per_address_cap_counts_the_shared_mail_once() {
    // Arrange: one confirmation mail a day per address
    let app =
        spawn_app_with(&LISTS.replace("max_mails_per_address_per_day = 50", "max_mails_per_address_per_day = 1")).await;
    sign_up(&app, "ann@example.com", &["a", "b", "c"]).await;
    drain(&app).await;

    // Act
    let mut outcomes = Vec::new();
    loop {
        match try_execute_task(&app.state.mailer()).await.unwrap() {
            MailOutcome::EmptyQueue => break,
            outcome => outcomes.push(outcome),
        }
    }

    // Assert: the shared mail for a and b went; c's own mail would have been the second
    assert!(outcomes.contains(&MailOutcome::Sent) && outcomes.contains(&MailOutcome::Capped), "{outcomes:?}");
    assert_eq!(outcomes.iter().filter(|outcome| **outcome == MailOutcome::Sent).count(), 1);
    assert_eq!(rows(&app, "ann@example.com"), ["a pending -", "b pending -"], "c was never mailed, so it is gone");
    let hashes = confirm_hashes(&app, "ann@example.com");
    assert!(hashes[0] != "-" && hashes[0] == hashes[1]);
}

#[actix_web::test]
async fn the_confirm_page_may_post_to_the_confirmed_url_origin_and_no_other_page_may() {
    // Arrange: a ends at the shop's site; c at signupd's own page
    let app = app().await;
    sign_up(&app, "ann@example.com", &["a", "b", "c"]).await;
    drain(&app).await;
    let mails = deliver(&app).await;
    let token_of = |sender: &str| {
        mails.iter().find(|mail| mail.text().contains(&format!("From: {sender}"))).unwrap().confirm_token()
    };
    let csp = |response: &reqwest::Response| crate::signup::header(response, "content-security-policy").unwrap();

    // Act
    let shop = get(&app, &format!("/confirm?{}", form_body(&[("token", &token_of("Shop"))]))).await;
    let club = get(&app, &format!("/confirm?{}", form_body(&[("token", &token_of("Club"))]))).await;
    let form = get(&app, "/signup?list=a").await;

    // Assert: browsers hold the POST's redirect to the page's form-action
    assert_eq!(shop.status().as_u16(), 200);
    assert!(csp(&shop).contains("form-action 'self' https://www.shop.example;"), "{}", csp(&shop));
    assert!(csp(&club).contains("form-action 'self';"), "{}", csp(&club));
    assert!(csp(&form).contains("form-action 'self';"), "{}", csp(&form));
    assert_eq!(csp(&shop).replace(" https://www.shop.example", ""), csp(&club), "nothing else differs");
}
