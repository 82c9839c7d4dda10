//! The message catalogues: every word a visitor reads on the pages and in the two mails, in
//! Project Fluent's format (`.ftl`, read with the `fluent` crates), one file per language under
//! `locales/`, embedded in the binary; the operator's own files (`server.locales_dir`) add a
//! language or override single messages of a shipped one.
//!
//! [`Messages`] is typed: a page can only use a message that exists. `en.ftl` is the reference:
//! a catalogue is refused (with file, message and line) when it lacks one of its messages, has
//! one it does not have, or uses a variable its English message does not (signupd gives a
//! message only the variables the English one uses). Plurals and other selections follow CLDR's
//! rules for the language (`fluent-bundle` through `intl_pluralrules`). The JSON API's error
//! codes are not texts: they stay English.
//!
//! Decisions: Unicode isolation marks (FSI/PDI around every placeable) are on for right-to-left
//! languages, where a Latin list name or address inside Arabic text needs them, and off for the
//! others, where they would only be invisible noise in subjects and plain-text mail. Every
//! message is formatted as plain text; HTML escaping is the templates' (askama's), and
//! [`Text::bold`] escapes both the text and its value itself.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::LazyLock;

use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use unic_langid::{CharacterDirection, LanguageIdentifier};

use super::ftl::{self, Problem, Source};
use super::pseudo;

/// `(language code, catalogue)`: the code is what `language` in a list's configuration names,
/// and what `<html lang>` and `Content-Language` say. Every `locales/*.ftl`, `en` first, listed
/// by `build.rs`.
const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/catalogues.rs"));

type Bundle = fluent_bundle::concurrent::FluentBundle<FluentResource>;

/// One message of `en.ftl`: the line it is on and the variables signupd gives it.
struct English {
    line: usize,
    variables: BTreeSet<String>,
}

/// `en.ftl`'s messages by id: what every catalogue must have, and the variables it may use.
static ENGLISH: LazyLock<BTreeMap<String, English>> = LazyLock::new(|| {
    let source = Source::parse("en.ftl", SHIPPED[0].1.to_owned())
        .unwrap_or_else(|problems| panic!("the built-in en.ftl does not parse: {}", list(&problems)));
    source
        .messages()
        .map(|message| {
            let variables = ftl::variables(message).into_iter().map(str::to_owned).collect();
            (message.id.name.to_owned(), English { line: source.line_of(message.id.name), variables })
        })
        .collect()
});

/// The shipped languages and the pseudo-locale, loaded once.
static BUILT_IN: LazyLock<Vec<Language>> = LazyLock::new(|| {
    let shipped = SHIPPED.iter().map(|(code, text)| {
        let source = Source::parse(&format!("{code}.ftl"), (*text).to_owned());
        source.and_then(|source| build(code, vec![source], None))
    });
    let pseudo = Source::parse("en.ftl", SHIPPED[0].1.to_owned())
        .and_then(|english| build(pseudo::CODE, vec![english], Some(pseudo::transform)));
    shipped
        .chain([pseudo])
        .map(|language| language.unwrap_or_else(|problems| panic!("a built-in catalogue: {}", list(&problems))))
        .collect()
});

fn list(problems: &[Problem]) -> String {
    problems.iter().map(Problem::to_string).collect::<Vec<_>>().join("; ")
}

/// A language signupd has a catalogue for: a handle, cheap to copy and compare.
#[derive(Clone, Copy)]
pub struct Language(&'static Messages);

impl Language {
    /// The built-in catalogue for `code` (`"en"`, `"de"`, the pseudo-locale `"en-XA"`), if there
    /// is one. The operator's languages are [`Locales::find`]'s.
    pub fn find(code: &str) -> Option<Self> {
        BUILT_IN.iter().copied().find(|language| language.code() == code)
    }

    pub fn english() -> Self {
        Self::find("en").expect("the English catalogue is built in")
    }

    /// Every built-in language code (the pseudo-locale last), for error messages.
    pub fn codes() -> Vec<&'static str> {
        BUILT_IN.iter().map(|language| language.code()).collect()
    }

    pub fn code(self) -> &'static str {
        self.0.code
    }

    pub fn messages(self) -> &'static Messages {
        self.0
    }

    /// Whether the language is written right to left (Arabic): its pages say `dir="rtl"`.
    pub fn is_rtl(self) -> bool {
        self.0.rtl
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

/// The operator's catalogues (`server.locales_dir`): languages added, and shipped languages
/// with messages overridden. Empty without the key.
#[derive(Debug, Clone, Default)]
pub struct Locales {
    languages: Vec<Language>,
    /// The codes of files refused by [`Locales::load`]: a list naming one is not told again
    /// that its language is unknown ([`Locales::find`] answers English for it; the
    /// configuration is refused anyway).
    refused: Vec<String>,
}

impl Locales {
    /// Reads every `<code>.ftl` in `dir`. Each one's messages override the shipped language's;
    /// a language signupd does not ship must have every message of `en.ftl`. Every problem of
    /// every file is reported, each naming its file, message and line.
    pub fn load(dir: &Path) -> Result<Self, (Self, Vec<Problem>)> {
        let entries =
            std::fs::read_dir(dir).map_err(|error| (Self::default(), vec![dir_problem(dir, &error.to_string())]))?;
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "ftl"))
            .collect();
        files.sort();
        let mut languages = Vec::new();
        let mut refused = Vec::new();
        let mut problems = Vec::new();
        for path in files {
            let name = path.display().to_string();
            let code = path.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default().to_owned();
            let loaded = std::fs::read_to_string(&path)
                .map_err(|error| vec![dir_problem(&path, &format!("cannot be read: {error}"))])
                .and_then(|text| Source::parse(&name, text))
                .and_then(|operator| {
                    let shipped = SHIPPED.iter().find(|(shipped, _)| *shipped == code);
                    let mut sources = Vec::new();
                    if let Some((shipped, text)) = shipped {
                        sources.push(Source::parse(&format!("{shipped}.ftl"), (*text).to_owned())?);
                    }
                    sources.push(operator);
                    build(&code, sources, None)
                });
            match loaded {
                Ok(language) => languages.push(language),
                Err(more) => {
                    problems.extend(more);
                    refused.push(code);
                }
            }
        }
        let locales = Self { languages, refused };
        if problems.is_empty() { Ok(locales) } else { Err((locales, problems)) }
    }

    /// The operator's catalogue for `code`, else the built-in one.
    pub fn find(&self, code: &str) -> Option<Language> {
        let refused = self.refused.iter().any(|refused| refused == code).then(Language::english);
        self.languages
            .iter()
            .copied()
            .find(|language| language.code() == code)
            .or(refused)
            .or_else(|| Language::find(code))
    }

    /// Every language code there is a catalogue for, built in or the operator's.
    pub fn codes(&self) -> Vec<&'static str> {
        let mut codes = Language::codes();
        for language in &self.languages {
            if !codes.contains(&language.code()) {
                codes.push(language.code());
            }
        }
        codes
    }
}

fn dir_problem(path: &Path, what: &str) -> Problem {
    Problem { file: path.display().to_string(), line: 0, message: None, what: what.to_owned() }
}

/// One language from its files, the operator's last (its messages override the ones before):
/// every message checked against `en.ftl`, then the typed [`Messages`].
fn build(
    code: &str,
    sources: Vec<Source>,
    transform: Option<fn(&str) -> std::borrow::Cow<'_, str>>,
) -> Result<Language, Vec<Problem>> {
    let last = sources.last().map(|source| source.name.clone()).unwrap_or_default();
    let identifier: LanguageIdentifier = code.parse().map_err(|_| {
        vec![Problem {
            file: last.clone(),
            line: 0,
            message: None,
            what: format!("{code:?} is not a language code (BCP 47, like \"fr\" or \"pt-BR\")"),
        }]
    })?;
    let mut problems: Vec<Problem> = sources.iter().flat_map(check).collect();
    let mut defined = BTreeSet::new();
    for source in &sources {
        defined.extend(source.messages().map(|message| message.id.name.to_owned()));
    }
    for (id, english) in ENGLISH.iter() {
        if !defined.contains(id) {
            problems.push(Problem {
                file: last.clone(),
                line: 0,
                message: Some(id.clone()),
                what: format!("missing (en.ftl has it on line {})", english.line),
            });
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let rtl = identifier.character_direction() == CharacterDirection::RTL;
    let mut bundle = Bundle::new_concurrent(vec![identifier]);
    bundle.set_use_isolating(rtl);
    bundle.set_transform(transform);
    for source in sources {
        // `check` found every duplicate already; overriding is what the operator's file is for.
        bundle.add_resource_overriding(source.resource);
    }
    let bundle: &'static Bundle = Box::leak(Box::new(bundle));
    let code: &'static str = Box::leak(code.to_owned().into_boxed_str());
    let messages = Messages::load(code, rtl, bundle);
    Ok(Language(Box::leak(Box::new(messages))))
}

/// A file's own problems: a message `en.ftl` does not have, one defined twice, one without a
/// value, one using a variable signupd does not give it.
fn check(source: &Source) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for message in source.messages() {
        let id = message.id.name;
        if !seen.insert(id) {
            problems.push(source.problem(id, "defined twice".into()));
            continue;
        }
        let Some(english) = ENGLISH.get(id) else {
            problems.push(source.problem(id, "is not a message signupd has (see en.ftl)".into()));
            continue;
        };
        if message.value.is_none() {
            problems.push(source.problem(id, "has no text".into()));
        }
        for variable in ftl::variables(message) {
            if !english.variables.contains(variable) {
                let given: Vec<String> = english.variables.iter().map(|name| format!("${name}")).collect();
                let given = if given.is_empty() { "none".to_owned() } else { given.join(", ") };
                problems.push(source.problem(
                    id,
                    format!("uses the variable ${variable}, which signupd does not give it (it gives: {given})"),
                ));
            }
        }
    }
    problems
}

/// One message of a catalogue: formatted when a page or mail uses it.
pub struct Text {
    bundle: &'static Bundle,
    id: &'static str,
    /// The variables signupd gives it (its English message's).
    variables: &'static BTreeSet<String>,
}

/// Stands in for a value while [`Text::bold`] escapes the text around it: a noncharacter, which
/// no catalogue and no value has.
const MARK: &str = "\u{FDD0}";

impl Text {
    fn format(&self, args: Option<&FluentArgs<'_>>) -> String {
        let Some(pattern) = self.bundle.get_message(self.id).and_then(|message| message.value()) else {
            return self.id.to_owned();
        };
        let mut errors = Vec::new();
        self.bundle.format_pattern(pattern, args, &mut errors).into_owned()
    }

    /// The message with its variable(s) set to `value`.
    pub fn with(&self, value: &str) -> String {
        let mut args = FluentArgs::new();
        for name in self.variables {
            args.set(name.as_str(), argument(value));
        }
        self.format(Some(&args))
    }

    /// The message with each variable set to the value `pairs` gives for it. A value that is a
    /// whole number is given as a number, so that a language can choose its plural form by it.
    pub fn fill(&self, pairs: &[(&str, &str)]) -> String {
        let mut args = FluentArgs::new();
        for (name, value) in pairs {
            args.set(*name, argument(value));
        }
        self.format(Some(&args))
    }

    /// HTML: the message escaped, with `value` escaped and set in `<strong>` where its variable
    /// is. For templates, which print it with `|safe`.
    pub fn bold(&self, value: &str) -> String {
        let strong = format!("<strong>{}</strong>", escape_html(value));
        escape_html(&self.with(MARK)).replace(MARK, &strong)
    }

    /// The names of the variables signupd gives the message.
    pub fn placeholders(&self) -> Vec<&str> {
        self.variables.iter().map(String::as_str).collect()
    }
}

fn argument(value: &str) -> FluentValue<'static> {
    match value.parse::<u64>() {
        Ok(number) if !value.starts_with('0') || value == "0" => FluentValue::from(number),
        _ => FluentValue::from(value.to_owned()),
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format(None))
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

pub fn escape_html(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html).map_or_else(|_| String::new(), |safe| safe.to_string())
}

/// Makes the [`Text`]s of one language, each by its id in `en.ftl`.
struct Loader {
    bundle: &'static Bundle,
}

impl Loader {
    /// The message `<section>-<key>` (underscores as dashes: `check_inbox.sent_for` is
    /// `check-inbox-sent-for`).
    fn text(&self, section: &str, key: &str) -> Text {
        let id = format!("{section}-{key}").replace('_', "-");
        let (id, english) =
            ENGLISH.get_key_value(&id).unwrap_or_else(|| panic!("en.ftl has no message {id}, which signupd uses"));
        Text { bundle: self.bundle, id, variables: &english.variables }
    }
}

/// A struct of the messages of one section of the catalogue, each field the message
/// `<section>-<field>`.
macro_rules! texts {
    ($(#[$meta:meta])* $name:ident $section:literal { $($(#[$field_meta:meta])* $field:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: Text,)*
        }

        impl $name {
            /// Every message id of the section.
            #[cfg(test)]
            const KEYS: &[&str] = &[$(stringify!($field)),*];

            fn load(from: &Loader) -> Self {
                Self { $($field: from.text($section, stringify!($field)),)* }
            }
        }
    };
}

/// Every text of one language.
#[derive(Debug)]
pub struct Messages {
    pub code: &'static str,
    rtl: bool,
    /// A date in a mail: `$day`, `$month` (one of `months`), `$year`, `$time` (UTC).
    date: Text,
    months: [Text; 12],
    pub durations: Durations,
    pub language: LanguageTexts,
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
    fn load(code: &'static str, rtl: bool, bundle: &'static Bundle) -> Self {
        let from = Loader { bundle };
        Self {
            code,
            rtl,
            date: from.text("date", "format"),
            months: std::array::from_fn(|index| from.text("date", &format!("month_{}", index + 1))),
            durations: Durations::load(&from),
            language: LanguageTexts::load(&from),
            page: PageTexts::load(&from),
            errors: ErrorTexts::load(&from),
            signup: SignupTexts::load(&from),
            check_inbox: CheckInboxTexts::load(&from),
            surge: SurgeTexts::load(&from),
            confirm: ConfirmTexts::load(&from),
            manage: ManageTexts::load(&from),
            preferences: PreferencesTexts::load(&from),
            privacy: PrivacyTexts::load(&from),
            mail: MailTexts::load(&from),
        }
    }

    /// `"rtl"` for a language written right to left, else `"ltr"`: `<html dir>`.
    pub fn dir(&self) -> &'static str {
        if self.rtl { "rtl" } else { "ltr" }
    }

    /// `at` (Unix seconds) as a date and time in UTC, written for this language.
    pub fn date_time(&self, at: i64) -> String {
        use chrono::{Datelike, Timelike};
        let Some(at) = chrono::DateTime::from_timestamp(at, 0) else {
            return String::new();
        };
        let month = self.months[at.month0() as usize].to_string();
        self.date.fill(&[
            ("day", &at.day().to_string()),
            ("month", &month),
            ("year", &at.year().to_string()),
            ("time", &format!("{:02}:{:02}", at.hour(), at.minute())),
        ])
    }

    /// `duration` in words, in its largest whole unit: "10 minutes", "2 days", "90 seconds",
    /// in the plural form the language's rules give the number.
    pub fn duration(&self, duration: std::time::Duration) -> String {
        let seconds = duration.as_secs().max(1);
        let d = &self.durations;
        let (n, unit) = [(86_400, &d.day), (3_600, &d.hour), (60, &d.minute)]
            .into_iter()
            .find(|(unit, _)| seconds.is_multiple_of(*unit))
            .map_or((seconds, &d.second), |(length, unit)| (seconds / length, unit));
        unit.fill(&[("n", &n.to_string())])
    }

    /// `["a", "b", "c"]` → "a, b and c".
    pub fn and_list(&self, items: &[String]) -> String {
        match items {
            [] => String::new(),
            [only] => only.clone(),
            [init @ .., last] => {
                let init = init.join(&self.durations.separator.to_string());
                self.durations.and.fill(&[("init", &init), ("last", last)])
            }
        }
    }
}

texts! {
    /// Durations, one message per unit with the number `$n`; `and` joins the last item of a
    /// list to the ones before it, which `separator` joins (each language's own words and
    /// punctuation: "a, b and c", "a、b、c", "a، b وc"), `per` writes a rate ("3 per 10 minutes").
    Durations "duration" {
        second,
        minute,
        hour,
        day,
        and,
        separator,
        per,
    }
}

texts! {
    /// The language itself: its own name, in itself ("Deutsch"), for the links between the
    /// languages of a list's form.
    LanguageTexts "language" {
        name,
    }
}

texts! {
    PageTexts "page" {
        back_to,
        privacy,
        /// Before the links to the form in the list's other languages.
        languages,
    }
}

texts! {
    ErrorTexts "errors" {
        unavailable_title,
        unavailable,
        not_found_title,
        not_found,
        not_found_link,
        incomplete_title,
        incomplete,
        /// A press of a form's button refused for its method, size or kind of body.
        refused_title,
        refused,
        /// The plain-text `408` of a body that did not arrive in time.
        timeout,
        /// The plain-text `500` of a page that could not be rendered.
        internal,
    }
}

texts! {
    SignupTexts "signup" {
        title,
        heading,
        intro,
        email_label,
        honeypot_label,
        submit,
        choose_title,
        choose,
        several_title,
        several_heading,
        lists_legend,
        several_consent,
        no_list_ticked,
        /// After a form field's label, when the field may be left empty.
        optional,
        /// A select field's first, empty option.
        choose_option,
        /// A required form field left empty: `{field}` is its label.
        field_missing,
        /// A form field whose value its rule refuses: `{field}` is its label.
        field_invalid,
        unreadable,
        unsupported,
        too_large,
        origin_not_allowed,
        invalid_email,
        consent_required,
        unknown_list,
        invalid_source,
        unknown_tag,
        domain_not_allowed,
        rate_limited,
        storage_unavailable,
    }
}

texts! {
    CheckInboxTexts "check_inbox" {
        title,
        sent,
        sent_for,
        nothing_arrived,
        /// The "open your inbox" link: `{provider}` is its name ("Open Gmail").
        open_inbox,
    }
}

texts! {
        /// Surge mode's page: the site is seeing unusual traffic; press to send.
    SurgeTexts "surge" {
        title,
        unusual,
        ask,
        button,
        not_you,
    }
}

texts! {
    ConfirmTexts "confirm" {
        title,
        heading,
        intro,
        email_label,
        email_hint,
        button,
        not_you,
        wrong_address,
        already_title,
        already,
        done_title,
        done,
        done_any,
        expired_title,
        expired,
        sign_up_again,
    }
}

texts! {
    ManageTexts "manage" {
        title,
        intro,
        intro_any,
        button,
        removed_title,
        removed,
        removed_any,
    }
}

texts! {
        /// The preference page (`GET /manage` for a link that names a row) and its answers.
    PreferencesTexts "preferences" {
        title,
        intro,
        legend,
        pending,
        /// Before the form fields a list's row keeps, shown read-only.
        kept,
        save,
        remove_all_heading,
        remove_all_intro,
        remove_all,
        saved_title,
        saved,
        saved_any,
        unreadable_title,
        unreadable,
    }
}

texts! {
    PrivacyTexts "privacy" {
        title,
        heading,
        intro,
        stored_heading,
        stored,
        /// The list's form fields: `{fields}` are their labels.
        fields,
        no_ip,
        neighbourhood,
        mail_heading,
        mail,
        unconfirmed,
        never_mailed,
        cap,
        reputation,
        removal_heading,
        removal,
        shared,
        contact,
    }
}

texts! {
    MailTexts "mail" {
        greeting,
        asked,
        how,
        confirm_link,
        copy,
        until,
        not_you,
        remove_for_good,
        welcome,
        /// The welcome mail's link opens the preference page (where one may also leave): the words
        /// say so, not "remove".
        preferences_any_time,
        preferences_link,
        automated,
        privacy,
        confirm_subject,
        welcome_subject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `locales/*.ftl` in the source tree, `(code, text)`, read now: the files a
    /// translator adds are checked as soon as they are there.
    fn files() -> Vec<(String, String)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "ftl"))
            .map(|path| {
                let code = path.file_stem().unwrap().to_str().unwrap().to_owned();
                (code, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    /// `id` → (its variables, its attributes) for every message of a file.
    fn shape(code: &str, text: &str) -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
        let source = Source::parse(&format!("{code}.ftl"), text.to_owned())
            .unwrap_or_else(|problems| panic!("{}", list(&problems)));
        let mut out = BTreeMap::new();
        for message in source.messages() {
            let variables = ftl::variables(message).into_iter().map(str::to_owned).collect();
            let attributes = message.attributes.iter().map(|attribute| attribute.id.name.to_owned()).collect();
            let line = source.line_of(message.id.name);
            assert!(
                out.insert(message.id.name.to_owned(), (variables, attributes)).is_none(),
                "{code}.ftl line {line}: {} is defined twice",
                message.id.name
            );
            assert!(message.value.is_some(), "{code}.ftl line {line}: {} has no text", message.id.name);
        }
        out
    }

    #[test]
    fn every_catalogue_file_has_exactly_the_english_messages_and_uses_their_variables() {
        let files = files();
        let english = shape("en", SHIPPED[0].1);
        assert!(files.len() >= 2, "{:?}", files.iter().map(|(code, _)| code).collect::<Vec<_>>());
        for (code, text) in &files {
            let shape = shape(code, text);
            let missing: Vec<_> = english.keys().filter(|id| !shape.contains_key(*id)).collect();
            let extra: Vec<_> = shape.keys().filter(|id| !english.contains_key(*id)).collect();
            assert!(missing.is_empty() && extra.is_empty(), "{code}.ftl misses {missing:?} and has extra {extra:?}");
            for (id, wanted) in &english {
                assert_eq!(&shape[id], wanted, "{code}.ftl: {id} differs from en.ftl in (variables, attributes)");
            }
        }
    }

    #[test]
    fn every_catalogue_file_is_built_in_and_loads() {
        let on_disk: Vec<String> = files().into_iter().map(|(code, _)| code).collect();
        let built_in: Vec<String> = SHIPPED.iter().map(|(code, _)| (*code).to_owned()).collect();
        assert_eq!(
            on_disk.iter().collect::<BTreeSet<_>>(),
            built_in.iter().collect::<BTreeSet<_>>(),
            "locales/ and SHIPPED (catalogue.rs) name different languages"
        );
        for (code, _) in SHIPPED {
            assert_eq!(Language::find(code).map(Language::code), Some(*code));
        }
        assert_eq!(Language::codes().first(), Some(&"en"));
        assert_eq!(Language::codes().last(), Some(&pseudo::CODE));
        assert!(Language::find("xx").is_none());
    }

    #[test]
    fn english_has_exactly_the_messages_signupd_uses() {
        let sections: &[(&str, &[&str])] = &[
            ("duration", Durations::KEYS),
            ("language", LanguageTexts::KEYS),
            ("page", PageTexts::KEYS),
            ("errors", ErrorTexts::KEYS),
            ("signup", SignupTexts::KEYS),
            ("check_inbox", CheckInboxTexts::KEYS),
            ("surge", SurgeTexts::KEYS),
            ("confirm", ConfirmTexts::KEYS),
            ("manage", ManageTexts::KEYS),
            ("preferences", PreferencesTexts::KEYS),
            ("privacy", PrivacyTexts::KEYS),
            ("mail", MailTexts::KEYS),
        ];
        let mut used: BTreeSet<String> = sections
            .iter()
            .flat_map(|(section, keys)| keys.iter().map(move |key| format!("{section}-{key}").replace('_', "-")))
            .collect();
        used.insert("date-format".into());
        used.extend((1..=12).map(|month| format!("date-month-{month}")));
        assert_eq!(used, ENGLISH.keys().cloned().collect::<BTreeSet<_>>());
    }

    #[test]
    fn the_catalogues_are_translated_not_copied() {
        let en = Language::find("en").unwrap().messages();
        let de = Language::find("de").unwrap().messages();
        assert_ne!(en.signup.submit.to_string(), de.signup.submit.to_string());
        assert_ne!(en.mail.asked.to_string(), de.mail.asked.to_string());
        assert_eq!(de.code, "de");
        assert_eq!(de.language.name.to_string(), "Deutsch");
    }

    #[test]
    fn texts_fill_and_escape_their_variables_without_isolation_marks_left_to_right() {
        let en = Language::english().messages();
        assert_eq!(en.signup.heading.with("News & more"), "Sign up for News & more");
        assert_eq!(en.signup.heading.bold("<b>"), "Sign up for <strong>&#60;b&#62;</strong>");
        assert_eq!(en.durations.per.fill(&[("n", "3"), ("duration", "10 minutes")]), "3 per 10 minutes");
        assert_eq!(en.durations.per.placeholders(), ["duration", "n"]);
        assert_eq!(en.errors.not_found.to_string(), "There is no signup form here.");
        assert_eq!(Language::english().messages().dir(), "ltr");
    }

    #[test]
    fn dates_and_durations_are_written_for_the_language_with_its_plural_rules() {
        let en = Language::find("en").unwrap().messages();
        let de = Language::find("de").unwrap().messages();
        // 2026-03-02 14:05 UTC
        assert_eq!(en.date_time(1_772_460_300), "2 March 2026, 14:05 UTC");
        assert_eq!(de.date_time(1_772_460_300), "2. März 2026, 14:05 UTC");
        use std::time::Duration;
        assert_eq!(en.duration(Duration::from_secs(600)), "10 minutes");
        assert_eq!(en.duration(Duration::from_secs(60)), "1 minute");
        assert_eq!(en.duration(Duration::from_secs(86_400)), "1 day");
        assert_eq!(de.duration(Duration::from_secs(48 * 3600)), "2 Tage");
        assert_eq!(de.duration(Duration::from_secs(3600)), "1 Stunde");
        assert_eq!(en.duration(Duration::from_secs(90)), "90 seconds");
        assert_eq!(de.and_list(&["a".into(), "b".into(), "c".into()]), "a, b und c");
        // Each language joins a list with its own punctuation and word: Japanese with 、 and no
        // spaces, Arabic with its comma and و written onto the last item.
        let items: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        let ja = Language::find("ja").expect("ja ships").messages();
        assert_eq!(ja.and_list(&items), "a、b、c");
        let ar = Language::find("ar").expect("ar ships").messages();
        let joined: String = ar.and_list(&items).chars().filter(|c| !matches!(c, '\u{2068}' | '\u{2069}')).collect();
        assert_eq!(joined, "a، b وc");
    }

    /// Polish has CLDR's one/few/many, Arabic six forms: the numbers pick them, not a
    /// singular and a plural key. (Checked for the languages that are there.)
    #[test]
    fn plural_forms_follow_each_languages_cldr_rules() {
        use std::time::Duration;
        let minutes =
            |code: &str, n: u64| Language::find(code).map(|l| l.messages().duration(Duration::from_secs(n * 60)));
        if let (Some(two), Some(five), Some(twenty_two)) = (minutes("pl", 2), minutes("pl", 5), minutes("pl", 22)) {
            assert_eq!((two.as_str(), five.as_str(), twenty_two.as_str()), ("2 minuty", "5 minut", "22 minuty"));
        }
        if let Some(forms) = ["ar"].iter().find_map(|code| {
            let forms: Option<Vec<String>> = [1, 2, 3, 11, 100].iter().map(|n| minutes(code, *n)).collect();
            forms
        }) {
            let distinct: BTreeSet<String> =
                forms.iter().map(|form| form.chars().filter(|c| !c.is_ascii_digit()).collect()).collect();
            assert!(distinct.len() >= 4, "Arabic's one, two, few, many and other forms: {forms:?}");
        }
    }

    #[test]
    fn the_pseudo_locale_accents_every_message_and_keeps_the_values() {
        let pseudo = Language::find(pseudo::CODE).unwrap().messages();
        let heading = pseudo.signup.heading.with("News");
        assert!(heading.ends_with("News"), "{heading}");
        let words = heading.trim_end_matches("News");
        assert!(!words.chars().any(|c| c.is_ascii_alphabetic()), "{heading}");
        assert!(words.chars().count() >= "Sign up for ".len() * 14 / 10, "{heading}");
        assert_eq!(pseudo.duration(std::time::Duration::from_secs(60)).chars().next(), Some('1'));
    }
}
