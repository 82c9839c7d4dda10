//! One list, several languages (docs/configuration.md, "Languages"): the visitor's language
//! comes from the form's `lang`, else `Accept-Language` among the list's languages, else the
//! list's `language`; it is stored with the row and every later page and mail of the row speaks
//! it; the hosted form links to each language; one confirmation mail per sender and language.

use std::time::Duration;

use crate::confirm::{CONFIRM_TTL, deliver, get, location, post_fields, post_token, status_and_body, with_token};
use crate::helpers::{TestApp, spawn_app_with};
use crate::mail::decode_words;
use crate::signup::{RAISED_LIMITS, drain, form_body, json_request, strings, valid_json};

/// `news` serves English (its default) and German; `club` shares its sender and serves only
/// English; `verein` shares it too and serves German and English.
const LISTS: &str = r#"
[[lists]]
id = "news"
name = "News"
from = "Shop <news@shop.example>"
languages = ["de"]

[[lists]]
id = "club"
name = "Club"
from = "Shop <news@shop.example>"

[[lists]]
id = "verein"
name = "Verein"
from = "Shop <news@shop.example>"
language = "de"
languages = ["en"]
"#;

async fn app() -> TestApp {
    spawn_app_with(&format!("{RAISED_LIMITS}{LISTS}")).await
}

/// A browser signup of `email` for `lists`, with `extra` fields.
async fn sign_up(app: &TestApp, email: &str, lists: &[&str], extra: &[(&str, &str)]) -> reqwest::Response {
    let mut fields = vec![("email", email), ("consent", "yes")];
    fields.extend(lists.iter().map(|list| ("list", *list)));
    fields.extend_from_slice(extra);
    post_fields(app, "/api/signup", &fields).await
}

/// `list language` of each row of `email`, by list.
fn languages_of(app: &TestApp, email: &str) -> Vec<String> {
    strings(
        app,
        &format!("SELECT list_id || ' ' || language FROM subscribers WHERE email = '{email}' ORDER BY list_id"),
    )
}

async fn page(app: &TestApp, path: &str, accept_language: Option<&str>) -> (u16, String) {
    let mut request = app.client.get(app.url(path));
    if let Some(value) = accept_language {
        request = request.header("Accept-Language", value);
    }
    status_and_body(request.send().await.unwrap()).await
}

#[actix_web::test]
async fn the_hosted_form_links_to_each_language_and_posts_the_one_it_shows() {
    let app = app().await;

    let (status, german) = page(&app, "/signup?list=news&lang=de", None).await;
    assert_eq!(status, 200);
    assert!(german.contains("<html lang=\"de\""), "{german}");
    assert!(german.contains("Anmeldung für News"), "the words in German: {german}");
    assert!(german.contains("<input type=\"hidden\" name=\"lang\" value=\"de\">"), "{german}");
    assert!(german.contains("href=\"/signup?list=news&#38;lang=en\" hreflang=\"en\""), "a plain link: {german}");
    assert!(german.contains(">English</a>"), "each language named in itself: {german}");
    assert!(!german.contains("hreflang=\"de\""), "no link to the page's own language: {german}");
    assert!(!german.contains("<script"), "no JavaScript");

    let (_, by_browser) = page(&app, "/signup?list=news", Some("fr-CH, de-AT;q=0.9, en;q=0.5")).await;
    assert!(by_browser.contains("<html lang=\"de\""), "Accept-Language, looked up: {by_browser}");
    let (_, by_default) = page(&app, "/signup?list=news", Some("fr, it")).await;
    assert!(by_default.contains("<html lang=\"en\""), "none served: the list's language");
    assert!(by_default.contains("Sign up for News"), "{by_default}");
    let response = get(&app, "/signup?list=news").await;
    let vary: Vec<String> =
        response.headers().get_all("vary").iter().map(|value| value.to_str().unwrap().to_owned()).collect();
    assert!(vary.iter().any(|value| value.contains("Accept-Language")), "{vary:?}");

    let (_, single) = page(&app, "/signup?list=club", Some("de")).await;
    assert!(single.contains("<html lang=\"en\""), "a list of one language speaks it");
    assert!(!single.contains("name=\"lang\"") && !single.contains("hreflang"), "and offers no other: {single}");
}

#[actix_web::test]
async fn a_row_keeps_the_visitors_language_through_every_page_and_mail() {
    let app = app().await;

    // The page's language wins over the browser's.
    let fields = [("email", "ann@example.com"), ("consent", "yes"), ("list", "news"), ("lang", "de")];
    let response = post_in(&app, "/api/signup", &fields, "en").await;
    let check_inbox = location(&response);
    assert_eq!(check_inbox, "/check-inbox?list=news&lang=de");
    let (_, inbox) = page(&app, &check_inbox, None).await;
    assert!(inbox.contains("<html lang=\"de\"") && inbox.contains("Sehen Sie in Ihr Postfach"), "{inbox}");
    drain(&app).await;
    assert_eq!(languages_of(&app, "ann@example.com"), ["news de"]);

    // The confirmation, its page, the welcome, the preference and privacy pages.
    let mails = deliver(&app).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(decode_words(mails[0].header("Subject").unwrap()), "Bitte bestätigen Sie Ihre Anmeldung");
    assert_eq!(mails[0].header("Content-Language"), Some("de"));
    assert!(mails[0].text().contains("/privacy?list=news&lang=de"), "the privacy link keeps the language");
    let (_, confirm_page) = page(&app, &with_token("/confirm", &mails[0].confirm_token()), Some("en")).await;
    assert!(
        confirm_page.contains("<html lang=\"de\"") && confirm_page.contains("Anmeldung bestätigen"),
        "{confirm_page}"
    );
    assert!(confirm_page.contains("/privacy?list=news&#38;lang=de"), "{confirm_page}");
    let confirmed = post_token(&app, "/api/confirm", &mails[0].confirm_token()).await;
    let done = location(&confirmed);
    assert_eq!(done, "/confirmed?list=news&lang=de");
    let (_, done_page) = page(&app, &done, Some("en")).await;
    assert!(done_page.contains("<html lang=\"de\""), "{done_page}");
    let welcome = deliver(&app).await;
    assert_eq!(decode_words(welcome[0].header("Subject").unwrap()), "Sie sind angemeldet");
    let (_, preferences) = page(&app, &with_token("/manage", &welcome[0].manage_token()), Some("en")).await;
    assert!(preferences.contains("<html lang=\"de\"") && preferences.contains("Ihre E-Mail-Einstellungen"));
    let (_, privacy) = page(&app, "/privacy?list=news&lang=de", Some("en")).await;
    assert!(privacy.contains("<html lang=\"de\"") && privacy.contains("Datenschutz: News"), "{privacy}");

    // Without `lang`, the browser's language among the list's; a JSON client alike.
    let mut body = valid_json("bob@example.com");
    body["list"] = "news".into();
    let response = json_request(&app, body).header("Accept-Language", "de-DE,de;q=0.9,en;q=0.8").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let mut body = valid_json("cat@example.com");
    body["list"] = "news".into();
    json_request(&app, body).header("Accept-Language", "ja, fr").send().await.unwrap();
    drain(&app).await;
    assert_eq!(languages_of(&app, "bob@example.com"), ["news de"]);
    assert_eq!(languages_of(&app, "cat@example.com"), ["news en"], "none served: the default");
    let subjects: Vec<String> =
        deliver(&app).await.iter().map(|mail| decode_words(mail.header("Subject").unwrap())).collect();
    assert_eq!(subjects, ["Bitte bestätigen Sie Ihre Anmeldung", "Please confirm your signup"]);
}

#[actix_web::test]
async fn lists_of_one_sender_share_a_confirmation_only_in_the_same_language() {
    let app = app().await;

    // German on `news` and `verein`, English on `club` (its only language): two mails.
    let response = sign_up(&app, "ann@example.com", &["news", "club", "verein"], &[("lang", "de")]).await;
    assert_eq!(location(&response), "/check-inbox?list=news&lang=de");
    drain(&app).await;
    assert_eq!(languages_of(&app, "ann@example.com"), ["club en", "news de", "verein de"]);
    let mails = deliver(&app).await;
    let mut subjects: Vec<String> = mails.iter().map(|mail| decode_words(mail.header("Subject").unwrap())).collect();
    subjects.sort();
    assert_eq!(subjects, ["Bitte bestätigen Sie Ihre Anmeldung", "Please confirm your signup"]);
    let german = mails.iter().find(|mail| mail.header("Content-Language") == Some("de")).unwrap();
    assert!(german.text().contains("News und Verein"), "the German mail names both German lists");
    let english = mails.iter().find(|mail| mail.header("Content-Language") == Some("en")).unwrap();
    assert!(!english.text().contains("Verein"), "the English mail names its list alone");

    // Its one button confirms both German rows, the English one stays pending.
    post_token(&app, "/api/confirm", &german.confirm_token()).await;
    assert_eq!(
        strings(
            &app,
            "SELECT list_id || ' ' || status FROM subscribers WHERE email = 'ann@example.com' ORDER BY list_id"
        ),
        ["club pending", "news confirmed", "verein confirmed"]
    );

    assert_eq!(deliver(&app).await.len(), 2, "a welcome mail for each list confirmed");

    // In English everywhere: one mail for all three.
    sign_up(&app, "bob@example.com", &["news", "club", "verein"], &[("lang", "en")]).await;
    drain(&app).await;
    assert_eq!(deliver(&app).await.len(), 1, "one sender, one language: one mail");
}

#[actix_web::test]
async fn the_surge_page_and_its_press_keep_the_language() {
    let app = spawn_app_with(
        "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n[signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\n\
         network_rate_limits = []\nsurge_alert = { window = \"10m\", max = 1 }\n\
         [[lists]]\nid = \"news\"\nlanguages = [\"de\"]\n",
    )
    .await;
    // The second signup of the window passes `max`: the list is in surge.
    sign_up(&app, "filler@example.com", &["news"], &[]).await;
    let response = sign_up(&app, "ann@example.com", &["news"], &[("lang", "de")]).await;
    let surge = location(&response);
    assert!(surge.starts_with("/check-inbox?list=news&send=") && surge.contains("&lang=de"), "{surge}");
    let (_, html) = page(&app, &surge, Some("en")).await;
    assert!(html.contains("<html lang=\"de\"") && html.contains("Noch ein Schritt"), "{html}");
    assert!(html.contains("<input type=\"hidden\" name=\"lang\" value=\"de\">"), "{html}");
    let token = surge.split("send=").nth(1).unwrap().split('&').next().unwrap().to_owned();
    let pressed = post_fields(&app, "/api/send", &[("send", token.as_str()), ("lang", "de")]).await;
    assert_eq!(location(&pressed), "/check-inbox?list=news&lang=de");
}

#[actix_web::test]
async fn the_status_page_counts_a_multilingual_lists_signups_by_language() {
    let app = spawn_app_with(&format!("[server]\nmetrics_listen = \"127.0.0.1:0\"\n{RAISED_LIMITS}{LISTS}")).await;
    for (email, lang) in [("ann@example.com", "de"), ("bob@example.com", "de"), ("cat@example.com", "en")] {
        sign_up(&app, email, &["news"], &[("lang", lang)]).await;
    }
    drain(&app).await;
    // A row from before there was a language reads in the list's `language`.
    crate::signup::db(&app)
        .execute("UPDATE subscribers SET language = NULL WHERE email = 'cat@example.com'", [])
        .unwrap();
    let metrics = format!("http://127.0.0.1:{}", app.metrics_port.expect("a metrics listener"));

    let page = app.client.get(format!("{metrics}/status")).send().await.unwrap().text().await.unwrap();

    let news = &page[page.find("id=\"list-news-languages\"").expect("a table by language for news")..];
    let news = &news[..news.find("</table>").unwrap()];
    assert!(news.contains("<tr data-language=\"en\"><th scope=\"row\">en</th><td>1</td></tr>"), "{news}");
    assert!(news.contains("<tr data-language=\"de\"><th scope=\"row\">de</th><td>2</td></tr>"), "{news}");
    assert!(!page.contains("id=\"list-club-languages\""), "a list of one language has no such table");
}

/// A POST of `body` as `content_type` to `path`, from a browser that asks for `accept_language`.
async fn post_body_in(
    app: &TestApp,
    path: &str,
    content_type: &str,
    body: String,
    accept_language: &str,
) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .header("Content-Type", content_type)
        .header("Accept-Language", accept_language)
        .body(body)
        .send()
        .await
        .unwrap()
}

/// A form POST of `fields` to `path`, from a browser that asks for `accept_language`.
async fn post_in(app: &TestApp, path: &str, fields: &[(&str, &str)], accept_language: &str) -> reqwest::Response {
    post_body_in(app, path, "application/x-www-form-urlencoded", form_body(fields), accept_language).await
}

#[actix_web::test]
async fn saved_removed_and_expired_pages_speak_the_rows_language_whatever_the_browser_asks() {
    let app = app().await;
    sign_up(&app, "ann@example.com", &["news"], &[("lang", "de")]).await;
    drain(&app).await;
    let mails = deliver(&app).await;
    let removal = mails[0].manage_token();

    // Saving the preference page: `/saved` in the row's German, though the browser asks English.
    let saved =
        post_in(&app, "/api/manage", &[("token", &removal), ("save", "preferences"), ("list", "news")], "en").await;
    assert_eq!(location(&saved), "/saved?list=news&lang=de");
    let (status, saved_page) = page(&app, &location(&saved), Some("en")).await;
    assert_eq!(status, 200);
    assert!(
        saved_page.contains("<html lang=\"de\"") && saved_page.contains("Einstellungen gespeichert"),
        "{saved_page}"
    );

    // "Remove me from all": `/removed` in German too.
    let removed = post_in(&app, "/api/manage", &[("token", &removal), ("all", "remove")], "en").await;
    assert_eq!(location(&removed), "/removed?list=news&lang=de");
    let (_, removed_page) = page(&app, &location(&removed), Some("en")).await;
    assert!(removed_page.contains("<html lang=\"de\"") && removed_page.contains("Adresse entfernt"), "{removed_page}");

    // The row is gone: the repeat POST names no list (it reveals nothing), as before.
    let again = post_in(&app, "/api/manage", &[("token", &removal), ("lang", "de")], "de").await;
    assert_eq!(location(&again), "/removed");

    // An expired confirm link of a German row: the 410 page and its way back in German.
    sign_up(&app, "bob@example.com", &["news"], &[("lang", "de")]).await;
    drain(&app).await;
    let bob = deliver(&app).await;
    app.clock.advance(CONFIRM_TTL + Duration::from_secs(1));
    let (status, expired) = page(&app, &with_token("/confirm", &bob[0].confirm_token()), Some("en")).await;
    assert_eq!(status, 410, "{expired}");
    assert!(expired.contains("<html lang=\"de\"") && expired.contains("Dieser Link ist abgelaufen"), "{expired}");
    assert!(expired.contains("/signup?list=news&#38;lang=de"), "the way back keeps the language: {expired}");
    let (status, posted) =
        status_and_body(post_in(&app, "/api/confirm", &[("token", &bob[0].confirm_token())], "en").await).await;
    assert_eq!(status, 410, "{posted}");
    assert!(posted.contains("<html lang=\"de\"") && posted.contains("Noch einmal anmelden"), "{posted}");
}

#[actix_web::test]
async fn pages_no_row_speaks_for_take_the_links_lang_else_the_browsers_among_the_lists() {
    // One list: every page without a row is that list's.
    let app = spawn_app_with(&format!(
        "{RAISED_LIMITS}[[lists]]\nid = \"news\"\nname = \"News\"\nlanguages = [\"de\", \"ja\"]\n"
    ))
    .await;
    let unknown = with_token("/confirm", &"A".repeat(43));
    // (case, path, Accept-Language, status, language, words)
    let cases = [
        (
            "unknown token, the browser's",
            unknown.clone(),
            Some("de-AT, en;q=0.5"),
            410,
            "de",
            "Dieser Link ist abgelaufen",
        ),
        ("unknown token, lang wins", format!("{unknown}&lang=ja"), Some("de"), 410, "ja", "lang=\"ja\""),
        ("unknown token, none served", unknown.clone(), Some("fr"), 410, "en", "This link has expired"),
        (
            "cut-off confirm link",
            "/confirm?token=short".to_owned(),
            Some("de"),
            400,
            "de",
            "Dieser Link ist unvollständig",
        ),
        (
            "cut-off manage link",
            "/manage?token=short".to_owned(),
            Some("de"),
            400,
            "de",
            "Dieser Link ist unvollständig",
        ),
        (
            "manage link of no row",
            with_token("/manage", &"A".repeat(43)),
            Some("de"),
            200,
            "de",
            "name=\"lang\" value=\"de\"",
        ),
        ("not found", "/signup?list=nope".to_owned(), Some("de"), 404, "de", "lang=\"de\""),
        ("saved, lang", "/saved?list=news&lang=de".to_owned(), Some("en"), 200, "de", "Einstellungen gespeichert"),
        ("removed, the browser's", "/removed?list=news".to_owned(), Some("de"), 200, "de", "Adresse entfernt"),
    ];
    for (case, path, accept, status, language, words) in cases {
        let (got, html) = page(&app, &path, accept).await;
        assert_eq!(got, status, "{case}: {html}");
        assert!(html.contains(&format!("<html lang=\"{language}\"")), "{case}: {html}");
        assert!(html.contains(words), "{case}: {words} in {html}");
    }

    // A press refused for its method or body: a page in the browser's language, not a code.
    let (status, html) = page(&app, "/api/send", Some("de")).await;
    assert_eq!(status, 405, "{html}");
    assert!(html.contains("<html lang=\"de\"") && html.contains("Das hat nicht geklappt"), "{html}");
    let refused = post_body_in(&app, "/api/send?lang=ja", "text/plain", "send=x".into(), "de").await;
    let (status, html) = status_and_body(refused).await;
    assert_eq!(status, 415, "{html}");
    assert!(html.contains("<html lang=\"ja\"") && html.contains("処理できませんでした"), "{html}");
    // An unreadable manage POST: the preference page's own error, in the browser's language.
    let unreadable = post_body_in(&app, "/api/manage", "application/json", "{}".into(), "de").await;
    let (status, html) = status_and_body(unreadable).await;
    assert_eq!(status, 415, "{html}");
    assert!(html.contains("<html lang=\"de\"") && html.contains("Das Formular konnte nicht gelesen werden"), "{html}");
}

#[actix_web::test]
async fn an_expired_or_cut_off_link_follows_the_browser_into_arabic_before_the_lists_default() {
    // One list in the pseudo-locale that also serves Arabic; then two lists of one language
    // each (the browser suite's), where the link names no list at all.
    let one = "[[lists]]\nid = \"news\"\nname = \"News\"\nlanguage = \"en-XA\"\nlanguages = [\"ar\"]\n";
    let two = "[[lists]]\nid = \"xa\"\nlanguage = \"en-XA\"\n[[lists]]\nid = \"ar\"\nlanguage = \"ar\"\n";
    for (lists, config) in [("one multilingual list", one), ("two lists", two)] {
        let app = spawn_app_with(&format!("{RAISED_LIMITS}{config}")).await;
        let expired = with_token("/confirm", &"A".repeat(43));
        let cut_off = "/confirm?token=cut-off".to_owned();
        // (case, path, Accept-Language, status, <html> attributes)
        let cases = [
            ("expired", expired.clone(), Some("ar-EG, en;q=0.5"), 410, "lang=\"ar\" dir=\"rtl\""),
            ("cut off", cut_off.clone(), Some("ar"), 400, "lang=\"ar\" dir=\"rtl\""),
            ("expired, lang", format!("{expired}&lang=ar"), Some("en"), 410, "lang=\"ar\" dir=\"rtl\""),
            ("expired, none served", expired.clone(), Some("fr"), 410, "lang=\"en-XA\" dir=\"ltr\""),
            ("cut off, no header", cut_off.clone(), None, 400, "lang=\"en-XA\" dir=\"ltr\""),
        ];
        for (case, path, accept, status, attributes) in cases {
            let (got, html) = page(&app, &path, accept).await;
            assert_eq!(got, status, "{lists}, {case}: {html}");
            assert!(html.contains(&format!("<html {attributes}>")), "{lists}, {case}: {html}");
        }
        let (_, arabic) = page(&app, &expired, Some("ar")).await;
        assert!(arabic.contains("انتهت صلاحية هذا الرابط"), "{lists}: in Arabic words: {arabic}");
    }
}
