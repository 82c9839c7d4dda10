//! The frame around every page — the operator's brand (site name, the way back to the site, the
//! accent colour), the privacy link, where every URL starts — and the stylesheets that carry the
//! brand. Built from the configuration and [`crate::config::presentation`]'s language and colours.
//!
//! Everything visual is a stylesheet from this origin, so the pages' strict CSP (`style-src
//! 'self'`, no inline styles) stays as it is: `/static/style.css` (built in), then
//! `/static/list.css?list=ID` (the accent colour, generated at start), then `/static/custom.css`
//! (the operator's file, read at start). A stylesheet cannot change a response header, and the
//! CSP stops anything it might try to load from elsewhere.
//!
//! Decisions: a list without `site_name` shows only its own name; pages that belong to no list
//! (an incomplete link, a page that does not exist) take the only list's brand, or, with several
//! lists, no brand; their language is the request's among the lists' languages where the route
//! has the request (`crate::web::routes::error_pages::visitor_chrome`), else the first list's.
//!
//! Every URL signupd emits — a page's links and form actions, its stylesheets, every `Location`
//! — starts with the path of `server.public_url` ([`href`], [`Chrome::base`]), so signupd can be
//! mounted under a prefix (`https://example.com/join`) by a proxy that strips the prefix before
//! passing the request on: signupd's own routes stay at `/`.

use std::collections::HashMap;

use actix_web::web::Bytes;

use crate::config::presentation::color::AA;
use crate::config::presentation::{DARK_BACKGROUND, LIGHT_BACKGROUND, Language, Messages, Rgb};
use crate::config::{Config, ListConfig};

/// What every page shows around its content: its language, its stylesheets, the site's name and
/// the way back to it, and the privacy link.
#[derive(Debug, Clone)]
pub struct Chrome<'a> {
    pub t: &'static Messages,
    pub lang: &'static str,
    pub site_name: Option<&'a str>,
    pub site_url: Option<&'a str>,
    /// "Back to …": the site's name, or the list's when the site has none.
    pub back_to: Option<String>,
    pub theme_href: Option<String>,
    pub custom_css: bool,
    pub privacy_href: Option<String>,
    /// What every URL of the page starts with ([`base_path`]): empty, or a path such as `/join`.
    pub base: &'a str,
}

impl<'a> Chrome<'a> {
    /// The frame of a page of `list`, in its default language.
    pub fn for_list(config: &'a Config, list: &'a ListConfig) -> Self {
        Self::for_list_in(config, list, list.language)
    }

    /// The frame of a page of `list` in `language` (one of the list's): its privacy link keeps
    /// the language.
    pub fn for_list_in(config: &'a Config, list: &'a ListConfig, language: Language) -> Self {
        let t = language.messages();
        Self {
            t,
            lang: language.code(),
            site_name: list.site_name.as_deref(),
            site_url: list.site_url.as_ref().map(url::Url::as_str),
            back_to: list.site_url.as_ref().map(|_| t.page.back_to.with(list.site())),
            theme_href: list.accent.map(|_| href(config, &format!("/static/list.css?list={}", list.id))),
            custom_css: config.server.custom_css_file.is_some(),
            privacy_href: Some(href(config, &format!("/privacy?list={}{}", list.id, list.lang_query(language)))),
            base: base_path(config),
        }
    }

    /// The frame of a page that belongs to no list in particular.
    pub fn general(config: &'a Config) -> Self {
        let language = config.lists.first().map_or_else(Language::english, |list| list.language);
        Self::general_in(config, language)
    }

    /// The frame of a page that belongs to no list in particular, in `language` (one of the
    /// lists'): the only list's, else no brand.
    pub fn general_in(config: &'a Config, language: Language) -> Self {
        if let Some(only) = config.default_list() {
            return Self::for_list_in(config, only, language);
        }
        Self {
            t: language.messages(),
            lang: language.code(),
            site_name: None,
            site_url: None,
            back_to: None,
            theme_href: None,
            custom_css: config.server.custom_css_file.is_some(),
            privacy_href: None,
            base: base_path(config),
        }
    }

    /// `list`'s frame if there is one, else [`Self::general`].
    pub fn for_optional(config: &'a Config, list: Option<&'a ListConfig>) -> Self {
        list.map_or_else(|| Self::general(config), |list| Self::for_list(config, list))
    }
}

/// The path of `server.public_url` without its trailing slash: empty when signupd is served at
/// the root (`https://signup.example.com`), `/join` for `https://example.com/join`.
pub fn base_path(config: &Config) -> &str {
    config.server.public_url.path().trim_end_matches('/')
}

/// `path`, one of signupd's own root-absolute paths (`/api/confirm`, `/removed?list=news`), as
/// the URL a visitor's browser must use: under `server.public_url`'s path.
pub fn href(config: &Config, path: &str) -> String {
    debug_assert!(path.starts_with('/'), "a root-absolute path: {path}");
    format!("{}{path}", base_path(config))
}

/// The stylesheets made or read at start: one per list with an accent colour, and the
/// operator's own.
#[derive(Debug, Default)]
pub struct Stylesheets {
    // `Bytes`: every answer shares the one copy made at start.
    lists: HashMap<String, Bytes>,
    custom: Option<Bytes>,
}

/// A custom stylesheet larger than this is a mistake (an image inlined by a build tool?).
const CUSTOM_CSS_LIMIT: u64 = 256 * 1024;

impl Stylesheets {
    /// Generates the lists' stylesheets and reads `server.custom_css_file`; an unreadable file
    /// is an error naming the key.
    pub fn load(config: &Config) -> anyhow::Result<Self> {
        let lists = config
            .lists
            .iter()
            .filter_map(|list| Some((list.id.as_ref().to_owned(), accent_css(list.id.as_ref(), list.accent?).into())))
            .collect();
        let custom = match &config.server.custom_css_file {
            None => None,
            Some(path) => Some(
                read_custom(path)
                    .map_err(|problem| {
                        anyhow::anyhow!("invalid configuration: server.custom_css_file: {} {problem}", path.display())
                    })?
                    .into(),
            ),
        };
        Ok(Self { lists, custom })
    }

    /// The accent stylesheet of list `id`, if it has an accent colour.
    pub fn list(&self, id: &str) -> Option<Bytes> {
        self.lists.get(id).cloned()
    }

    pub fn custom(&self) -> Option<Bytes> {
        self.custom.clone()
    }
}

fn read_custom(path: &std::path::Path) -> Result<String, String> {
    let metadata = std::fs::metadata(path).map_err(|error| format!("cannot be read ({error})"))?;
    if !metadata.is_file() {
        return Err("is not a file".into());
    }
    if metadata.len() > CUSTOM_CSS_LIMIT {
        return Err(format!("is larger than {} KiB", CUSTOM_CSS_LIMIT / 1024));
    }
    let bytes = std::fs::read(path).map_err(|error| format!("cannot be read ({error})"))?;
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())
}

/// The accent's rules for both themes. The button keeps the exact colour with black or white
/// text; links, the focus ring and ticked checkboxes get the nearest shade that reads on the
/// theme's background (4.5:1, above the 3:1 a control needs).
fn accent_css(id: &str, accent: Rgb) -> String {
    let rules = |background: Rgb| {
        let shade = accent.readable_on(background, AA);
        format!(
            "button {{ background: {accent}; color: {text}; }}\n\
             a, a:visited {{ color: {shade}; }}\n\
             :focus-visible {{ outline-color: {shade}; }}\n\
             .checkbox input {{ accent-color: {shade}; }}\n",
            text = accent.text_on(),
        )
    };
    format!(
        "/* signupd: accent colour {accent} of list {id} */\n{}@media (prefers-color-scheme: dark) {{\n{}}}\n",
        rules(LIGHT_BACKGROUND),
        rules(DARK_BACKGROUND)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_under_the_public_url_path_without_a_doubled_slash() {
        let cases = [
            ("http://127.0.0.1:8080", "/api/confirm"),
            ("https://signup.bakery.test/", "/api/confirm"),
            ("https://bakery.test/join", "/join/api/confirm"),
            ("https://bakery.test/join/", "/join/api/confirm"),
            ("https://bakery.test/a/b", "/a/b/api/confirm"),
        ];
        for (public_url, expected) in cases {
            let config =
                Config::from_toml(&format!("[server]\npublic_url = {public_url:?}\n[[lists]]\nid = \"news\"\n"))
                    .unwrap();
            assert_eq!(href(&config, "/api/confirm"), expected, "{public_url}");
            assert_eq!(href(&config, "/"), format!("{}/", expected.trim_end_matches("/api/confirm")), "{public_url}");
        }
    }

    #[test]
    fn a_light_accent_gets_dark_text_and_a_darker_link_shade_on_white() {
        let css = accent_css("news", Rgb(0xff, 0xd4, 0x00));
        assert!(css.contains("button { background: #ffd400; color: #000000; }"), "{css}");
        let light_link = css.lines().find(|line| line.starts_with("a, a:visited")).unwrap();
        assert!(!light_link.contains("#ffd400"), "yellow links on white would be unreadable: {light_link}");
        // In the dark theme the yellow itself reads well.
        assert!(css.split("@media").nth(1).unwrap().contains("a, a:visited { color: #ffd400; }"), "{css}");
        // Ticked checkboxes take the link's shade in each theme.
        let light_box = css.lines().find(|line| line.starts_with(".checkbox input")).unwrap();
        let light_shade = light_link.split("color: ").nth(1).unwrap().trim_end_matches(" }").trim_end_matches(';');
        assert_eq!(light_box, format!(".checkbox input {{ accent-color: {light_shade}; }}"));
        assert!(css.split("@media").nth(1).unwrap().contains(".checkbox input { accent-color: #ffd400; }"), "{css}");
    }
}
