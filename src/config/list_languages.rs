//! One list, several languages: which of a list's languages a visitor reads, and which a stored
//! row is written in.
//!
//! A list serves `language` (its default) and the others of `languages`. A visitor's language
//! is, in order: the form's `lang` field (the site knows its page's language), else the
//! browser's `Accept-Language`, else `language`; both are matched against the list's languages
//! by RFC 4647 lookup (`fluent-langneg`), so a page in `fr-CA` or a browser asking for `de-AT`
//! finds `fr` or `de`. The choice depends on the request alone, never on what is stored about
//! the address, so the answer to a signup stays the same for every state of the address.
//!
//! A row keeps the language it was signed up in (the `language` column); every later page and
//! mail of the row reads it back with [`ListConfig::row_language`], which falls back to the
//! default when the list no longer serves it (the operator took it out of `languages`).

use fluent_langneg::{NegotiationStrategy, convert_vec_str_to_langids_lossy, negotiate_languages};

use super::parse::{self, Problems};
use super::{Config, ListConfig};
use crate::config::presentation::{Language, Locales};

/// Most language ranges of an `Accept-Language` header that are matched; browsers send a few,
/// and the rest of a longer header is not worth the work.
const MAX_RANGES: usize = 16;

/// A list's languages from `language` (already checked; `None` if it was refused) and
/// `languages`: the default first, each once. A code without a catalogue (built in, or the
/// operator's in `server.locales_dir`) is refused, named by its key (`lists[0].languages[1]`).
pub(super) fn check(
    default: Option<Language>,
    raw: &[String],
    key: &str,
    locales: &Locales,
    problems: &mut Problems,
) -> Vec<Language> {
    let mut languages: Vec<Language> = default.into_iter().collect();
    for (j, code) in raw.iter().enumerate() {
        if let Some(language) = problems.check(&format!("{key}[{j}]"), parse::language(code, locales))
            && !languages.contains(&language)
        {
            languages.push(language);
        }
    }
    languages
}

impl Config {
    /// The language of a page that no row and no list speaks for (an unknown or cut-off link
    /// with several lists configured): the request's `lang`, else its `Accept-Language`, looked
    /// up among the languages of every list, else the first list's `language` (English without
    /// a list).
    pub fn visitor_language(&self, lang_field: Option<&str>, accept_language: Option<&str>) -> Language {
        let mut served: Vec<Language> = Vec::new();
        for language in self.lists.iter().flat_map(|list| &list.languages) {
            if !served.contains(language) {
                served.push(*language);
            }
        }
        negotiate(&served, lang_field, accept_language)
            .unwrap_or_else(|| self.lists.first().map_or_else(Language::english, |list| list.language))
    }

    /// The language code a row of `list_id` reads in, as events and exports name it: the
    /// list's [`ListConfig::row_language`]; for a list no longer configured, the stored code,
    /// else English.
    pub fn row_language_code<'a>(&'a self, list_id: &str, stored: Option<&'a str>) -> &'a str {
        match self.list(list_id) {
            Some(list) => list.row_language(stored).code(),
            None => stored.unwrap_or_else(|| Language::english().code()),
        }
    }
}

impl ListConfig {
    /// Whether the list serves more than one language (its hosted form then links to each).
    pub fn is_multilingual(&self) -> bool {
        self.languages.len() > 1
    }

    /// `&lang=CODE` for a link to a page of the list that must speak `language` too (the mails'
    /// and pages' links to each other); empty for a list of one language.
    pub fn lang_query(&self, language: Language) -> String {
        if self.is_multilingual() { format!("&lang={}", language.code()) } else { String::new() }
    }

    /// The visitor's language: the form's `lang` field, else `Accept-Language`, each looked up
    /// among the list's languages, else the list's `language`.
    pub fn visitor_language(&self, lang_field: Option<&str>, accept_language: Option<&str>) -> Language {
        negotiate(&self.languages, lang_field, accept_language).unwrap_or(self.language)
    }

    /// The one of the list's languages a language tag (`fr`, `de-AT`, `pt_BR` is no tag) finds
    /// by RFC 4647 lookup, if any: a form's `lang` field, an imported record's `language`.
    pub fn served_language(&self, tag: &str) -> Option<Language> {
        self.lookup(&[tag.trim().to_owned()])
    }

    /// The language a stored row reads in (its `language` column; `None` or empty for a row
    /// from before there was one): that language while the list serves it, else the default.
    pub fn row_language(&self, stored: Option<&str>) -> Language {
        stored
            .and_then(|code| self.languages.iter().find(|language| language.code() == code))
            .copied()
            .unwrap_or(self.language)
    }

    fn lookup(&self, requested: &[String]) -> Option<Language> {
        lookup(&self.languages, requested)
    }
}

/// `lang_field`, else `Accept-Language`, each looked up among `served`; `None` when neither
/// finds one.
fn negotiate(served: &[Language], lang_field: Option<&str>, accept_language: Option<&str>) -> Option<Language> {
    let field = lang_field.filter(|value| !value.trim().is_empty());
    field.and_then(|value| lookup(served, &[value.trim().to_owned()])).or_else(|| {
        let ranges: Vec<String> = accept_language::parse(accept_language?).into_iter().take(MAX_RANGES).collect();
        lookup(served, &ranges)
    })
}

/// The best of `served` for `requested` (language tags, best first), by RFC 4647 lookup;
/// `None` when none matches.
fn lookup(served: &[Language], requested: &[String]) -> Option<Language> {
    let requested = convert_vec_str_to_langids_lossy(requested);
    if requested.is_empty() {
        return None;
    }
    let codes: Vec<&str> = served.iter().map(|language| language.code()).collect();
    let available = convert_vec_str_to_langids_lossy(&codes);
    // Every shipped code parses, so `available` and `served` stay in step; the position is
    // found by identity all the same.
    let best = *negotiate_languages(&requested, &available, None, NegotiationStrategy::Lookup).first()?;
    let index = available.iter().position(|candidate| std::ptr::eq(candidate, best))?;
    (available.len() == served.len()).then(|| served[index])
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn list(languages: &str) -> crate::config::ListConfig {
        let toml = format!("[[lists]]\nid = \"news\"\nlanguage = \"en\"\nlanguages = {languages}");
        Config::from_toml(&toml).expect("valid configuration").lists.remove(0)
    }

    fn code(list: &crate::config::ListConfig, field: Option<&str>, accept: Option<&str>) -> String {
        list.visitor_language(field, accept).code().to_owned()
    }

    #[test]
    fn the_form_field_comes_first_then_the_browser_then_the_default() {
        let list = list("[\"de\"]");
        assert_eq!(list.languages.iter().map(|l| l.code()).collect::<Vec<_>>(), ["en", "de"]);
        assert_eq!(code(&list, Some("de"), Some("en")), "de", "the page's language wins over the browser's");
        assert_eq!(code(&list, None, Some("fr;q=0.9, de;q=0.8, en;q=0.1")), "de", "the best one the list serves");
        assert_eq!(code(&list, Some(""), Some("de-AT,en;q=0.5")), "de", "an empty field is no field; de-AT finds de");
        assert_eq!(code(&list, Some("ja"), Some("de")), "de", "a field the list does not serve falls to the browser");
        assert_eq!(code(&list, Some("DE-ch"), None), "de", "a regional tag of any case finds its language");
        assert_eq!(code(&list, None, Some("fr, it")), "en", "none served: the default");
        assert_eq!(code(&list, None, Some("en;q=0.2, de;q=0.9")), "de", "ordered by q, not by position");
        assert_eq!(code(&list, None, Some(";;,=,*")), "en", "garbage: the default");
        assert_eq!(code(&list, None, None), "en");
    }

    #[test]
    fn a_single_language_list_always_speaks_its_language() {
        let list = list("[]");
        assert!(!list.is_multilingual());
        assert_eq!(code(&list, Some("de"), Some("de")), "en");
    }

    #[test]
    fn a_page_of_no_list_looks_among_the_languages_of_every_list_else_takes_the_firsts() {
        let toml = "[[lists]]\nid = \"news\"\nlanguages = [\"de\"]\n[[lists]]\nid = \"club\"\nlanguage = \"ar\"\n";
        let config = Config::from_toml(toml).expect("valid configuration");
        let code = |field: Option<&str>, accept: Option<&str>| config.visitor_language(field, accept).code();
        assert_eq!(code(None, Some("ar-EG, de;q=0.5")), "ar", "the second list's language");
        assert_eq!(code(None, Some("de-AT")), "de");
        assert_eq!(code(Some("ar"), Some("de")), "ar", "the link's lang first");
        assert_eq!(code(None, Some("ja")), "en", "none served: the first list's language");
        assert_eq!(code(None, None), "en");
    }

    #[test]
    fn a_row_reads_its_stored_language_while_the_list_serves_it() {
        let list = list("[\"de\", \"en\", \"de\"]");
        assert_eq!(list.languages.len(), 2, "each language once");
        assert_eq!(list.row_language(Some("de")).code(), "de");
        assert_eq!(list.row_language(Some("fr")).code(), "en", "no longer served: the default");
        assert_eq!(list.row_language(None).code(), "en", "a row from before the column");
    }
}
