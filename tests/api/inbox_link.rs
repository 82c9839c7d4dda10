//! The "open your inbox" link (docs/http-api.md, "The answers"): a signup at a known provider's
//! domain sends the browser to `/check-inbox?list=ID&inbox=ID` (or `return_to` with `inbox=ID`
//! beside `signup=check-inbox`), a JSON answer gains `inbox`, and the page links to the
//! provider's search for the list's sender. The address is in none of it, and the answer is the
//! same for every state of the address (and for the honeypot). With `check_mx` a company's own
//! domain is found by its MX hosts: see `domains.rs`.

use serde_json::{Value, json};

use crate::helpers::spawn_app_with;
use crate::signup::{Answer, RAISED_LIMITS, db, drain, header, post_form, post_json, valid, valid_json};

const SENDER_LIST: &str = "[[lists]]\nid = \"news\"\nname = \"News\"\nfrom = \"News <news+letter@lists.test>\"\n\
    allowed_origins = [\"https://www.example.com\"]\n\
    [[lists]]\nid = \"nachrichten\"\nname = \"Nachrichten\"\nlanguage = \"de\"\nfrom = \"post@lists.test\"\n";
const GMAIL_SEARCH: &str =
    "https://mail.google.com/mail/u/0/#search/from%3A(news%2Bletter%40lists.test)+in%3Aanywhere+newer_than%3A1h";

async fn app() -> crate::helpers::TestApp {
    spawn_app_with(&format!("{RAISED_LIMITS}{SENDER_LIST}")).await
}

#[actix_web::test]
async fn a_known_domain_adds_the_provider_to_the_answer_and_the_page_links_to_its_search() {
    let app = app().await;

    let browser = post_form(&app, &valid("Ann.Lee@GMAIL.com")).await;
    assert_eq!(browser.status().as_u16(), 303);
    let location = header(&browser, "location").unwrap();
    assert_eq!(location, "/check-inbox?list=news&inbox=gmail", "the provider's id, never the address");
    let page = app.client.get(app.url(&location)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains(&format!("<a href=\"{GMAIL_SEARCH}\" rel=\"noreferrer\">Open Gmail</a>")), "{page}");
    assert!(!page.to_lowercase().contains("ann.lee"), "the page does not know the address");

    let json_answer: Value = post_json(&app, valid_json("bob@hotmail.de")).await.json().await.unwrap();
    assert_eq!(
        json_answer,
        json!({"ok": true, "next": "confirm_email", "inbox": {"name": "Outlook", "url": "https://outlook.live.com/mail/"}})
    );

    let mut fields = valid("cat@proton.me");
    fields.push(("return_to", "https://www.example.com/thanks?from=footer"));
    let returned = post_form(&app, &fields).await;
    assert_eq!(
        header(&returned, "location").as_deref(),
        Some("https://www.example.com/thanks?from=footer&signup=check-inbox&inbox=proton")
    );
}

#[actix_web::test]
async fn an_unknown_domain_or_a_made_up_id_gets_no_link() {
    let app = app().await;
    let browser = post_form(&app, &valid("dan@example.org")).await;
    assert_eq!(header(&browser, "location").as_deref(), Some("/check-inbox?list=news"));
    let json_answer: Value = post_json(&app, valid_json("eve@mail.gmail.com")).await.json().await.unwrap();
    assert_eq!(json_answer, json!({"ok": true, "next": "confirm_email"}), "a subdomain is not the provider");
    for query in ["list=news", "list=news&inbox=evil", "list=news&inbox=https%3A%2F%2Fevil.example", "list=news&inbox="]
    {
        let page = app.client.get(app.url(&format!("/check-inbox?{query}"))).send().await.unwrap();
        assert_eq!(page.status().as_u16(), 200, "{query}");
        let page = page.text().await.unwrap();
        assert!(!page.contains("class=\"inbox\"") && !page.contains("evil"), "{query}: {page}");
    }
}

#[actix_web::test]
async fn the_link_speaks_the_lists_language_and_searches_for_its_sender() {
    let app = app().await;
    let page = app.client.get(app.url("/check-inbox?list=nachrichten&inbox=yahoo")).send().await.unwrap();
    let page = page.text().await.unwrap();
    assert!(
        page.contains("<a href=\"https://mail.yahoo.com/d/search/keyword=from:post%40lists.test\" rel=\"noreferrer\">Yahoo Mail öffnen</a>"),
        "{page}"
    );
    let inbox_only = app.client.get(app.url("/check-inbox?list=nachrichten&inbox=webde")).send().await.unwrap();
    assert!(
        inbox_only.text().await.unwrap().contains("<a href=\"https://web.de/\" rel=\"noreferrer\">WEB.DE öffnen</a>")
    );
}

#[actix_web::test]
async fn the_answer_with_a_link_is_the_same_for_every_address_state_and_the_honeypot() {
    let app = app().await;
    for email in ["pending@gmail.com", "confirmed@gmail.com"] {
        assert_eq!(post_form(&app, &valid(email)).await.status(), 303, "{email}: arrange");
    }
    drain(&app).await;
    db(&app)
        .execute(
            "UPDATE subscribers SET status = 'confirmed', confirmed_at = 1 WHERE email = 'confirmed@gmail.com'",
            [],
        )
        .unwrap();
    for json_client in [false, true] {
        let mut answers = Vec::new();
        for (state, email, honeypot) in [
            ("unknown", format!("unknown-{json_client}@gmail.com"), ""),
            ("pending", "pending@gmail.com".to_owned(), ""),
            ("confirmed", "confirmed@gmail.com".to_owned(), ""),
            ("honeypot", "bot@gmail.com".to_owned(), "http://spam.example"),
        ] {
            let response = if json_client {
                let mut body = valid_json(&email);
                body["website"] = honeypot.into();
                post_json(&app, body).await
            } else {
                let mut fields = valid(&email);
                fields.push(("website", honeypot));
                post_form(&app, &fields).await
            };
            answers.push((state, Answer::of(response).await));
        }
        let (_, unknown) = &answers[0];
        let shown =
            String::from_utf8_lossy(&unknown.body).into_owned() + &format!("{:?}", unknown.headers.get("location"));
        assert!(shown.to_lowercase().contains("gmail"), "json {json_client}: the answer names the provider: {shown}");
        for (state, answer) in &answers[1..] {
            assert_eq!(answer, unknown, "json {json_client}: a {state} address's answer differs from an unknown one's");
        }
    }
}
