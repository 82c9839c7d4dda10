//! The message catalogues: every word a visitor reads on the pages and in the two mails, one
//! TOML file per language under `locales/`, embedded in the binary.
//!
//! [`Messages`] is typed: a page can only use a text that exists, and a catalogue that lacks a
//! key or has one too many fails to load (the tests load every catalogue, and check that each
//! text keeps the same `{placeholders}` as English). Adding a language is one new file plus its
//! line in `CATALOGUES`. The JSON API's error codes are not texts: they stay English.
//!
//! Placeholders are `{name}`; [`Text::with`] fills a text's one placeholder, [`Text::fill`]
//! several. Filling never interprets the value, and the HTML forms escape both parts.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use serde::Deserialize;

/// `(language code, catalogue)`: the code is what `language` in a list's configuration names,
/// and what `<html lang>` and `Content-Language` say.
const CATALOGUES: &[(&str, &str)] =
    &[("en", include_str!("../../../locales/en.toml")), ("de", include_str!("../../../locales/de.toml"))];

static LOADED: LazyLock<BTreeMap<&'static str, Messages>> = LazyLock::new(|| {
    CATALOGUES
        .iter()
        .map(|(code, text)| {
            let mut messages: Messages = toml::from_str(text)
                .unwrap_or_else(|error| panic!("the built-in catalogue {code}.toml does not load: {error}"));
            messages.code = code;
            (*code, messages)
        })
        .collect()
});

/// A language signupd has a catalogue for.
#[derive(Clone, Copy)]
pub struct Language(&'static Messages);

impl Language {
    /// The catalogue for `code` (`"en"`, `"de"`), if there is one.
    pub fn find(code: &str) -> Option<Self> {
        LOADED.get(code).map(Self)
    }

    pub fn english() -> Self {
        Self::find("en").expect("the English catalogue is built in")
    }

    /// Every language code with a catalogue, for error messages.
    pub fn codes() -> Vec<&'static str> {
        CATALOGUES.iter().map(|(code, _)| *code).collect()
    }

    pub fn code(self) -> &'static str {
        self.0.code
    }

    pub fn messages(self) -> &'static Messages {
        self.0
    }
}

impl fmt::Debug for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl PartialEq for Language {
    fn eq(&self, other: &Self) -> bool {
        self.code() == other.code()
    }
}

/// One text of a catalogue, possibly with `{placeholders}`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct Text(String);

impl Text {
    /// The text with its placeholder(s) replaced by `value`.
    pub fn with(&self, value: &str) -> String {
        let mut out = String::with_capacity(self.0.len() + value.len());
        for piece in pieces(&self.0) {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Placeholder(_) => out.push_str(value),
            }
        }
        out
    }

    /// The text with each `{name}` replaced by the value `pairs` gives for it; a name not in
    /// `pairs` stays as written.
    pub fn fill(&self, pairs: &[(&str, &str)]) -> String {
        let mut out = String::with_capacity(self.0.len());
        for piece in pieces(&self.0) {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Placeholder(name) => match pairs.iter().find(|(key, _)| *key == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&format!("{{{name}}}")),
                },
            }
        }
        out
    }

    /// HTML: the text escaped, with `value` escaped and set in `<strong>` where the placeholder
    /// is. For templates, which print it with `|safe`.
    pub fn bold(&self, value: &str) -> String {
        let mut out = String::new();
        for piece in pieces(&self.0) {
            match piece {
                Piece::Literal(text) => out.push_str(&escape_html(text)),
                Piece::Placeholder(_) => {
                    out.push_str("<strong>");
                    out.push_str(&escape_html(value));
                    out.push_str("</strong>");
                }
            }
        }
        out
    }

    /// The placeholder names, in order.
    pub fn placeholders(&self) -> Vec<&str> {
        pieces(&self.0)
            .filter_map(|piece| match piece {
                Piece::Placeholder(name) => Some(name),
                Piece::Literal(_) => None,
            })
            .collect()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

enum Piece<'a> {
    Literal(&'a str),
    Placeholder(&'a str),
}

/// Splits a text at `{name}` placeholders (names of `a-z` and `_`); other braces are literal.
fn pieces(text: &str) -> impl Iterator<Item = Piece<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let placeholder = rest.find('{').and_then(|open| {
            let close = open + rest[open..].find('}')?;
            let name = &rest[open + 1..close];
            let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            valid.then_some((open, close, name))
        });
        match placeholder {
            Some((0, close, name)) => {
                rest = &rest[close + 1..];
                Some(Piece::Placeholder(name))
            }
            Some((open, _, _)) => {
                let (literal, tail) = rest.split_at(open);
                rest = tail;
                Some(Piece::Literal(literal))
            }
            None => {
                let literal = rest;
                rest = "";
                Some(Piece::Literal(literal))
            }
        }
    })
}

pub fn escape_html(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html).map_or_else(|_| String::new(), |safe| safe.to_string())
}

/// Every text of one language. Field names are the catalogue's keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Messages {
    /// Set from `CATALOGUES`, not from the file.
    #[serde(skip)]
    pub code: &'static str,
    /// A date in a mail: `{day}`, `{month}` (a name from `months`), `{year}`, `{time}` (UTC).
    pub date: Text,
    pub months: [String; 12],
    pub durations: Durations,
    pub page: PageTexts,
    pub errors: ErrorTexts,
    pub signup: SignupTexts,
    pub check_inbox: CheckInboxTexts,
    pub surge: SurgeTexts,
    pub confirm: ConfirmTexts,
    pub manage: ManageTexts,
    pub preferences: PreferencesTexts,
    pub privacy: PrivacyTexts,
    pub mail: MailTexts,
}

impl Messages {
    /// `at` (Unix seconds) as a date and time in UTC, written for this language.
    pub fn date_time(&self, at: i64) -> String {
        use chrono::{Datelike, Timelike};
        let Some(at) = chrono::DateTime::from_timestamp(at, 0) else {
            return String::new();
        };
        let month = &self.months[at.month0() as usize];
        self.date.fill(&[
            ("day", &at.day().to_string()),
            ("month", month),
            ("year", &at.year().to_string()),
            ("time", &format!("{:02}:{:02}", at.hour(), at.minute())),
        ])
    }

    /// `duration` in words, in its largest whole unit: "10 minutes", "2 days", "90 seconds".
    pub fn duration(&self, duration: std::time::Duration) -> String {
        let seconds = duration.as_secs().max(1);
        let d = &self.durations;
        let (n, one, many) = [(86_400, &d.day, &d.days), (3_600, &d.hour, &d.hours), (60, &d.minute, &d.minutes)]
            .into_iter()
            .find(|(unit, _, _)| seconds.is_multiple_of(*unit))
            .map_or((seconds, &d.second, &d.seconds), |(unit, one, many)| (seconds / unit, one, many));
        if n == 1 { one.to_string() } else { many.with(&n.to_string()) }
    }

    /// `["a", "b", "c"]` → "a, b and c".
    pub fn and_list(&self, items: &[String]) -> String {
        match items {
            [] => String::new(),
            [only] => only.clone(),
            [init @ .., last] => format!("{} {} {last}", init.join(", "), self.durations.and),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Durations {
    pub second: Text,
    pub seconds: Text,
    pub minute: Text,
    pub minutes: Text,
    pub hour: Text,
    pub hours: Text,
    pub day: Text,
    pub days: Text,
    pub and: Text,
    pub per: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageTexts {
    pub back_to: Text,
    pub privacy: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorTexts {
    pub unavailable_title: Text,
    pub unavailable: Text,
    pub not_found_title: Text,
    pub not_found: Text,
    pub not_found_link: Text,
    pub incomplete_title: Text,
    pub incomplete: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignupTexts {
    pub title: Text,
    pub heading: Text,
    pub intro: Text,
    pub email_label: Text,
    pub honeypot_label: Text,
    pub submit: Text,
    pub choose_title: Text,
    pub choose: Text,
    pub several_title: Text,
    pub several_heading: Text,
    pub lists_legend: Text,
    pub several_consent: Text,
    pub no_list_ticked: Text,
    /// After a form field's label, when the field may be left empty.
    pub optional: Text,
    /// A select field's first, empty option.
    pub choose_option: Text,
    /// A required form field left empty: `{field}` is its label.
    pub field_missing: Text,
    /// A form field whose value its rule refuses: `{field}` is its label.
    pub field_invalid: Text,
    pub unreadable: Text,
    pub unsupported: Text,
    pub too_large: Text,
    pub origin_not_allowed: Text,
    pub invalid_email: Text,
    pub consent_required: Text,
    pub unknown_list: Text,
    pub invalid_source: Text,
    pub unknown_tag: Text,
    pub domain_not_allowed: Text,
    pub rate_limited: Text,
    pub storage_unavailable: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckInboxTexts {
    pub title: Text,
    pub sent: Text,
    pub sent_for: Text,
    pub nothing_arrived: Text,
    /// The "open your inbox" link: `{provider}` is its name ("Open Gmail").
    pub open_inbox: Text,
}

/// Surge mode's page: the site is seeing unusual traffic; press to send.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurgeTexts {
    pub title: Text,
    pub unusual: Text,
    pub ask: Text,
    pub button: Text,
    pub not_you: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmTexts {
    pub title: Text,
    pub heading: Text,
    pub intro: Text,
    pub email_label: Text,
    pub email_hint: Text,
    pub button: Text,
    pub not_you: Text,
    pub wrong_address: Text,
    pub already_title: Text,
    pub already: Text,
    pub done_title: Text,
    pub done: Text,
    pub done_any: Text,
    pub expired_title: Text,
    pub expired: Text,
    pub sign_up_again: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManageTexts {
    pub title: Text,
    pub intro: Text,
    pub intro_any: Text,
    pub button: Text,
    pub removed_title: Text,
    pub removed: Text,
    pub removed_any: Text,
}

/// The preference page (`GET /manage` for a link that names a row) and its answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreferencesTexts {
    pub title: Text,
    pub intro: Text,
    pub legend: Text,
    pub pending: Text,
    /// Before the form fields a list's row keeps, shown read-only.
    pub kept: Text,
    pub save: Text,
    pub remove_all_heading: Text,
    pub remove_all_intro: Text,
    pub remove_all: Text,
    pub saved_title: Text,
    pub saved: Text,
    pub saved_any: Text,
    pub unreadable_title: Text,
    pub unreadable: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyTexts {
    pub title: Text,
    pub heading: Text,
    pub intro: Text,
    pub stored_heading: Text,
    pub stored: Text,
    /// The list's form fields: `{fields}` are their labels.
    pub fields: Text,
    pub no_ip: Text,
    pub neighbourhood: Text,
    pub mail_heading: Text,
    pub mail: Text,
    pub unconfirmed: Text,
    pub never_mailed: Text,
    pub cap: Text,
    pub reputation: Text,
    pub removal_heading: Text,
    pub removal: Text,
    pub shared: Text,
    pub contact: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailTexts {
    pub greeting: Text,
    pub asked: Text,
    pub how: Text,
    pub confirm_link: Text,
    pub copy: Text,
    pub until: Text,
    pub not_you: Text,
    pub remove_for_good: Text,
    pub welcome: Text,
    /// The welcome mail's link opens the preference page (where one may also leave): the words
    /// say so, not "remove".
    pub preferences_any_time: Text,
    pub preferences_link: Text,
    pub automated: Text,
    pub privacy: Text,
    pub confirm_subject: Text,
    pub welcome_subject: Text,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of a catalogue file with its placeholders, `section.key` → names.
    fn keys(text: &str) -> BTreeMap<String, Vec<String>> {
        fn walk(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, Vec<String>>) {
            match value {
                toml::Value::Table(table) => {
                    for (key, value) in table {
                        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                        walk(&path, value, out);
                    }
                }
                toml::Value::String(text) => {
                    let names = Text(text.clone()).placeholders().into_iter().map(str::to_owned).collect();
                    out.insert(prefix.to_owned(), names);
                }
                toml::Value::Array(items) => {
                    out.insert(prefix.to_owned(), vec![format!("{} items", items.len())]);
                }
                other => panic!("{prefix}: unexpected value {other}"),
            }
        }
        let mut out = BTreeMap::new();
        walk("", &toml::from_str::<toml::Value>(text).unwrap(), &mut out);
        out
    }

    #[test]
    fn every_catalogue_loads_and_has_the_english_keys_and_placeholders() {
        let english = keys(CATALOGUES[0].1);
        for (code, text) in CATALOGUES {
            assert!(Language::find(code).is_some(), "{code} does not load");
            assert_eq!(keys(text), english, "{code}.toml differs from en.toml in keys or placeholders");
        }
        assert_eq!(Language::codes(), ["en", "de"]);
        assert!(Language::find("fr").is_none());
    }

    #[test]
    fn the_catalogues_are_translated_not_copied() {
        let en = Language::find("en").unwrap().messages();
        let de = Language::find("de").unwrap().messages();
        assert_ne!(en.signup.submit.to_string(), de.signup.submit.to_string());
        assert_ne!(en.mail.asked.to_string(), de.mail.asked.to_string());
        assert_eq!(de.code, "de");
    }

    #[test]
    fn texts_fill_and_escape_their_placeholders() {
        let text = Text("Sign up for {list} & more".into());
        assert_eq!(text.with("News"), "Sign up for News & more");
        assert_eq!(text.bold("<b>"), "Sign up for <strong>&#60;b&#62;</strong> &#38; more");
        let two = Text("{n} per {duration}, {unknown} {not a placeholder}".into());
        assert_eq!(
            two.fill(&[("n", "3"), ("duration", "10 minutes")]),
            "3 per 10 minutes, {unknown} {not a placeholder}"
        );
        assert_eq!(two.placeholders(), ["n", "duration", "unknown"]);
    }

    #[test]
    fn dates_and_durations_are_written_for_the_language() {
        let en = Language::find("en").unwrap().messages();
        let de = Language::find("de").unwrap().messages();
        // 2026-03-02 14:05 UTC
        assert_eq!(en.date_time(1_772_460_300), "2 March 2026, 14:05 UTC");
        assert_eq!(de.date_time(1_772_460_300), "2. März 2026, 14:05 UTC");
        use std::time::Duration;
        assert_eq!(en.duration(Duration::from_secs(600)), "10 minutes");
        assert_eq!(en.duration(Duration::from_secs(86_400)), "1 day");
        assert_eq!(de.duration(Duration::from_secs(48 * 3600)), "2 Tage");
        assert_eq!(en.duration(Duration::from_secs(90)), "90 seconds");
        assert_eq!(de.and_list(&["a".into(), "b".into(), "c".into()]), "a, b und c");
    }
}
