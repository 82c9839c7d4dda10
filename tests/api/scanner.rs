//! What mail scanners and link previewers do to the links of a mail (docs/http-api.md: no GET or HEAD changes
//! anything): they open every URL with GET, HEAD and OPTIONS under many User-Agents and follow redirects, and none of
//! it may change the database. Also the headers on every HTML page, error pages included.

use reqwest::Method;

use crate::confirm::{
    confirmed_and_welcomed, dump, get, post_token, signed_up_and_mailed, status_and_body, with_token,
};
use crate::helpers::{TestApp, spawn_app_with};
use crate::signup::{RAISED_LIMITS, header, post_form};

const USER_AGENTS: [&str; 12] = [
    // Microsoft Defender for Office 365 Safe Links
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0 SafeLinks",
    "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)",
    "Proofpoint URL Defense/1.0",
    "Barracuda Sentinel (EE)",
    "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "WhatsApp/2.23.20.0",
    "Mozilla/5.0 (compatible; Mimecast/1.0)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "curl/8.5.0",
    "Wget/1.21.4",
];

/// Two subscribers as a mailbox would hold them: ann's confirmation mail (her confirm page
/// already opened) and bob's welcome mail.
struct Links {
    app: TestApp,
    ann_confirm: String,
    ann_removal: String,
    bob_confirm: String,
    bob_removal: String,
    bob_signed: String,
    bob_unsubscribe: String,
}

async fn mailbox() -> Links {
    let app = spawn_app_with(RAISED_LIMITS).await;
    let welcome = confirmed_and_welcomed(&app, "bob@example.com").await;
    let (ann_confirm, ann_removal) = signed_up_and_mailed(&app, "ann@example.com").await;
    let (status, _) = status_and_body(get(&app, &with_token("/confirm", &ann_confirm)).await).await;
    assert_eq!(status, 200, "the confirm page of the setup");
    Links {
        app,
        ann_confirm,
        ann_removal,
        bob_confirm: welcome.confirm,
        bob_removal: welcome.removal,
        bob_signed: welcome.signed,
        bob_unsubscribe: welcome.unsubscribe_path,
    }
}

#[actix_web::test]
async fn a_storm_of_scanners_on_every_link_changes_nothing() {
    // Arrange
    let links = mailbox().await;
    let app = &links.app;
    let urls = [
        with_token("/confirm", &links.ann_confirm),
        with_token("/confirm", &links.bob_confirm),
        with_token("/manage", &links.ann_removal),
        with_token("/manage", &links.bob_removal),
        with_token("/manage", &links.bob_signed),
        links.bob_unsubscribe.clone(),
        with_token("/api/unsubscribe", &links.ann_removal),
        with_token("/api/confirm", &links.ann_confirm),
        with_token("/api/manage", &links.ann_removal),
        "/confirmed?list=news".to_owned(),
        "/removed?list=news".to_owned(),
    ];
    // Scanners follow redirects.
    let scanner = reqwest::Client::builder().build().unwrap();
    let before = dump(app);

    // Act
    for url in &urls {
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            for agent in USER_AGENTS {
                let response = scanner
                    .request(method.clone(), app.url(url))
                    .header("User-Agent", agent)
                    .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                assert!(status < 500, "{method} {url} as {agent:?}: {status}");
            }
        }
    }

    // Assert
    assert_eq!(dump(app), before, "no scanner request wrote anything");
}

#[actix_web::test]
async fn every_html_page_carries_the_security_headers_and_no_script() {
    // Arrange
    let links = mailbox().await;
    let app = &links.app;
    let unknown = "A".repeat(43);
    let cases: Vec<(&str, Method, String, Option<String>, u16)> = vec![
        ("index", Method::GET, "/".into(), None, 200),
        ("signup form", Method::GET, "/signup?list=news".into(), None, 200),
        ("check inbox", Method::GET, "/check-inbox?list=news".into(), None, 200),
        ("confirm page", Method::GET, with_token("/confirm", &links.ann_confirm), None, 200),
        ("already confirmed", Method::GET, with_token("/confirm", &links.bob_confirm), None, 200),
        ("confirmed", Method::GET, "/confirmed?list=news".into(), None, 200),
        ("manage, removal token", Method::GET, with_token("/manage", &links.ann_removal), None, 200),
        ("manage, signed token", Method::GET, with_token("/manage", &links.bob_signed), None, 200),
        ("removed", Method::GET, "/removed?list=news".into(), None, 200),
        ("confirm page, malformed token", Method::GET, with_token("/confirm", "short"), None, 400),
        ("confirm page, unknown token", Method::GET, with_token("/confirm", &unknown), None, 410),
        ("manage page, malformed token", Method::GET, with_token("/manage", "short"), None, 400),
        ("confirm POST, malformed token", Method::POST, "/api/confirm".into(), Some("short".into()), 400),
        ("confirm POST, unknown token", Method::POST, "/api/confirm".into(), Some(unknown.clone()), 410),
        ("manage POST, malformed token", Method::POST, "/api/manage".into(), Some("short".into()), 400),
    ];

    for (case, method, path, token, expected) in cases {
        // Act
        let response = match token {
            Some(token) => post_token(app, &path, &token).await,
            None => app.client.request(method, app.url(&path)).send().await.unwrap(),
        };

        // Assert
        assert_eq!(response.status().as_u16(), expected, "{case}: status");
        assert_html_headers(&response, case);
        let body = response.text().await.unwrap();
        assert!(body.contains("<html lang="), "{case}: <html lang>: {body}");
        assert!(!body.to_lowercase().contains("<script"), "{case}: no script: {body}");
    }
}

#[actix_web::test]
async fn the_signup_error_page_carries_the_security_headers_too() {
    let app = spawn_app_with(RAISED_LIMITS).await;

    let response = post_form(&app, &[("email", "not an address"), ("consent", "yes")]).await;

    assert_eq!(response.status().as_u16(), 400);
    assert_html_headers(&response, "signup error page");
    let body = response.text().await.unwrap();
    assert!(!body.to_lowercase().contains("<script"), "{body}");
}

/// docs/http-api.md, "Headers on every answer": the headers every HTML response carries.
fn assert_html_headers(response: &reqwest::Response, case: &str) {
    let expected = [
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("x-robots-tag", "noindex, nofollow"),
        ("x-content-type-options", "nosniff"),
        (
            "content-security-policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
        ("cross-origin-opener-policy", "same-origin"),
    ];
    let content_type = header(response, "content-type").unwrap_or_default();
    assert!(content_type.starts_with("text/html"), "{case}: content type {content_type:?}");
    for (name, value) in expected {
        assert_eq!(header(response, name).as_deref(), Some(value), "{case}: {name}");
    }
    assert!(
        header(response, "permissions-policy").is_some_and(|policy| !policy.trim().is_empty()),
        "{case}: a Permissions-Policy"
    );
}
