//! The mails signupd sends: confirmation and welcome, each multipart/alternative with
//! a plain-text and an HTML part from askama templates (`templates/email/`). No tracking, no
//! remote images. Headers: `Message-ID` on the sender's domain, `Date`, the list's `From` and
//! `Reply-To`, `Auto-Submitted: auto-generated` (RFC 3834: auto-responders must not answer),
//! `List-Id`, on the welcome mail `List-Unsubscribe` with `List-Unsubscribe-Post`
//! (RFC 8058), and on both `X-Signupd-Ref` (`mail::reference`), which bounces and complaints
//! about the mail bring back — repeated where a configured relay echoes metadata instead of
//! headers (Postmark, Mailgun, SendGrid).
//!
//! Both mails speak the list's language (texts from its catalogue, dates written for it,
//! `Content-Language`), carry the site's name and link, the accent colour on the confirm button,
//! and a footer link to the list's privacy page.
//!
//! Visitor input never reaches a header's display name (lettre panics on CR/LF there;
//! DEPENDENCIES trap 5): the recipient is a bare address, already validated by `EmailAddress`.

use askama::Template;
use lettre::Message;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};

use super::reference;
use crate::clock::UnixSeconds;
use crate::config::presentation::color::Rgb;
use crate::config::presentation::{Language, Messages};
use crate::config::{Config, ListConfig, RelayKind};

/// The default button colour of a mail when the list has no accent colour.
const DEFAULT_ACCENT: Rgb = Rgb(0x1f, 0x5f, 0xbf);

/// What both mails of a list share: language, names, colour, the privacy link.
struct Frame<'a> {
    t: &'static Messages,
    lang: &'static str,
    subject: String,
    /// The list's name; in a confirmation for several lists, all their names ("A, B and C").
    list_name: String,
    /// The site's name, or the list's.
    site: &'a str,
    site_url: Option<&'a str>,
    accent: Rgb,
    on_accent: Rgb,
    privacy_url: String,
}

impl<'a> Frame<'a> {
    fn new(links: &Links, list: &'a ListConfig, subject: String, language: Language) -> Self {
        let accent = list.accent.unwrap_or(DEFAULT_ACCENT);
        Self {
            t: language.messages(),
            lang: language.code(),
            subject,
            list_name: list.name.clone(),
            site: list.site(),
            site_url: list.site_url.as_ref().map(url::Url::as_str),
            accent,
            on_accent: accent.text_on(),
            privacy_url: links.privacy(list, language),
        }
    }
}

#[derive(Template)]
#[template(path = "email/confirm.txt", escape = "none")]
struct ConfirmText<'a> {
    m: &'a Frame<'a>,
    how: &'a str,
    until: &'a str,
    confirm_url: &'a str,
    manage_url: &'a str,
}

#[derive(Template)]
#[template(path = "email/confirm.html")]
struct ConfirmHtml<'a> {
    m: &'a Frame<'a>,
    how: &'a str,
    until: &'a str,
    confirm_url: &'a str,
    manage_url: &'a str,
}

#[derive(Template)]
#[template(path = "email/welcome.txt", escape = "none")]
struct WelcomeText<'a> {
    m: &'a Frame<'a>,
    manage_url: &'a str,
}

#[derive(Template)]
#[template(path = "email/welcome.html")]
struct WelcomeHtml<'a> {
    m: &'a Frame<'a>,
    manage_url: &'a str,
}

/// Links that go into a mail. Holds raw tokens: no `Debug`, never logged.
#[allow(missing_debug_implementations)]
pub struct Links {
    pub base: String,
}

impl Links {
    pub fn new(config: &Config) -> Self {
        Self { base: config.server.public_url.as_str().trim_end_matches('/').to_owned() }
    }

    pub fn confirm(&self, token: &str) -> String {
        format!("{}/confirm?token={token}", self.base)
    }

    pub fn manage(&self, token: &str) -> String {
        format!("{}/manage?token={token}", self.base)
    }

    pub fn unsubscribe(&self, token: &str) -> String {
        format!("{}/api/unsubscribe?token={token}", self.base)
    }

    pub fn privacy(&self, list: &ListConfig, language: Language) -> String {
        format!("{}/privacy?list={}{}", self.base, list.id, list.lang_query(language))
    }
}

/// Where a mail about a subscriber goes, and the sealed reference it carries.
#[derive(Debug, Clone, Copy)]
pub struct Recipient<'a> {
    /// A bare address, already validated.
    pub address: &'a str,
    /// `X-Signupd-Ref` (`mail::reference`).
    pub reference: &'a str,
    /// The language the subscriber signed up in; `None`: the list's `language`.
    pub language: Option<Language>,
}

/// A confirmation mail for `to`, with the confirm link (`confirm_token`) expiring at
/// `expires_at` and the manage link (`removal_token`), in the list's language. With lists in
/// `also` (of the same sender), the one link confirms them all, and the mail names them all.
pub fn confirmation(
    config: &Config,
    list: &ListConfig,
    also: &[&ListConfig],
    to: Recipient<'_>,
    confirm_token: &str,
    removal_token: &str,
    expires_at: UnixSeconds,
) -> anyhow::Result<Message> {
    let links = Links::new(config);
    let confirm_url = links.confirm(confirm_token);
    let manage_url = links.manage(removal_token);
    let language = to.language.unwrap_or(list.language);
    let mut m = Frame::new(&links, list, list.confirm_subject_in(language), language);
    if !also.is_empty() {
        let names: Vec<String> = std::iter::once(list).chain(also.iter().copied()).map(|l| l.name.clone()).collect();
        m.list_name = m.t.and_list(&names);
    }
    let how = m.t.mail.how.with(&m.t.confirm.button.to_string());
    let until = m.t.mail.until.with(&m.t.date_time(expires_at));
    let (how, until) = (how.as_str(), until.as_str());
    let text = ConfirmText { m: &m, how, until, confirm_url: &confirm_url, manage_url: &manage_url }.render()?;
    let html = ConfirmHtml { m: &m, how, until, confirm_url: &confirm_url, manage_url: &manage_url }.render()?;
    build(config, list, to.address, &m, text, html, Extra { unsubscribe_url: None, reference: Some(to.reference) })
}

/// A welcome mail, with the manage link and one-click unsubscribe headers.
pub fn welcome(
    config: &Config,
    list: &ListConfig,
    to: Recipient<'_>,
    manage_token: &str,
    unsubscribe_token: &str,
) -> anyhow::Result<Message> {
    let links = Links::new(config);
    let manage_url = links.manage(manage_token);
    let language = to.language.unwrap_or(list.language);
    let m = Frame::new(&links, list, list.welcome_subject_in(language), language);
    let text = WelcomeText { m: &m, manage_url: &manage_url }.render()?;
    let html = WelcomeHtml { m: &m, manage_url: &manage_url }.render()?;
    let unsubscribe_url = Some(links.unsubscribe(unsubscribe_token));
    build(config, list, to.address, &m, text, html, Extra { unsubscribe_url, reference: Some(to.reference) })
}

/// A plain test mail for `signupd send-test-mail`.
pub fn test_mail(config: &Config, list: &ListConfig, to: &str) -> anyhow::Result<Message> {
    let text = format!(
        "This is a test mail from signupd for the list \"{}\".\nIf you can read it, mail delivery works.\n",
        list.name
    );
    let html = format!(
        "<!doctype html><html lang=\"en\"><body><p>This is a test mail from signupd for the list <strong>{}</strong>.</p>\
         <p>If you can read it, mail delivery works.</p></body></html>",
        askama::filters::escape(&list.name, askama::filters::Html)?
    );
    let mut frame = Frame::new(&Links::new(config), list, "signupd test mail".to_owned(), list.language);
    // The test mail is for the operator, in English whatever the list's language.
    frame.lang = "en";
    build(config, list, to, &frame, text, html, Extra { unsubscribe_url: None, reference: None })
}

/// The headers only some mails carry.
struct Extra<'a> {
    /// The welcome mail's one-click unsubscribe link.
    unsubscribe_url: Option<String>,
    /// The sealed `X-Signupd-Ref` of a mail about a subscriber.
    reference: Option<&'a str>,
}

fn build(
    config: &Config,
    list: &ListConfig,
    to: &str,
    frame: &Frame<'_>,
    text: String,
    html: String,
    extra: Extra<'_>,
) -> anyhow::Result<Message> {
    let to: Mailbox = Mailbox::new(None, to.parse()?);
    let sender_domain = list.from.email.domain().to_owned();
    let mut builder = Message::builder()
        .from(list.from.clone())
        .to(to)
        .subject(frame.subject.as_str())
        .date_now()
        .message_id(Some(format!("<{}@{}>", uuid::Uuid::new_v4().simple(), sender_domain)))
        .raw_header(raw("Auto-Submitted", "auto-generated".into()))
        .raw_header(raw("List-Id", list_id_header(config, list)))
        .raw_header(raw("Content-Language", frame.lang.to_owned()));
    if let Some(reply_to) = &list.reply_to {
        builder = builder.reply_to(reply_to.clone());
    }
    if let Some(reference) = extra.reference {
        builder = builder.raw_header(raw(reference::HEADER, reference.to_owned()));
        for (name, value) in echoes(config, reference) {
            builder = builder.raw_header(raw(name, value));
        }
    }
    if let Some(url) = extra.unsubscribe_url {
        builder = builder
            .raw_header(raw("List-Unsubscribe", format!("<{url}>")))
            .raw_header(raw("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".into()));
    }
    Ok(builder.multipart(MultiPart::alternative_plain_html(text, html))?)
}

/// The reference again, where each configured relay that does not return headers echoes
/// metadata back in its events: Postmark's `X-PM-Metadata-*`, Mailgun's `X-Mailgun-Variables`
/// and SendGrid's `X-SMTPAPI` unique args. SES and Resend return the header itself. The value
/// is base64url after `v1.`, so it needs no escaping in JSON.
fn echoes(config: &Config, reference: &str) -> Vec<(&'static str, String)> {
    let mut kinds: Vec<RelayKind> = Vec::new();
    for relay in &config.relays {
        if !kinds.contains(&relay.kind) {
            kinds.push(relay.kind);
        }
    }
    kinds
        .into_iter()
        .filter_map(|kind| match kind {
            RelayKind::Postmark => Some(("X-PM-Metadata-signupd-ref", reference.to_owned())),
            RelayKind::Mailgun => {
                Some(("X-Mailgun-Variables", format!("{{\"{}\":\"{reference}\"}}", reference::ECHO_KEY)))
            }
            RelayKind::Sendgrid => {
                Some(("X-SMTPAPI", format!("{{\"unique_args\":{{\"{}\":\"{reference}\"}}}}", reference::ECHO_KEY)))
            }
            RelayKind::Ses | RelayKind::Resend => None,
        })
        .collect()
}

fn raw(name: &'static str, value: String) -> HeaderValue {
    HeaderValue::new(HeaderName::new_from_ascii_str(name), value)
}

/// RFC 2919: `List-Id: Name <list-id.host>`; the name is configured text without control
/// characters, quoted so punctuation in it cannot break the header.
fn list_id_header(config: &Config, list: &ListConfig) -> String {
    let host = config.server.public_url.host_str().unwrap_or("localhost");
    let name = list.name.replace(['"', '\\'], "");
    format!("\"{name}\" <{}.{host}>", list.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formatted mail with quoted-printable soft line breaks and `=3D` undone, enough to
    /// search for links.
    fn readable(message: &Message) -> String {
        String::from_utf8(message.formatted()).unwrap().replace("=\r\n", "").replace("=3D", "=")
    }

    fn config() -> Config {
        Config::from_toml(
            "[server]\npublic_url = \"https://signup.bakery.test\"\n[[lists]]\nid = \"news\"\nname = \"News & Notes\"\nreply_to = \"Help <help@example.com>\"",
        )
        .unwrap()
    }

    const ANN: Recipient<'static> = Recipient { address: "ann@example.com", reference: "v1.REF", language: None };

    #[test]
    fn the_confirmation_has_both_parts_links_and_headers() {
        let config = config();
        let list = &config.lists[0];
        let message = confirmation(&config, list, &[], ANN, "CONFIRMTOKEN", "REMOVALTOKEN", 1_767_225_600).unwrap();
        let text = readable(&message);
        assert!(text.contains("multipart/alternative"));
        assert!(text.contains("text/plain"));
        assert!(text.contains("text/html"));
        assert!(text.contains("https://signup.bakery.test/confirm?token=CONFIRMTOKEN"));
        assert!(text.contains("https://signup.bakery.test/manage?token=REMOVALTOKEN"));
        assert!(text.contains("1 January 2026, 00:00 UTC"));
        assert!(text.contains("Auto-Submitted: auto-generated"));
        assert!(text.contains("List-Id: \"News & Notes\" <news.signup.bakery.test>"));
        assert!(text.contains("Reply-To: Help <help@example.com>"));
        assert!(text.contains("Message-ID: <"));
        assert!(text.contains("@example.com>"));
        assert!(text.contains("X-Signupd-Ref: v1.REF"));
        assert!(!text.contains("List-Unsubscribe"), "confirmation mails are not list mail");
        assert!(!text.contains("<img"), "no remote images");
    }

    #[test]
    fn the_reference_is_echoed_where_each_configured_relay_returns_metadata() {
        let plain = config();
        let text = readable(&welcome(&plain, &plain.lists[0], ANN, "MANAGE", "UNSUB").unwrap());
        for name in ["X-PM-Metadata", "X-Mailgun-Variables", "X-SMTPAPI"] {
            assert!(!text.contains(name), "no relay configured, no {name}");
        }
        let with_relays = Config::from_toml(
            "[[lists]]\nid = \"news\"\n\
             [[relays]]\nname = \"pm\"\nkind = \"postmark\"\n\
             [[relays]]\nname = \"mg\"\nkind = \"mailgun\"\n\
             [[relays]]\nname = \"sg\"\nkind = \"sendgrid\"\n\
             [[relays]]\nname = \"rs\"\nkind = \"resend\"\n",
        )
        .unwrap();
        let message =
            confirmation(&with_relays, &with_relays.lists[0], &[], ANN, "CONFIRM", "REMOVAL", 1_767_225_600).unwrap();
        let text = readable(&message);
        assert!(text.contains("X-Signupd-Ref: v1.REF"));
        assert!(text.contains("X-PM-Metadata-signupd-ref: v1.REF"));
        assert!(text.contains(r#"X-Mailgun-Variables: {"signupd_ref":"v1.REF"}"#), "{text}");
        assert!(text.contains(r#"X-SMTPAPI: {"unique_args":{"signupd_ref":"v1.REF"}}"#), "{text}");
    }

    #[test]
    fn the_welcome_mail_offers_one_click_unsubscribe() {
        let config = config();
        let message = welcome(&config, &config.lists[0], ANN, "MANAGE", "UNSUB").unwrap();
        let text = readable(&message);
        assert!(text.contains("X-Signupd-Ref: v1.REF"));
        assert!(text.contains("List-Unsubscribe: <https://signup.bakery.test/api/unsubscribe?token=UNSUB>"));
        assert!(text.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));
        assert!(text.contains("https://signup.bakery.test/manage?token=MANAGE"));
    }

    /// The welcome mail's manage link opens the preference page, where one can also leave: its
    /// words say so in every language, not "remove your address": a reader who only wants to
    /// change a topic must recognise the link as theirs.
    #[test]
    fn the_welcome_mails_link_is_named_for_the_preference_page_in_every_language() {
        for (language, names, not) in [
            ("en", ["preference page", "Open my preference page", "or leave"], "remove your address"),
            ("de", ["Einstellungsseite", "Meine Einstellungsseite", "abmelden"], "Adresse jederzeit entfernen"),
        ] {
            let config = Config::from_toml(&format!(
                "[server]\npublic_url = \"https://signup.bakery.test\"\n[[lists]]\nid = \"news\"\nlanguage = \"{language}\""
            ))
            .unwrap();
            let messages = config.lists[0].language.messages();
            let html = WelcomeHtml {
                m: &Frame::new(
                    &Links::new(&config),
                    &config.lists[0],
                    config.lists[0].welcome_subject(),
                    config.lists[0].language,
                ),
                manage_url: "https://signup.bakery.test/manage?token=MANAGE",
            }
            .render()
            .unwrap();
            for name in names {
                assert!(html.contains(name), "{language}: {name:?} not in {html}");
            }
            assert!(!html.contains(not), "{language}: {html}");
            let words = format!("{} {}", messages.mail.preferences_any_time, messages.mail.preferences_link);
            assert!(!words.to_lowercase().contains(&not.to_lowercase()), "{language}: {words}");
        }
    }
}
