//! Every visitor in their own language: every page and both mails rendered by the real server
//! in the pseudo-locale `en-XA` (every letter of every message accented), where any text that
//! stayed plain English is one that bypasses the catalogue; and the operator's own catalogues
//! (`server.locales_dir`), refused by `check-config` and `serve` with file, message and line
//! when they are wrong, and used when they are right, with no rebuild.

use std::path::Path;

use html5gum::{Token, Tokenizer};

use crate::confirm::{deliver, get, location, post_fields, post_token, status_and_body};
use crate::helpers::{TestApp, files_under, signupd, spawn_app_with, write_config};
use crate::mail::Mail;
use crate::signup::{drain, form_body, post_form, valid};

/// A list in the pseudo-locale whose own words (name, consent text, field label) are not
/// ASCII either, so every ASCII word left on a page is the program's. Surge mode past one
/// signup in ten minutes, from a trusted proxy's visitors.
const PSEUDO: &str = "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n\
    [signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\nnetwork_rate_limits = []\n\
    surge_alert = { window = \"10m\", max = 1000 }\n\
    [[lists]]\nid = \"news\"\nname = \"Ñéŵš\"\nlanguage = \"en-XA\"\nconsent_text = \"Ŷéš, ƥļéášé\"\n\
    [[lists.fields]]\nname = \"first_name\"\nlabel = \"Ƒîŕšţ ñáɱé\"\n";

/// What a visitor reads in `html`: its text, and the attributes a browser shows or reads out
/// (`title`, `alt`, `placeholder`, `aria-label`, and a button's `value`). Not `<style>`.
fn visible(html: &str) -> String {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let mut out = String::new();
    let mut in_style = false;
    for token in Tokenizer::new(html) {
        match token.unwrap() {
            Token::StartTag(tag) => {
                let name = text(&tag.name);
                in_style = name == "style";
                let attribute = |key: &str| tag.attributes.get(key.as_bytes()).map(|value| text(value));
                for key in ["title", "alt", "placeholder", "aria-label"] {
                    out.extend(attribute(key).map(|value| format!(" {value} ")));
                }
                // An input button shows its value; a <button>'s value is data, its content shows.
                let button =
                    name == "input" && matches!(attribute("type").as_deref(), Some("submit" | "button" | "reset"));
                if button {
                    out.extend(attribute("value").map(|value| format!(" {value} ")));
                }
            }
            Token::EndTag(_) => in_style = false,
            Token::String(string) if !in_style => out.push_str(&text(&string)),
            _ => {}
        }
    }
    out
}

/// The plain-English words of `text`: runs of two or more ASCII letters, outside addresses,
/// URLs and the product's own name.
fn english_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|word| !word.contains('@') && !word.contains("://") && !word.contains("signupd"))
        .flat_map(|word| word.split(|c: char| !c.is_ascii_alphabetic()))
        .filter(|run| run.len() >= 2)
        .map(str::to_owned)
        .collect()
}

fn assert_accented(what: &str, text: &str) {
    let words = english_words(text);
    assert!(words.is_empty(), "{what}: plain English {words:?} in\n{text}");
    assert!(text.chars().any(|c| "áéîóûŝĝñ".contains(c)), "{what}: no pseudo-locale text at all in\n{text}");
}

async fn page_text(app: &TestApp, path: &str, status: u16) -> String {
    let (got, html) = status_and_body(get(app, path).await).await;
    assert_eq!(got, status, "{path}: {html}");
    assert!(html.contains("<html lang=\"en-XA\" dir=\"ltr\">"), "{path}: {html}");
    visible(&html)
}

/// The mails written since the last call, parsed.
fn mails(app: &TestApp, seen: &mut Vec<std::path::PathBuf>) -> Vec<Mail> {
    let mut files: Vec<_> =
        std::fs::read_dir(app.data_dir().join("mail")).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    files.retain(|file| !seen.contains(file));
    seen.extend(files.iter().cloned());
    files.iter().map(|file| Mail::parse(&std::fs::read(file).unwrap())).collect()
}

fn assert_mail_accented(what: &str, mail: &Mail) {
    assert_accented(&format!("{what}: subject"), &mail.decoded_header("Subject"));
    assert_accented(&format!("{what}: text part"), mail.part("text/plain"));
    assert_accented(&format!("{what}: HTML part"), &visible(mail.part("text/html")));
}

#[actix_web::test]
async fn in_the_pseudo_locale_no_page_and_no_mail_shows_plain_english() {
    let app = spawn_app_with(PSEUDO).await;
    let mut seen = Vec::new();

    // The form, the form with an error, the check-inbox page.
    assert_accented("signup form", &page_text(&app, "/signup?list=news", 200).await);
    let refused = post_form(&app, &[("email", "not-an-address"), ("consent", "yes"), ("list", "news")]).await;
    let (status, html) = status_and_body(refused).await;
    assert_eq!(status, 400);
    assert_accented("form with an error", &visible(&html));
    let no_consent = post_form(&app, &[("email", "a@example.com"), ("list", "news")]).await;
    assert_accented("form without consent", &visible(&status_and_body(no_consent).await.1));
    assert_accented("check inbox", &page_text(&app, "/check-inbox?list=news", 200).await);
    assert_accented("privacy", &page_text(&app, "/privacy?list=news", 200).await);

    // The confirmation mail, the confirm page, the confirmed page, the welcome mail.
    let response = post_form(
        &app,
        &[("first_name", "Ada"), ("email", "visitor@example.com"), ("consent", "yes"), ("list", "news")],
    )
    .await;
    assert_eq!(response.status().as_u16(), 303);
    drain(&app).await;
    deliver(&app).await;
    let confirmation = mails(&app, &mut seen);
    assert_eq!(confirmation.len(), 1);
    assert_mail_accented("confirmation mail", &confirmation[0]);
    let confirm = confirmation[0].confirm_token();
    let removal = confirmation[0].manage_token();
    assert_accented("confirm page", &page_text(&app, &format!("/confirm?token={confirm}"), 200).await);
    let confirmed = post_token(&app, "/api/confirm", &confirm).await;
    assert_accented("confirmed page", &page_text(&app, &location(&confirmed), 200).await);
    assert_accented("already confirmed", &page_text(&app, &format!("/confirm?token={confirm}"), 200).await);
    deliver(&app).await;
    let welcome = mails(&app, &mut seen);
    assert_eq!(welcome.len(), 1);
    assert_mail_accented("welcome mail", &welcome[0]);

    // The preference page, saving it, removing the address.
    let preferences = page_text(&app, &format!("/manage?token={removal}"), 200).await;
    assert_accented("preference page", &preferences.replace("Ada", ""));
    assert_accented("saved", &page_text(&app, "/saved?list=news", 200).await);
    let removed = post_fields(&app, "/api/manage", &[("token", &removal)]).await;
    assert_accented("removed", &page_text(&app, &location(&removed), 200).await);
    assert_accented("removed (general)", &page_text(&app, "/removed", 200).await);

    // The error pages: an expired or unknown link, a cut-off link, a page that is not there.
    let unknown = "A".repeat(43);
    assert_accented("expired link", &page_text(&app, &format!("/confirm?token={unknown}"), 410).await);
    assert_accented("cut-off link", &page_text(&app, "/confirm?token=short", 400).await);
    assert_accented("not found", &page_text(&app, "/signup?list=nope", 404).await);
    assert_accented("cut-off manage link", &page_text(&app, "/manage?token=short", 400).await);
    assert_accented("press, wrong method", &page_text(&app, "/api/send", 405).await);
    let (status, html) = status_and_body(post_fields(&app, "/api/manage", &[]).await).await;
    assert_eq!(status, 400, "{html}");
    assert_accented("manage without a token", &visible(&html));
    let refused = app.client.post(app.url("/api/send")).header("Content-Type", "text/plain").body("x").send().await;
    let (status, html) = status_and_body(refused.unwrap()).await;
    assert_eq!(status, 415, "{html}");
    assert_accented("press, unreadable body", &visible(&html));
    let json =
        app.client.post(app.url("/api/manage")).header("Content-Type", "application/json").body("{}").send().await;
    let (status, html) = status_and_body(json.unwrap()).await;
    assert_eq!(status, 415, "{html}");
    assert_accented("manage, unreadable body", &visible(&html));
}

#[actix_web::test]
async fn in_the_pseudo_locale_the_surge_page_shows_no_plain_english() {
    let surge = PSEUDO.replace("max = 1000 }\n[[lists]]", "max = 1 }\n[[lists]]");
    let app = spawn_app_with(&surge).await;
    for n in 0..3 {
        let fields = valid(["a@example.com", "b@example.com", "c@example.com"][n]);
        app.client
            .post(app.url("/api/signup"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("CF-Connecting-IP", format!("198.51.{n}.7"))
            .body(form_body(&fields))
            .send()
            .await
            .unwrap();
    }
    let response = post_form(&app, &valid("late@example.com")).await;
    let page = location(&response);
    assert!(page.starts_with("/send") || page.contains("send="), "in surge: the button page, got {page}");
    assert_accented("surge page", &page_text(&app, &page, 200).await);
}

// ---------------------------------------------------------------------------------------------
// The operator's catalogues

/// `en.ftl` as shipped: the start of any new language.
const ENGLISH: &str = include_str!("../../locales/en.ftl");

/// Runs `check-config` on a config with `server.locales_dir` holding `files`.
fn check_config(files: &[(&str, &str)], list_language: &str) -> (Option<i32>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let locales = dir.path().join("locales");
    std::fs::create_dir(&locales).unwrap();
    for (name, text) in files {
        std::fs::write(locales.join(name), text).unwrap();
    }
    let config = write_config(
        dir.path(),
        &format!(
            "[server]\nlocales_dir = {:?}\n[[lists]]\nid = \"news\"\nlanguage = \"{list_language}\"\n",
            locales.display().to_string()
        ),
    );
    let output = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned(), dir)
}

#[test]
fn check_config_refuses_a_catalogue_that_does_not_parse_uses_an_unknown_variable_or_lacks_a_message() {
    // A syntax error, on line 3.
    let (code, stderr, _dir) = check_config(&[("de.ftl", "signup-submit = Los\n\nsignup-intro = { $list\n")], "de");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("server.locales_dir:") && stderr.contains("de.ftl line 3: does not parse"), "{stderr}");

    // A variable signupd does not give the message, on line 2; and a message signupd has not.
    let (code, stderr, dir) = check_config(
        &[("de.ftl", "signup-submit = Los\nsignup-heading = Anmeldung für { $liste }\nsignup-typo = Hallo\n")],
        "de",
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("de.ftl line 2, message signup-heading: uses the variable $liste, which signupd does not give it (it gives: $list)"),
        "{stderr}"
    );
    assert!(stderr.contains("de.ftl line 3, message signup-typo: is not a message signupd has"), "{stderr}");
    assert_eq!(files_under(dir.path()).iter().filter(|file| file.starts_with("data")).count(), 0, "nothing written");

    // A new language without every message: each missing one is named.
    let without = ENGLISH.replace("signup-submit = Sign up\n", "");
    let (code, stderr, _dir) = check_config(&[("eo.ftl", &without)], "eo");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("eo.ftl, message signup-submit: missing (en.ftl has it on line"), "{stderr}");
    assert!(!stderr.contains("lists[0].language"), "the language is not also called unknown: {stderr}");

    // A language that is nowhere.
    let (code, stderr, _dir) = check_config(&[], "eo");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("lists[0].language: \"eo\" is not a language signupd has texts for"), "{stderr}");
}

#[test]
fn check_config_accepts_an_added_language_and_an_override() {
    let esperanto = ENGLISH.replace("signup-submit = Sign up", "signup-submit = Aliĝi");
    let (code, stderr, _dir) =
        check_config(&[("eo.ftl", &esperanto), ("de.ftl", "# Nur eine Nachricht\nsignup-submit = Los!\n")], "eo");
    assert_eq!(code, Some(0), "{stderr}");
}

#[actix_web::test]
async fn an_added_language_and_an_overridden_message_are_served_without_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let esperanto =
        ENGLISH.replace("signup-heading = Sign up for { $list }", "signup-heading = Aliĝu al { $list }").replace(
            "duration-minute =\n    { $n ->\n        [one] { $n } minute\n       *[other] { $n } minutes\n    }",
            "duration-minute = { $n } minutoj",
        );
    std::fs::write(dir.path().join("eo.ftl"), esperanto).unwrap();
    std::fs::write(dir.path().join("de.ftl"), "signup-submit = Jetzt eintragen\n").unwrap();
    let app = spawn_app_with(&format!(
        "[server]\nlocales_dir = {:?}\n[[lists]]\nid = \"news\"\nname = \"News\"\nlanguage = \"eo\"\n\
         [[lists]]\nid = \"brief\"\nname = \"Brief\"\nlanguage = \"de\"\n",
        dir.path().display().to_string()
    ))
    .await;

    let (_, html) = status_and_body(get(&app, "/signup?list=news").await).await;
    assert!(html.contains("<html lang=\"eo\" dir=\"ltr\">") && html.contains("<h1>Aliĝu al News</h1>"), "{html}");
    let (_, privacy) = status_and_body(get(&app, "/privacy?list=news").await).await;
    assert!(privacy.contains("10 minutoj"), "{privacy}");
    let (_, german) = status_and_body(get(&app, "/signup?list=brief").await).await;
    assert!(
        german.contains("Jetzt eintragen") && german.contains("Anmeldung für Brief"),
        "override and the rest: {german}"
    );
}

#[actix_web::test]
async fn a_right_to_left_language_gets_dir_rtl_and_isolates_its_values() {
    // Whatever ar.ftl ships, an operator's file can say every message in Arabic script.
    let dir = tempfile::tempdir().unwrap();
    let arabic = ENGLISH.replace("signup-heading = Sign up for { $list }", "signup-heading = اشترك في { $list }");
    std::fs::write(dir.path().join("ar.ftl"), arabic).unwrap();
    let app = spawn_app_with(&format!(
        "[server]\nlocales_dir = {:?}\n[[lists]]\nid = \"news\"\nname = \"News\"\nlanguage = \"ar\"\n",
        dir.path().display().to_string()
    ))
    .await;
    let (_, html) = status_and_body(get(&app, "/signup?list=news").await).await;
    assert!(html.contains("<html lang=\"ar\" dir=\"rtl\">"), "{html}");
    assert!(html.contains("<h1>اشترك في \u{2068}News\u{2069}</h1>"), "the Latin name isolated: {html}");
}

/// The shipped catalogues are the ones in the binary: a language added to `locales/` is served.
#[test]
fn every_shipped_catalogue_is_accepted_as_a_list_language() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let code = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let (exit, stderr, _dir) = check_config(&[], &code);
        assert_eq!(exit, Some(0), "{code}: {stderr}");
    }
}
