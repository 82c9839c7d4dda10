//! `signupd snippet`: a ready signup form for the operator's own site, printed from the
//! configuration so that it always matches it — plain HTML without JavaScript, or the same form
//! in the syntax of a static site generator: a Hugo partial, a Jekyll include, an Astro
//! component, an Eleventy include (a Nunjucks macro). It reads the configuration and nothing
//! else: no database, no secret, nothing written.
//!
//! The form posts what the hosted form (`templates/pages/signup.html`) posts to
//! `{server.public_url}/api/signup`: `list` (hidden for one list; for several, a checkbox per
//! list labelled with its name and consent text, and `offered` for each, so an error page shows
//! the same choice), `email`, the lists' `[[lists.fields]]`, `consent=yes`, the honeypot
//! `website`, and with `--return-to` a hidden `return_to`. Labels and texts are those of the
//! first list's language, as on the hosted form; with `--lang CODE` (one of the first list's
//! `languages`), those of that language, and a hidden `lang=CODE`, so every page and mail of the
//! signup speaks it. Without `--lang`, a form for a list of several languages posts the page's
//! language where the generator knows it (Hugo's `site.Language.Lang`, Jekyll's `page.lang`),
//! and the server falls back to `Accept-Language` when it is empty.
//!
//! Decisions the contract leaves to the code:
//!
//! - **Escaping.** Every text from the configuration — names, consent texts, labels, options,
//!   URLs — is written as HTML with `&`, `<`, `>`, `"` and `'` escaped, and `{` and `}` as the
//!   character references `&#123;` and `&#125;`, in every output: no template language sees a
//!   delimiter in it (Go templates' `{{`, Liquid's `{{` and `{%`, Nunjucks' `{#`, an Astro
//!   expression's `{`, nor Vue's or Django's if the HTML is pasted there), and the browser shows
//!   the braces. The only template syntax in an output is what this module writes: the header
//!   comment, Eleventy's macro, and the hidden fields' parameters.
//! - **Hidden fields** take their value from the embedding page: a parameter of the partial
//!   (Hugo: the `dict` it is called with), of the include (Jekyll: `include.NAME`), of the
//!   component (Astro: `Astro.props.NAME`) or of the macro (Eleventy); plain HTML has an empty
//!   value and a comment asking to fill it in. A name the generator would read as something else
//!   (a literal such as `true`, which Nunjucks 3 refuses as a macro argument; `size`, which
//!   Liquid reads as the number of parameters; `constructor`, which every JavaScript object has)
//!   is refused for that generator, naming the field, rather than printing a form that sends the
//!   wrong value.
//! - **The honeypot** has no stylesheet of ours to hide it: its box is moved off-screen by an
//!   inline `style` (not `display: none` or `hidden`, which form-filling bots recognise and
//!   skip), `aria-hidden="true"` keeps it out of the accessibility tree, `tabindex="-1"` out of
//!   the tab order, and `autocomplete="off"` keeps the browser from filling it. If the site's
//!   Content-Security-Policy forbids inline styles, the field shows, labelled "Leave this field
//!   empty", which a person does.
//! - **Several lists:** each field name is shown once, as the first list that declares it
//!   describes it (label, kind, whether it is required) — the hosted form's rule; a list that
//!   declares the same name differently still checks the value by its own rule, so the command
//!   warns about it. No list's box is ticked in advance: consent is the visitor's act.
//! - **`--return-to`** must be a URL the server honours (`routes::signup`: an absolute http(s)
//!   URL whose origin is in the list's `allowed_origins`, checked against the first list named).
//!   The server checks it against the first list the visitor ticks, which can be any of the
//!   form's lists, so each of them must allow it; otherwise the command refuses it.
//! - Ids are `signupd-<lists>-…`, so they do not collide with the embedding page's own.

use std::fmt::Write as _;

use url::Url;

use crate::config::presentation::Messages;
use crate::config::{Config, ListConfig};
use crate::domain::{FieldKind, FieldSpec};

/// The syntax a form is printed in (`--for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Generator {
    /// Plain HTML.
    #[default]
    Html,
    /// A Hugo partial (Go html/template).
    Hugo,
    /// A Jekyll include (Liquid).
    Jekyll,
    /// An Astro component.
    Astro,
    /// An Eleventy include holding a Nunjucks macro.
    Eleventy,
}

impl Generator {
    /// The word `--for` takes.
    pub fn word(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Hugo => "hugo",
            Self::Jekyll => "jekyll",
            Self::Astro => "astro",
            Self::Eleventy => "eleventy",
        }
    }

    /// The generator's expression of the page's language, where it knows it: a multilingual
    /// list's form without `--lang` posts it as `lang` (an empty value counts as none).
    fn page_language(self) -> Option<&'static str> {
        match self {
            // Each language of a multilingual Hugo site is built as a site of its own.
            Self::Hugo => Some("{{ site.Language.Lang }}"),
            Self::Jekyll => Some("{{ page.lang | default: site.lang }}"),
            // A Nunjucks macro does not see the page; Astro knows it only with its i18n routing.
            Self::Html | Self::Astro | Self::Eleventy => None,
        }
    }

    /// The names a hidden field cannot have as this generator's parameter, and the language
    /// that reads them as something else.
    fn reserved(self) -> (&'static [&'static str], &'static str) {
        match self {
            Self::Html | Self::Hugo => (&[], ""),
            // Without the parameter, Liquid reads `include.size` as the number of parameters.
            Self::Jekyll => (&["size", "first", "last"], "Liquid"),
            // `Astro.props.constructor` is Object's constructor when the prop is not given.
            Self::Astro => (&["constructor"], "JavaScript"),
            // Nunjucks 3 refuses these as a macro's argument names (its literals, and `not`).
            Self::Eleventy => (&["false", "none", "not", "null", "true"], "Nunjucks"),
        }
    }
}

/// What to print.
#[derive(Debug, Clone)]
pub struct SnippetRequest {
    /// The lists' ids, as given (`--list`, repeated).
    pub lists: Vec<String>,
    pub generator: Generator,
    pub return_to: Option<String>,
    /// `--lang`: the page's language, one of the first list's.
    pub lang: Option<String>,
}

/// A request the command refuses; each names its option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnippetError {
    #[error("--list: no list with id {0:?} is configured")]
    UnknownList(String),
    #[error("--list: name the list the form is for")]
    NoList,
    #[error("--return-to: {0}")]
    ReturnTo(String),
    #[error("--lang: {tag:?} is not one of the languages of the list {list:?} ({served})")]
    Lang { tag: String, list: String, served: String },
    #[error(
        "--for {generator}: the hidden field {name:?} ({key}) cannot be a parameter in {language}, which reads that \
         name as something else; rename the field"
    )]
    ReservedName { generator: &'static str, name: String, key: String, language: &'static str },
}

/// The printed form, and what the operator should know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub text: String,
    /// Fields that several of the lists declare differently.
    pub warnings: Vec<String>,
}

/// The form for `request`, or why not.
pub fn render(config: &Config, request: &SnippetRequest) -> Result<Snippet, SnippetError> {
    let mut lists: Vec<&ListConfig> = Vec::with_capacity(request.lists.len());
    for id in &request.lists {
        let list = config.list(id).ok_or_else(|| SnippetError::UnknownList(id.clone()))?;
        // The server names each list once however often it is sent.
        if !lists.iter().any(|seen| seen.id == list.id) {
            lists.push(list);
        }
    }
    let Some(first) = lists.first() else {
        return Err(SnippetError::NoList);
    };
    let return_to = request.return_to.as_deref().map(|raw| checked_return_to(&lists, raw)).transpose()?;
    let (fields, warnings) = shown_fields(&lists);
    let generator = request.generator;
    let (reserved, language) = generator.reserved();
    if let Some((list, spec)) =
        fields.iter().find(|(_, spec)| is_hidden(spec) && reserved.contains(&spec.name.as_ref()))
    {
        return Err(SnippetError::ReservedName {
            generator: generator.word(),
            name: spec.name.to_string(),
            key: field_key(config, list, spec),
            language,
        });
    }
    let language = match &request.lang {
        None => first.language,
        Some(tag) => first.served_language(tag).ok_or_else(|| SnippetError::Lang {
            tag: tag.clone(),
            list: first.id.to_string(),
            served: first.languages.iter().map(|language| language.code()).collect::<Vec<_>>().join(", "),
        })?,
    };
    let lang_field = match &request.lang {
        Some(_) => Some(language.code().to_owned()),
        None if first.is_multilingual() => generator.page_language().map(str::to_owned),
        None => None,
    };
    let public = &config.server.public_url;
    let form = Form {
        generator,
        t: language.messages(),
        lang: language.code(),
        lang_field,
        action: format!("{}{}", public.origin().ascii_serialization(), crate::web::frame::href(config, "/api/signup")),
        key: lists.iter().map(|list| list.id.as_ref()).collect::<Vec<_>>().join("-"),
        fields: fields.into_iter().map(|(_, spec)| spec).collect(),
        lists,
        return_to,
    };
    Ok(Snippet { text: form.write(), warnings })
}

/// `raw`, if `POST /api/signup` honours it whichever of `lists` the visitor ticks first.
fn checked_return_to(lists: &[&ListConfig], raw: &str) -> Result<Url, SnippetError> {
    let url =
        Url::parse(raw).map_err(|error| SnippetError::ReturnTo(format!("{raw:?} is not an absolute URL ({error})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(SnippetError::ReturnTo(format!("{raw:?} is not an http or https URL")));
    }
    let origin = url.origin().ascii_serialization();
    for list in lists {
        let id = list.id.as_ref();
        if list.allowed_origins.is_empty() {
            return Err(SnippetError::ReturnTo(format!(
                "the list {id:?} has no allowed_origins, so the server never sends a visitor back: add {origin} to them"
            )));
        }
        if !list.allows_return_to(&url) {
            return Err(SnippetError::ReturnTo(format!(
                "{origin} is not in the allowed_origins of the list {id:?} ({}), so the server would ignore it",
                list.allowed_origins.join(", ")
            )));
        }
    }
    Ok(url)
}

/// Each field name once, as the first list that declares it describes it, with that list; and a
/// warning for each later list that declares the name differently.
fn shown_fields<'a>(lists: &[&'a ListConfig]) -> (Vec<(&'a ListConfig, &'a FieldSpec)>, Vec<String>) {
    let mut shown: Vec<(&ListConfig, &FieldSpec)> = Vec::new();
    let mut warnings = Vec::new();
    for &list in lists {
        for spec in &list.fields {
            match shown.iter().find(|(_, seen)| seen.name == spec.name) {
                None => shown.push((list, spec)),
                Some((owner, seen)) if seen.kind != spec.kind || seen.required != spec.required => {
                    warnings.push(format!(
                        "the lists {:?} and {:?} declare the field {:?} differently: the form shows it as {:?} \
                         does, and {:?} still checks its value by its own rule",
                        owner.id.as_ref(),
                        list.id.as_ref(),
                        spec.name.as_ref(),
                        owner.id.as_ref(),
                        list.id.as_ref()
                    ));
                }
                Some(_) => {}
            }
        }
    }
    (shown, warnings)
}

/// `lists[I].fields[J].name`, the key of a field in the configuration.
fn field_key(config: &Config, list: &ListConfig, spec: &FieldSpec) -> String {
    let i = config.lists.iter().position(|candidate| candidate.id == list.id).unwrap_or_default();
    let j = list.fields.iter().position(|candidate| candidate.name == spec.name).unwrap_or_default();
    format!("lists[{i}].fields[{j}].name")
}

fn is_hidden(spec: &FieldSpec) -> bool {
    matches!(spec.kind, FieldKind::Hidden { .. })
}

/// `text` as HTML text or a quoted attribute value that no template language reads (see the
/// module's documentation).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '{' => out.push_str("&#123;"),
            '}' => out.push_str("&#125;"),
            c => out.push(c),
        }
    }
    out
}

/// One form, ready to write.
struct Form<'a> {
    generator: Generator,
    t: &'static Messages,
    lang: &'static str,
    /// The value of the hidden `lang` field: `--lang`'s code, or for a list of several
    /// languages the generator's expression of the page's language; `None`: no field.
    lang_field: Option<String>,
    /// `POST /api/signup` under `server.public_url`.
    action: String,
    /// The lists' ids joined by `-`: the ids' prefix and the suggested file's name.
    key: String,
    lists: Vec<&'a ListConfig>,
    fields: Vec<&'a FieldSpec>,
    return_to: Option<Url>,
}

impl Form<'_> {
    fn write(&self) -> String {
        let mut out = self.header();
        if self.generator == Generator::Eleventy {
            let parameters: Vec<String> = self.hidden().map(|name| format!("{name}=\"\"")).collect();
            let _ = writeln!(out, "{{% macro signupd_form({}) %}}", parameters.join(", "));
        }
        self.form(&mut out);
        if self.generator == Generator::Eleventy {
            out.push_str("{% endmacro %}\n");
        }
        out
    }

    /// The names of the hidden fields, in order.
    fn hidden(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().filter(|spec| is_hidden(spec)).map(|spec| spec.name.as_ref())
    }

    fn id(&self, part: &str) -> String {
        format!("signupd-{}-{part}", self.key)
    }

    /// What the form is and how to use it, in the generator's own comment syntax. Only list ids,
    /// field names and fixed words go in: none can end a comment.
    fn header(&self) -> String {
        let ids: Vec<&str> = self.lists.iter().map(|list| list.id.as_ref()).collect();
        let of = match ids.as_slice() {
            [one] => format!("the list {one}"),
            [rest @ .., last] => format!("the lists {} and {last}", rest.join(", ")),
            [] => String::new(),
        };
        let mut options: String = ids.iter().map(|id| format!(" --list {id}")).collect();
        let _ = write!(options, " --for {}", self.generator.word());
        if self.return_to.is_some() {
            // The URL is in the form below; in here it could end a comment (`*/`, `#}`).
            options.push_str(" --return-to …");
        }
        let mut lines = vec![
            format!("The signup form of {of}, printed by `signupd snippet{options}` from signupd's configuration."),
            format!(
                "Print it again whenever the {}'s configuration changes.",
                if ids.len() == 1 { "list" } else { "lists" }
            ),
        ];
        let hidden: Vec<&str> = self.hidden().collect();
        let plural = hidden.len() > 1;
        let file = format!("signupd-{}", self.key);
        let component: String = std::iter::once("signupd")
            .chain(self.key.split('-'))
            .flat_map(|part| {
                let mut chars = part.chars();
                chars.next().map(|first| first.to_ascii_uppercase()).into_iter().chain(chars)
            })
            .collect();
        let arguments = |each: &dyn Fn(&str) -> String, separator: &str| {
            hidden.iter().map(|name| each(name)).collect::<Vec<_>>().join(separator)
        };
        match self.generator {
            Generator::Html if !hidden.is_empty() => {
                let fields = if plural { "fields" } else { "field" };
                lines.push(format!("Fill in the value of the hidden {fields} {} below.", hidden.join(", ")));
            }
            Generator::Html => {}
            Generator::Hugo => {
                let context = if hidden.is_empty() {
                    ".".to_owned()
                } else {
                    format!("(dict {})", arguments(&|name| format!("\"{name}\" \"VALUE\""), " "))
                };
                lines.push(format!(
                    "Save it as layouts/partials/{file}.html and use it as {{{{ partial \"{file}.html\" {context} }}}}."
                ));
            }
            Generator::Jekyll => {
                // No Liquid delimiters in here: Liquid parses the tags inside a comment.
                let parameters = arguments(&|name| format!(" {name}=\"VALUE\""), "");
                lines.push(format!(
                    "Save it as _includes/{file}.html and use it with Liquid's include tag: include {file}.html{parameters}"
                ));
            }
            Generator::Astro => {
                let props = arguments(&|name| format!(" {name}=\"VALUE\""), "");
                lines
                    .push(format!("Save it as src/components/{component}.astro and use it as <{component}{props} />."));
            }
            Generator::Eleventy => {
                let parameters = arguments(&|name| format!("{name}=\"VALUE\""), ", ");
                lines.push(format!(
                    "Save it as _includes/{file}.njk and use it as {{% from \"{file}.njk\" import signupd_form %}}\
                     {{{{ signupd_form({parameters}) }}}}."
                ));
            }
        }
        if self.generator != Generator::Html && !hidden.is_empty() {
            let each = if plural { "each hidden field's value" } else { "the hidden field's value" };
            lines.push(format!("VALUE: {each}, which your page sets."));
        }
        let (open, each, close) = match self.generator {
            Generator::Html => ("<!--\n", "  ", "-->\n"),
            Generator::Hugo => ("{{/*\n", "  ", "*/}}\n"),
            Generator::Jekyll => ("{% comment %}\n", "  ", "{% endcomment %}\n"),
            Generator::Astro => ("---\n", "// ", "---\n"),
            Generator::Eleventy => ("{#\n", "  ", "#}\n"),
        };
        let mut out = open.to_owned();
        for line in lines {
            let _ = writeln!(out, "{each}{line}");
        }
        out.push_str(close);
        out
    }

    /// The `value` attribute of the hidden field `name`: the embedding page's parameter.
    fn hidden_value(&self, name: &str) -> String {
        match self.generator {
            Generator::Html => "value=\"\"".to_owned(),
            Generator::Hugo => format!("value=\"{{{{ .{name} | default \"\" }}}}\""),
            Generator::Jekyll => format!("value=\"{{{{ include.{name} | escape }}}}\""),
            Generator::Astro => format!("value={{Astro.props.{name}}}"),
            Generator::Eleventy => format!("value=\"{{{{ {name} | escape }}}}\""),
        }
    }

    fn form(&self, out: &mut String) {
        let t = &self.t.signup;
        let _ = writeln!(out, "<form method=\"post\" action=\"{}\" lang=\"{}\">", escape(&self.action), self.lang);
        let single = match self.lists.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        if let Some(list) = single {
            let _ = writeln!(out, "  <input type=\"hidden\" name=\"list\" value=\"{}\">", list.id);
        } else {
            let _ = writeln!(out, "  <fieldset>\n    <legend>{}</legend>", escape(&t.lists_legend.to_string()));
            for list in &self.lists {
                let id = self.id(&format!("list-{}", list.id));
                let _ = writeln!(
                    out,
                    "    <div>\n      <input type=\"checkbox\" id=\"{id}\" name=\"list\" value=\"{}\">\n      \
                     <label for=\"{id}\" lang=\"{}\"><strong>{}</strong> <span>{}</span></label>\n      \
                     <input type=\"hidden\" name=\"offered\" value=\"{}\">\n    </div>",
                    list.id,
                    list.language.code(),
                    escape(&list.name),
                    escape(&list.consent_text),
                    list.id
                );
            }
            out.push_str("  </fieldset>\n");
        }
        if let Some(url) = &self.return_to {
            let _ = writeln!(out, "  <input type=\"hidden\" name=\"return_to\" value=\"{}\">", escape(url.as_str()));
        }
        if let Some(value) = &self.lang_field {
            // A code (`--lang`, checked) or this module's own expression: nothing to escape.
            let _ = writeln!(out, "  <input type=\"hidden\" name=\"lang\" value=\"{value}\">");
        }
        let email = self.id("email");
        let _ = writeln!(
            out,
            "  <div>\n    <label for=\"{email}\">{}</label>\n    \
             <input type=\"email\" id=\"{email}\" name=\"email\" autocomplete=\"email\" required maxlength=\"254\">\n  </div>",
            escape(&t.email_label.to_string())
        );
        for spec in &self.fields {
            self.field(out, spec);
        }
        let consent = self.id("consent");
        let consent_text = match single {
            Some(list) => escape(&list.consent_text),
            None => escape(&t.several_consent.to_string()),
        };
        let _ = writeln!(
            out,
            "  <div>\n    <input type=\"checkbox\" id=\"{consent}\" name=\"consent\" value=\"yes\" required>\n    \
             <label for=\"{consent}\">{consent_text}</label>\n  </div>"
        );
        let website = self.id("website");
        let _ = writeln!(
            out,
            "  <div style=\"position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden\" \
             aria-hidden=\"true\">\n    <label for=\"{website}\">{}</label>\n    \
             <input type=\"text\" id=\"{website}\" name=\"website\" value=\"\" tabindex=\"-1\" autocomplete=\"off\">\n  </div>",
            escape(&t.honeypot_label.to_string())
        );
        let _ = writeln!(out, "  <button type=\"submit\">{}</button>\n</form>", escape(&t.submit.to_string()));
    }

    /// One `[[lists.fields]]` control, as the hosted form draws it.
    fn field(&self, out: &mut String, spec: &FieldSpec) {
        let t = &self.t.signup;
        let name = spec.name.as_ref();
        let id = self.id(name);
        let required = if spec.required { " required" } else { "" };
        let label = if spec.required {
            escape(&spec.label)
        } else {
            format!("{} <span>({})</span>", escape(&spec.label), escape(&t.optional.to_string()))
        };
        match &spec.kind {
            FieldKind::Hidden { .. } => {
                if self.generator == Generator::Html {
                    let _ = writeln!(out, "  <!-- {name}: fill in this hidden field's value -->");
                }
                let _ = writeln!(out, "  <input type=\"hidden\" name=\"{name}\" {}>", self.hidden_value(name));
            }
            FieldKind::Text { max_length } => {
                let _ = writeln!(
                    out,
                    "  <div>\n    <label for=\"{id}\">{label}</label>\n    \
                     <input type=\"text\" id=\"{id}\" name=\"{name}\" maxlength=\"{max_length}\"{required}>\n  </div>"
                );
            }
            FieldKind::Select { options } => {
                let _ = writeln!(
                    out,
                    "  <div>\n    <label for=\"{id}\">{label}</label>\n    <select id=\"{id}\" name=\"{name}\"{required}>\n      \
                     <option value=\"\">{}</option>",
                    escape(&t.choose_option.to_string())
                );
                for option in options {
                    let option = escape(option);
                    let _ = writeln!(out, "      <option value=\"{option}\">{option}</option>");
                }
                out.push_str("    </select>\n  </div>\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signupd.toml");
        std::fs::write(&path, format!("[server]\npublic_url = \"https://signup.bakery.test/join/\"\n{toml}")).unwrap();
        Config::load(Some(&path)).unwrap()
    }

    fn request(lists: &[&str], generator: Generator) -> SnippetRequest {
        SnippetRequest {
            lists: lists.iter().map(|id| (*id).to_owned()).collect(),
            generator,
            return_to: None,
            lang: None,
        }
    }

    const GENERATORS: [Generator; 5] =
        [Generator::Html, Generator::Hugo, Generator::Jekyll, Generator::Astro, Generator::Eleventy];

    #[test]
    fn lang_writes_the_words_and_the_lang_field_in_that_language() {
        let two = config("[[lists]]\nid = \"news\"\nlanguages = [\"de\"]\n");
        let german =
            render(&two, &SnippetRequest { lang: Some("de-AT".into()), ..request(&["news"], Generator::Hugo) })
                .unwrap()
                .text;
        assert!(german.contains("<input type=\"hidden\" name=\"lang\" value=\"de\">"), "{german}");
        assert!(german.contains("lang=\"de\">") && german.contains("E-Mail-Adresse"), "German words: {german}");
        let english = render(&two, &SnippetRequest { lang: Some("en".into()), ..request(&["news"], Generator::Html) })
            .unwrap()
            .text;
        assert!(english.contains("name=\"lang\" value=\"en\"") && !english.contains("E-Mail-Adresse"), "{english}");

        // Without `--lang`, the page's language where the generator knows it.
        let hugo = render(&two, &request(&["news"], Generator::Hugo)).unwrap().text;
        assert!(hugo.contains("name=\"lang\" value=\"{{ site.Language.Lang }}\""), "{hugo}");
        let html = render(&two, &request(&["news"], Generator::Html)).unwrap().text;
        assert!(!html.contains("name=\"lang\""), "plain HTML does not know its page's language: {html}");

        let refused = render(&two, &SnippetRequest { lang: Some("ja".into()), ..request(&["news"], Generator::Html) });
        assert_eq!(
            refused.unwrap_err().to_string(),
            "--lang: \"ja\" is not one of the languages of the list \"news\" (en, de)"
        );
        let single = config("[[lists]]\nid = \"news\"\n");
        assert!(!render(&single, &request(&["news"], Generator::Hugo)).unwrap().text.contains("name=\"lang\""));
    }

    const HOSTILE: &str = r#"<b>"{{ x }}" {% y %} {z}</b> & {#c#} ${d}"#;

    #[test]
    fn escaping_leaves_no_markup_and_no_template_delimiter() {
        let escaped = escape(HOSTILE);
        assert_eq!(
            escaped,
            "&lt;b&gt;&quot;&#123;&#123; x &#125;&#125;&quot; &#123;% y %&#125; &#123;z&#125;&lt;/b&gt; &amp; \
             &#123;#c#&#125; $&#123;d&#125;"
        );
        for forbidden in ['<', '>', '"', '\'', '{', '}'] {
            assert!(!escaped.contains(forbidden), "{forbidden} in {escaped}");
        }
    }

    #[test]
    fn operator_text_never_reaches_a_generator_as_template_syntax() {
        let config = config(&format!(
            "[[lists]]\nid = \"news\"\nname = {HOSTILE:?}\nconsent_text = {HOSTILE:?}\n\
             [[lists.fields]]\nname = \"topic\"\nlabel = {HOSTILE:?}\nkind = \"select\"\noptions = [{HOSTILE:?}]\n\
             [[lists]]\nid = \"offers\"\nconsent_text = \"Offers.\""
        ));
        for generator in GENERATORS {
            for lists in [&["news"][..], &["news", "offers"]] {
                let text = render(&config, &request(lists, generator)).unwrap().text;
                assert!(!text.contains("{{ x"), "{generator:?} {lists:?}: {text}");
                assert!(!text.contains("{% y"), "{generator:?} {lists:?}: {text}");
                assert!(!text.contains("{z}"), "{generator:?} {lists:?}: {text}");
                assert!(!text.contains("<b>"), "{generator:?} {lists:?}: {text}");
                assert!(text.contains(&escape(HOSTILE)), "{generator:?} {lists:?}: {text}");
            }
        }
    }

    #[test]
    fn the_action_is_the_signup_endpoint_under_the_public_url() {
        let config = config("[[lists]]\nid = \"news\"");
        let text = render(&config, &request(&["news"], Generator::Html)).unwrap().text;
        assert!(text.contains("action=\"https://signup.bakery.test/join/api/signup\""), "{text}");
    }

    #[test]
    fn each_generator_gives_a_hidden_field_its_parameter() {
        let config = config(
            "[[lists]]\nid = \"news\"\n[[lists.fields]]\nname = \"campaign\"\nlabel = \"Campaign\"\nkind = \"hidden\"",
        );
        let cases = [
            (Generator::Html, "value=\"\">"),
            (Generator::Hugo, "value=\"{{ .campaign | default \"\" }}\">"),
            (Generator::Jekyll, "value=\"{{ include.campaign | escape }}\">"),
            (Generator::Astro, "value={Astro.props.campaign}>"),
            (Generator::Eleventy, "value=\"{{ campaign | escape }}\">"),
        ];
        for (generator, value) in cases {
            let text = render(&config, &request(&["news"], generator)).unwrap().text;
            assert!(
                text.contains(&format!("<input type=\"hidden\" name=\"campaign\" {value}")),
                "{generator:?}: {text}"
            );
        }
        let eleventy = render(&config, &request(&["news"], Generator::Eleventy)).unwrap().text;
        assert!(eleventy.contains("{% macro signupd_form(campaign=\"\") %}\n<form"), "{eleventy}");
        assert!(eleventy.ends_with("</form>\n{% endmacro %}\n"), "{eleventy}");
    }

    #[test]
    fn a_hidden_field_name_the_generator_reads_otherwise_is_refused_for_that_generator_only() {
        let config = config(
            "[[lists]]\nid = \"news\"\n[[lists.fields]]\nname = \"size\"\nlabel = \"Size\"\nkind = \"hidden\"\n\
             [[lists.fields]]\nname = \"not\"\nlabel = \"Not\"\nkind = \"hidden\"",
        );
        let error = render(&config, &request(&["news"], Generator::Jekyll)).unwrap_err();
        assert!(error.to_string().starts_with("--for jekyll: the hidden field \"size\" (lists[0].fields[0].name)"));
        let error = render(&config, &request(&["news"], Generator::Eleventy)).unwrap_err();
        assert!(error.to_string().contains("\"not\" (lists[0].fields[1].name)"), "{error}");
        for generator in [Generator::Html, Generator::Hugo, Generator::Astro] {
            assert!(render(&config, &request(&["news"], generator)).is_ok(), "{generator:?}");
        }
    }

    #[test]
    fn several_lists_show_a_field_once_as_the_first_declares_it_and_warn_when_they_differ() {
        let config = config(
            "[[lists]]\nid = \"news\"\n[[lists.fields]]\nname = \"topic\"\nlabel = \"News topic\"\nkind = \"select\"\n\
             options = [\"rust\"]\n\
             [[lists]]\nid = \"offers\"\n[[lists.fields]]\nname = \"topic\"\nlabel = \"Offer topic\"\nrequired = true\n\
             [[lists.fields]]\nname = \"city\"\nlabel = \"City\"",
        );
        let snippet = render(&config, &request(&["news", "offers", "news"], Generator::Html)).unwrap();
        assert_eq!(snippet.text.matches("name=\"topic\"").count(), 1, "{}", snippet.text);
        assert!(snippet.text.contains("News topic") && !snippet.text.contains("Offer topic"), "{}", snippet.text);
        assert!(snippet.text.contains("name=\"city\""), "{}", snippet.text);
        assert_eq!(snippet.text.matches("name=\"list\"").count(), 2, "each list once: {}", snippet.text);
        assert_eq!(snippet.warnings.len(), 1, "{:?}", snippet.warnings);
        assert!(snippet.warnings[0].contains("\"news\" and \"offers\" declare the field \"topic\" differently"));
    }

    #[test]
    fn return_to_must_be_one_the_server_honours_for_every_list() {
        let config = config(
            "[[lists]]\nid = \"news\"\nallowed_origins = [\"https://www.example.com\"]\n\
             [[lists]]\nid = \"offers\"\nallowed_origins = [\"https://shop.example.com\"]\n\
             [[lists]]\nid = \"open\"",
        );
        let with = |lists: &[&str], url: &str| {
            let request = SnippetRequest { return_to: Some(url.to_owned()), ..request(lists, Generator::Html) };
            render(&config, &request).map(|snippet| snippet.text)
        };
        let text = with(&["news"], "https://www.example.com/thanks?from={x}").unwrap();
        assert!(
            text.contains("name=\"return_to\" value=\"https://www.example.com/thanks?from=&#123;x&#125;\""),
            "{text}"
        );
        for (lists, url, why) in [
            (&["news"][..], "/thanks", "is not an absolute URL"),
            (&["news"], "//www.example.com/thanks", "is not an absolute URL"),
            (&["news"], "javascript:alert(1)", "is not an http or https URL"),
            (&["news"], "https://evil.example.net/", "https://evil.example.net is not in the allowed_origins"),
            (&["news"], "http://www.example.com/", "http://www.example.com is not in the allowed_origins"),
            (&["news", "offers"], "https://www.example.com/", "of the list \"offers\""),
            (&["open"], "https://www.example.com/", "the list \"open\" has no allowed_origins"),
        ] {
            let error = with(lists, url).unwrap_err().to_string();
            assert!(error.starts_with("--return-to: "), "{url}: {error}");
            assert!(error.contains(why), "{url}: {error}");
        }
    }

    #[test]
    fn an_unknown_list_is_named() {
        let config = config("[[lists]]\nid = \"news\"");
        let error = render(&config, &request(&["news", "nope"], Generator::Html)).unwrap_err();
        assert_eq!(error.to_string(), "--list: no list with id \"nope\" is configured");
        assert_eq!(render(&config, &request(&[], Generator::Html)).unwrap_err(), SnippetError::NoList);
    }
}
