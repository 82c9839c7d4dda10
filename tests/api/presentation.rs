//! How a list's pages look and speak: the site's name and the way back to it, the accent
//! colour's stylesheet, the operator's stylesheet under the unchanged CSP, the language, and the
//! privacy page written from the configuration.

use crate::helpers::{files_under, signupd, spawn_app_with, write_config};
use crate::signup::{RAISED_LIMITS, form_body};

/// The exact policy every page carries, whatever the operator's stylesheet says.
const CSP: &str =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A German list with a brand, and a plain English one beside it.
const BRANDED: &str = "[[lists]]\nid = \"backstube\"\nname = \"Brotbrief\"\nsite_name = \"Bäckerei Korn\"\n\
    site_url = \"https://baeckerei.test/\"\naccent_color = \"#ffd400\"\nlanguage = \"de\"\n\
    [[lists]]\nid = \"news\"\nname = \"News\"\n";

async fn page(app: &crate::helpers::TestApp, path: &str) -> (u16, String) {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// What every page of the branded list must show.
fn assert_branded(path: &str, html: &str) {
    assert!(html.contains("<html lang=\"de\" dir=\"ltr\">"), "{path}: German page\n{html}");
    assert!(
        html.contains("<a href=\"https://baeckerei.test/\">← Zurück zu Bäckerei Korn</a>"),
        "{path}: way back\n{html}"
    );
    assert!(html.contains(" · Bäckerei Korn</title>"), "{path}: site in the title\n{html}");
    assert!(
        html.contains("<link rel=\"stylesheet\" href=\"/static/list.css?list=backstube\">"),
        "{path}: accent\n{html}"
    );
    let privacy_link = html.contains("<a href=\"/privacy?list=backstube\">Was gespeichert wird und wie lange</a>");
    assert_eq!(privacy_link, !path.starts_with("/privacy"), "{path}: the privacy link, except on the privacy page");
    assert!(!html.contains(" style="), "{path}: no inline style");
}

#[actix_web::test]
async fn every_page_of_a_branded_list_shows_its_site_language_and_colour() {
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{BRANDED}")).await;

    let pages = [
        ("/signup?list=backstube", 200, "<h1>Anmeldung für Brotbrief</h1>"),
        ("/check-inbox?list=backstube", 200, "<strong>Brotbrief</strong>"),
        ("/confirmed?list=backstube", 200, "Ihre Adresse ist jetzt für Brotbrief angemeldet."),
        ("/removed?list=backstube", 200, "Ihre Adresse wurde aus Brotbrief entfernt."),
        ("/privacy?list=backstube", 200, "<h1>Was mit Ihrer Adresse geschieht</h1>"),
    ];
    for (path, status, content) in pages {
        let (got, html) = page(&app, path).await;
        assert_eq!(got, status, "{path}");
        assert!(html.contains(content), "{path}: {content:?} in\n{html}");
        assert_branded(path, &html);
    }

    // The form with an error, re-rendered in the list's language, keeps the brand.
    let response = app
        .client
        .post(app.url("/api/signup"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_body(&[("email", "kein-at"), ("consent", "yes"), ("list", "backstube")]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let html = response.text().await.unwrap();
    assert!(html.contains("Bitte geben Sie eine gültige E-Mail-Adresse ein"), "{html}");
    assert_branded("the form with an error", &html);

    // The other list has no brand, speaks English and loads no accent stylesheet.
    let (_, plain) = page(&app, "/signup?list=news").await;
    assert!(plain.contains("<html lang=\"en\" dir=\"ltr\">") && plain.contains("<h1>Sign up for News</h1>"), "{plain}");
    assert!(!plain.contains("list.css") && !plain.contains("<header"), "{plain}");
    assert!(plain.contains("<a href=\"/privacy?list=news\">What we store and for how long</a>"), "{plain}");
    // The list chooser marks each list's name with its language.
    let (_, chooser) = page(&app, "/").await;
    assert!(chooser.contains("lang=\"de\">Brotbrief</a>"), "{chooser}");
}

#[actix_web::test]
async fn the_accent_stylesheet_has_readable_text_and_link_shades_and_only_lists_with_an_accent_have_one() {
    let app = spawn_app_with(BRANDED).await;

    let response = app.client.get(app.url("/static/list.css?list=backstube")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/css; charset=utf-8");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    let css = response.text().await.unwrap();
    // Yellow: black text on the button; a darker shade for links on white; yellow itself on dark.
    assert!(css.contains("button { background: #ffd400; color: #000000; }"), "{css}");
    let (light, dark) = css.split_once("@media (prefers-color-scheme: dark)").unwrap();
    assert!(!light.contains("a, a:visited { color: #ffd400; }"), "{css}");
    assert!(dark.contains("a, a:visited { color: #ffd400; }"), "{css}");

    for path in ["/static/list.css?list=news", "/static/list.css?list=nope", "/static/list.css", "/static/custom.css"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 404, "{path}");
    }
}

#[actix_web::test]
async fn the_operators_stylesheet_is_served_after_the_built_in_ones_and_cannot_change_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let css_path = dir.path().join("brand.css");
    // A stylesheet that tries to pull in something from elsewhere: the CSP stops the browser.
    let custom = "@import url(\"https://evil.test/x.css\");\nbody { font-family: Georgia, serif; }\n";
    std::fs::write(&css_path, custom).unwrap();
    let app =
        spawn_app_with(&format!("[server]\ncustom_css_file = {:?}\n{BRANDED}", css_path.display().to_string())).await;

    let response = app.client.get(app.url("/static/custom.css")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/css; charset=utf-8");
    assert_eq!(response.text().await.unwrap(), custom);

    for path in ["/signup?list=backstube", "/signup?list=news", "/privacy?list=news", "/confirm?token=x"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.headers()["content-security-policy"], CSP, "{path}");
        let html = response.text().await.unwrap();
        let built_in = html.find("href=\"/static/style.css\"").unwrap();
        let operator = html.find("href=\"/static/custom.css\"").unwrap_or_else(|| panic!("{path}: {html}"));
        assert!(built_in < operator, "{path}: the operator's stylesheet comes last");
        if let Some(accent) = html.find("href=\"/static/list.css") {
            assert!(accent < operator, "{path}: the operator's stylesheet overrides the accent");
        }
    }
}

#[actix_web::test]
async fn the_privacy_page_states_the_configured_lifetimes_limits_and_contact() {
    let app = spawn_app_with(
        "[signup]\nconfirm_ttl = \"72h\"\nresend_cooldown = \"15m\"\n\
         rate_limits = [{ window = \"30m\", max = 5 }, { window = \"2d\", max = 20 }]\n\
         network_rate_limits = [{ window = \"1h\", max = 50 }, { window = \"3d\", max = 400 }]\n\
         max_mails_per_address_per_day = 2\nreputation_days = 30\n\
         [[lists]]\nid = \"news\"\nname = \"News\"\nconsent_version = \"2026-11\"\nreply_to = \"Help <help@bakery.test>\"\n\
         [[lists]]\nid = \"brief\"\nname = \"Brief\"\nlanguage = \"de\"\n",
    )
    .await;

    let (status, html) = page(&app, "/privacy?list=news").await;
    assert_eq!(status, 200);
    for expected in [
        "Privacy: News",
        "(2026-11)",
        "5 per 30 minutes and 20 per 2 days",
        "counted together: 50 per 1 hour and 400 per 3 days.",
        "covers 3 days at the most",
        "at most one new one every 15 minutes",
        "stops working 3 days after the last mail",
        "deleted 3 days after you signed up, mailed or not",
        "at most 2 confirmation mails go to one address in any 24 hours",
        "a one-way hash of your network (a block of addresses of one provider) is kept with the day, for 30 days",
        "Write to help@bakery.test.",
    ] {
        assert!(html.contains(expected), "{expected:?} in\n{html}");
    }
    assert!(!html.contains("operator&#39;s own systems") && !html.contains("own systems"), "no webhooks: {html}");

    let (_, german) = page(&app, "/privacy?list=brief").await;
    assert!(
        german.contains("5 pro 30 Minuten und 20 pro 2 Tage") && german.contains("3 Tage nach der letzten Mail"),
        "{german}"
    );
    assert!(
        german.contains("Schreiben Sie an no-reply@example.com."),
        "the sender when there is no reply-to: {german}"
    );

    assert_eq!(page(&app, "/privacy?list=nope").await.0, 404);
    assert_eq!(page(&app, "/privacy").await.0, 404, "two lists: which one?");
    let head = app.client.head(app.url("/privacy?list=news")).send().await.unwrap();
    assert_eq!(head.status().as_u16(), 200);
}

#[actix_web::test]
async fn the_signup_form_links_to_the_privacy_page_of_the_only_list() {
    let app = spawn_app_with("").await;
    let (_, form) = page(&app, "/").await;
    assert!(form.contains("href=\"/privacy?list=news\""), "{form}");
    let (status, privacy) = page(&app, "/privacy").await;
    assert_eq!(status, 200, "one list: /privacy is its page");
    assert!(privacy.contains("3 per 10 minutes and 10 per 1 day"), "the default limits: {privacy}");
    assert!(privacy.contains("kept with the day, for 90 days"), "the default reputation: {privacy}");
    assert!(privacy.contains("100 per 10 minutes and 1000 per 1 day"), "the default neighbourhood limits: {privacy}");
    assert!(privacy.contains("at most 3 confirmation mails"), "the default cap: {privacy}");

    let app = spawn_app_with("[signup]\nnetwork_rate_limits = []\nmax_mails_per_address_per_day = 0\n").await;
    let (_, privacy) = page(&app, "/privacy").await;
    assert!(!privacy.contains("neighbourhood") && !privacy.contains("confirmation mails go to"), "{privacy}");
}

#[test]
fn presentation_problems_stop_serve_and_check_config_naming_the_key() {
    let cases = [
        (
            "[server]\ncustom_css_file = \"/nonexistent/brand.css\"",
            "server.custom_css_file: /nonexistent/brand.css cannot be read",
        ),
        ("[server]\ncustom_css_file = \"/\"", "server.custom_css_file: / is not a file"),
        ("[[lists]]\nid = \"a\"\nlanguage = \"tlh\"", "lists[0].language: \"tlh\" is not a language"),
        ("[[lists]]\nid = \"a\"\nlanguages = [\"de\", \"tlh\"]", "lists[0].languages[1]: \"tlh\" is not a language"),
        ("[[lists]]\nid = \"a\"\naccent_color = \"#12345\"", "lists[0].accent_color"),
        ("[[lists]]\nid = \"a\"\nsite_url = \"javascript:alert(1)\"", "lists[0].site_url"),
        (
            "[server]\npublic_url = \"https://signup.example.com\"",
            "server.public_url: \"https://signup.example.com/\" is a placeholder",
        ),
    ];
    for (extra, expected) in cases {
        for command in ["check-config", "serve"] {
            let dir = tempfile::tempdir().unwrap();
            let path = write_config(dir.path(), extra);
            let output = signupd().arg(command).arg("--config").arg(&path).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{command} {extra}: {stderr}");
            assert!(stderr.contains(expected), "{command}: expected {expected:?} in {stderr}");
            // After the line (or, for `serve`, the log line) that says which file was read.
            let said = stderr.lines().filter(|line| !line.ends_with("(from --config)")).count();
            assert_eq!(said, 1, "{command}: one line: {stderr}");
            assert_eq!(files_under(dir.path()), ["signupd.toml"], "{command} {extra}: nothing written");
        }
    }
}
