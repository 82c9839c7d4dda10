//! `signupd snippet` (docs/operations.md "A form from the configuration"): the
//! real binary prints each generator's form; the test turns the generator's syntax into the HTML
//! its engine would render ([`rendered`], one small transformation per generator), reads the
//! form's controls as a browser would (html5gum, a WHATWG tokenizer: character references
//! decoded), fills them in as a person would — the address, a text, the first option that is
//! not empty, the consent box ticked, the honeypot left empty — and posts them form-encoded to
//! the form's action on a real `signupd serve`: the success answer, and a pending row in the
//! database file (read-only). And what the command refuses: each with its exit code, a message
//! that names the option, and nothing written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use html5gum::{Token, Tokenizer};

use crate::helpers::{after_config_line, files_under, guide_example, signupd, write_config};
use crate::process::{Served, client, config, read_only, serve};

const GENERATORS: [&str; 5] = ["html", "hugo", "jekyll", "astro", "eleventy"];

/// Markup and every generator's template syntax, which must come out as the text it is.
const HOSTILE: &str = r#"<b>"{{ x }}" {% y %} {z}</b>"#;

/// The site the forms are embedded on: in the lists' `allowed_origins`.
const SITE: &str = "https://www.shop.test";

/// `news` with a field of every kind (and operator text full of markup and template syntax),
/// `offers` with a field of the same name declared differently and one of its own, and
/// `closed`, which names no `allowed_origins`.
fn lists() -> String {
    format!(
        "[[lists]]\nid = \"news\"\nname = \"News <& more>\"\nconsent_text = {HOSTILE:?}\nallowed_origins = [{SITE:?}]\n\
         [[lists.fields]]\nname = \"first_name\"\nlabel = \"First name {{{{ n }}}}\"\nrequired = true\nmax_length = 40\n\
         [[lists.fields]]\nname = \"topic\"\nlabel = \"Topic\"\nkind = \"select\"\noptions = [\"rust\", \"{{{{ go }}}} & <c>\"]\n\
         [[lists.fields]]\nname = \"campaign\"\nlabel = \"Campaign\"\nkind = \"hidden\"\n\
         [[lists]]\nid = \"offers\"\nname = \"Offers {{% raw %}}\"\nconsent_text = \"Email me the offers.\"\n\
         allowed_origins = [{SITE:?}]\n\
         [[lists.fields]]\nname = \"topic\"\nlabel = \"Offer topic\"\n\
         [[lists.fields]]\nname = \"city\"\nlabel = \"City\"\n\
         [[lists]]\nid = \"closed\"\nconsent_text = \"Email me.\"\n"
    )
}

/// `signupd snippet ARGS` on `config`, the form's action on `public_url`.
fn snippet(config: &Path, public_url: &str, args: &[&str]) -> Output {
    signupd()
        .arg("snippet")
        .args(args)
        .arg("--config")
        .arg(config)
        .env("SIGNUPD_SERVER__PUBLIC_URL", public_url)
        .output()
        .unwrap()
}

/// The printed form, which must have been printed (exit 0).
fn printed(config: &Path, public_url: &str, args: &[&str]) -> (String, String) {
    let output = snippet(config, public_url, args);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    (String::from_utf8(output.stdout).unwrap(), after_config_line(&stderr).to_owned())
}

/// HTML-escaped as Hugo's autoescaping and Liquid's and Nunjucks' `escape` filters escape it.
fn html_escaped(value: &str) -> String {
    value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// `text` without the first `open … close` and what is between.
fn without(text: &str, open: &str, close: &str) -> String {
    let start = text.find(open).unwrap_or_else(|| panic!("no {open} in {text}"));
    let end = text[start..].find(close).unwrap_or_else(|| panic!("no {close} in {text}")) + start + close.len();
    format!("{}{}", &text[..start], text[end..].trim_start_matches('\n'))
}

/// The HTML that `generator`'s engine renders from `template`, each of the `hidden` parameters
/// set to `value`: its comment left out (Go's `{{/* */}}`, Liquid's `{% comment %}`, Astro's
/// frontmatter, Nunjucks' `{# #}`; an HTML comment stays, the browser skips it), the macro's
/// lines around an Eleventy form left out (what calling the macro outputs), and each
/// parameter's expression replaced by the value as the engine escapes it; in plain HTML the
/// operator fills in `value=""`. What would still be template syntax for the engine fails the
/// test: no `{` or `}` may be left.
fn rendered(generator: &str, template: &str, hidden: &[&str], value: &str) -> String {
    let mut html = match generator {
        "html" => template.to_owned(),
        "hugo" => without(template, "{{/*", "*/}}"),
        "jekyll" => without(template, "{% comment %}", "{% endcomment %}"),
        "astro" => {
            let rest = template.strip_prefix("---\n").unwrap_or_else(|| panic!("a frontmatter: {template}"));
            rest.split_once("\n---\n").unwrap_or_else(|| panic!("a closed frontmatter: {template}")).1.to_owned()
        }
        "eleventy" => {
            let body = without(template, "{#", "#}");
            let (macro_line, body) = body.split_once('\n').unwrap();
            assert!(macro_line.starts_with("{% macro signupd_form(") && macro_line.ends_with(") %}"), "{template}");
            body.strip_suffix("{% endmacro %}\n").unwrap_or_else(|| panic!("the macro's end: {template}")).to_owned()
        }
        other => panic!("no generator {other}"),
    };
    let escaped = html_escaped(value);
    for name in hidden {
        let (expression, replacement) = match generator {
            "html" => (format!("name=\"{name}\" value=\"\""), format!("name=\"{name}\" value=\"{escaped}\"")),
            "hugo" => (format!("{{{{ .{name} | default \"\" }}}}"), escaped.clone()),
            "jekyll" => (format!("{{{{ include.{name} | escape }}}}"), escaped.clone()),
            "astro" => (format!("value={{Astro.props.{name}}}"), format!("value=\"{escaped}\"")),
            _ => (format!("{{{{ {name} | escape }}}}"), escaped.clone()),
        };
        assert_eq!(html.matches(&expression).count(), 1, "{generator}: {expression} once in {template}");
        html = html.replace(&expression, &replacement);
    }
    assert!(!html.contains(['{', '}']), "{generator}: template syntax left for the engine:\n{html}");
    html
}

/// A form control, as a browser sees it.
#[derive(Debug, Clone, Default)]
struct Control {
    tag: String,
    attributes: BTreeMap<String, String>,
    /// A select's options: (value, text).
    options: Vec<(String, String)>,
    /// Whether an ancestor has `aria-hidden="true"`.
    aria_hidden: bool,
    /// The `style` attributes of its ancestors.
    styles: Vec<String>,
}

impl Control {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }
}

/// The one form of an HTML text: its attributes, its controls in document order, its labels
/// (`for` → text, whitespace collapsed) and its legend.
#[derive(Debug, Default)]
struct Form {
    attributes: BTreeMap<String, String>,
    controls: Vec<Control>,
    labels: BTreeMap<String, String>,
    legend: Option<String>,
    /// `<script>` elements and `on…` attributes seen.
    scripts: Vec<String>,
}

impl Form {
    fn find(&self, name: &str) -> Option<&Control> {
        self.controls.iter().find(|control| control.attr("name") == Some(name))
    }

    fn control(&self, name: &str) -> &Control {
        self.find(name).unwrap_or_else(|| panic!("no control named {name}"))
    }

    fn label_of(&self, control: &Control) -> &str {
        let id = control.attr("id").unwrap_or_else(|| panic!("no id on {control:?}"));
        self.labels.get(id).unwrap_or_else(|| panic!("no label for {id}: {:?}", self.labels))
    }
}

const VOID: &[&str] = &["input", "br", "img", "hr", "meta", "link"];

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads `html` as a browser's tokenizer does.
fn parse(html: &str) -> Form {
    let mut form = Form::default();
    let mut forms = 0;
    // Open elements: (tag, attributes).
    let mut open: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    let mut label: Option<(String, String)> = None;
    let mut legend: Option<String> = None;
    let mut option: Option<(Option<String>, String)> = None;
    for token in Tokenizer::new(html) {
        match token.unwrap() {
            Token::StartTag(tag) => {
                let name = text(&tag.name);
                let attributes: BTreeMap<String, String> =
                    tag.attributes.iter().map(|(key, value)| (text(key), text(&value.value))).collect();
                if name == "script" || attributes.keys().any(|key| key.starts_with("on")) {
                    form.scripts.push(name.clone());
                }
                match name.as_str() {
                    "form" => {
                        forms += 1;
                        form.attributes = attributes.clone();
                    }
                    "input" | "select" | "button" | "textarea" => form.controls.push(Control {
                        tag: name.clone(),
                        attributes: attributes.clone(),
                        options: Vec::new(),
                        aria_hidden: open.iter().any(|(_, a)| a.get("aria-hidden").is_some_and(|v| v == "true")),
                        styles: open.iter().filter_map(|(_, a)| a.get("style").cloned()).collect(),
                    }),
                    "label" => label = Some((attributes.get("for").cloned().unwrap_or_default(), String::new())),
                    "legend" => legend = Some(String::new()),
                    "option" => option = Some((attributes.get("value").cloned(), String::new())),
                    _ => {}
                }
                if !VOID.contains(&name.as_str()) && !tag.self_closing {
                    open.push((name, attributes));
                }
            }
            Token::String(string) => {
                let string = text(&string.value);
                for buffer in [label.as_mut().map(|(_, t)| t), legend.as_mut(), option.as_mut().map(|(_, t)| t)]
                    .into_iter()
                    .flatten()
                {
                    buffer.push_str(&string);
                }
            }
            Token::EndTag(tag) => {
                let name = text(&tag.name);
                match name.as_str() {
                    "label" => {
                        let (target, label_text) = label.take().expect("a label is open");
                        form.labels.insert(target, collapsed(&label_text));
                    }
                    "legend" => form.legend = legend.take().map(|t| collapsed(&t)),
                    "option" => {
                        let (value, option_text) = option.take().expect("an option is open");
                        let select = form.controls.last_mut().filter(|c| c.tag == "select").expect("in a select");
                        // Without a value attribute, the text is the value (stripped and collapsed).
                        select.options.push((value.unwrap_or_else(|| collapsed(&option_text)), option_text));
                    }
                    _ => {}
                }
                let at = open.iter().rposition(|(open_name, _)| *open_name == name).expect("closes an open element");
                open.truncate(at);
            }
            Token::Error(error) => panic!("the HTML does not parse cleanly: {error:?}\n{html}"),
            Token::Comment(_) | Token::Doctype(_) => {}
        }
    }
    assert_eq!(forms, 1, "one form: {html}");
    assert!(open.is_empty(), "every element closed: {open:?}");
    form
}

/// What the form has to be, for any list: a POST without JavaScript, every control labelled,
/// the address autocompleted, the honeypot out of sight, reach and the accessibility tree.
fn assert_accessible(form: &Form, what: &str) {
    assert_eq!(form.attributes.get("method").map(String::as_str), Some("post"), "{what}");
    assert!(form.scripts.is_empty(), "{what}: no JavaScript: {:?}", form.scripts);
    for control in &form.controls {
        let shown = !matches!((control.tag.as_str(), control.attr("type")), ("input", Some("hidden")) | ("button", _));
        if shown {
            assert!(!form.label_of(control).is_empty(), "{what}: {control:?} is labelled");
        }
    }
    let email = form.control("email");
    assert_eq!((email.attr("type"), email.attr("autocomplete")), (Some("email"), Some("email")), "{what}");
    assert!(email.attributes.contains_key("required"), "{what}");
    let consent = form.control("consent");
    assert_eq!((consent.attr("type"), consent.attr("value")), (Some("checkbox"), Some("yes")), "{what}");
    let honeypot = form.control("website");
    assert_eq!(honeypot.attr("value"), Some(""), "{what}");
    assert_eq!(honeypot.attr("tabindex"), Some("-1"), "{what}: out of the tab order");
    assert_eq!(honeypot.attr("autocomplete"), Some("off"), "{what}: never autofilled");
    assert!(honeypot.aria_hidden, "{what}: out of the accessibility tree");
    assert!(
        honeypot.styles.iter().any(|style| style.contains("position:absolute") && style.contains("left:-10000px")),
        "{what}: off-screen: {:?}",
        honeypot.styles
    );
    let submit = form.controls.iter().find(|control| control.tag == "button").expect("a submit button");
    assert_eq!(submit.attr("type"), Some("submit"), "{what}");
}

/// The fields a browser sends once a person has filled `form` in: `email`, a text in each text
/// field, the first option that is not empty, the consent box and the boxes of `lists` ticked,
/// the honeypot left as it is; hidden fields as they are.
fn filled(form: &Form, email: &str, lists: &[&str]) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    for control in &form.controls {
        let Some(name) = control.attr("name") else {
            continue;
        };
        let value = match (control.tag.as_str(), control.attr("type").unwrap_or("text")) {
            ("input", "hidden") => control.attr("value").unwrap_or_default().to_owned(),
            ("input", "email") => email.to_owned(),
            ("input", "text") if name == "website" => control.attr("value").unwrap_or_default().to_owned(),
            ("input", "text") => "Ann".to_owned(),
            ("input", "checkbox") if name == "consent" => control.attr("value").unwrap_or("on").to_owned(),
            ("input", "checkbox") if name == "list" && lists.contains(&control.attr("value").unwrap_or_default()) => {
                control.attr("value").unwrap_or("on").to_owned()
            }
            ("input", "checkbox") => continue,
            ("select", _) => control.options.iter().find(|(value, _)| !value.is_empty()).expect("an option").0.clone(),
            other => panic!("a control the test does not fill: {other:?}"),
        };
        fields.push((name.to_owned(), value));
    }
    fields
}

/// Posts `fields` to the form's action as a browser on [`SITE`] does; the status and `Location`.
async fn submit(form: &Form, fields: &[(String, String)]) -> (u16, String) {
    let action = form.attributes.get("action").expect("an action");
    let response = client().post(action).header("Origin", SITE).form(fields).send().await.unwrap();
    let location = response.headers().get("location").map(|value| value.to_str().unwrap().to_owned());
    (response.status().as_u16(), location.unwrap_or_default())
}

/// Waits until `email` has a pending row on `list` in the database file; the row's `fields`.
async fn wait_for_pending(database: &Path, email: &str, list: &str) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let row = read_only(database).query_row(
            "SELECT fields FROM subscribers WHERE email = ?1 AND list_id = ?2 AND status = 'pending'",
            [email, list],
            |row| row.get(0),
        );
        match row {
            Ok(fields) => return fields,
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(error) => panic!("{error}"),
        }
        assert!(Instant::now() < deadline, "no pending row of {email} on {list} within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A server with the test's lists, and its configuration and database file.
fn site() -> (tempfile::TempDir, PathBuf, Served, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), 1000, &lists());
    let served = serve(&path);
    let database = dir.path().join("data/signupd.sqlite3");
    (dir, path, served, database)
}

#[tokio::test]
async fn each_generators_form_for_one_list_signs_up_on_the_real_server() {
    let (_dir, config, served, database) = site();
    let public_url = served.url("");
    let thanks = format!("{SITE}/thanks");
    for generator in GENERATORS {
        for return_to in [None, Some(thanks.as_str())] {
            let what = format!("--for {generator}, --return-to {return_to:?}");
            let mut args = vec!["--list", "news", "--for", generator];
            args.extend(return_to.iter().flat_map(|url| ["--return-to", *url]));
            let (template, stderr) = printed(&config, &public_url, &args);
            assert_eq!(stderr, "", "{what}");
            let form = parse(&rendered(generator, &template, &["campaign"], "spring"));
            assert_accessible(&form, &what);
            assert_eq!(form.attributes.get("action"), Some(&served.url("/api/signup")), "{what}");
            assert_eq!(form.control("list").attr("value"), Some("news"), "{what}");
            assert_eq!(form.control("campaign").attr("value"), Some("spring"), "{what}");
            assert_eq!(form.find("return_to").and_then(|control| control.attr("value")), return_to, "{what}");
            let first_name = form.control("first_name");
            assert_eq!(
                (first_name.attr("maxlength"), first_name.attributes.contains_key("required")),
                (Some("40"), true)
            );
            assert_eq!(form.label_of(first_name), "First name {{ n }}", "{what}");
            let topic = form.control("topic");
            let options: Vec<&str> = topic.options.iter().map(|(value, _)| value.as_str()).collect();
            assert_eq!(options, ["", "rust", "{{ go }} & <c>"], "{what}");
            assert_eq!(form.label_of(topic), "Topic (optional)", "{what}");
            assert_eq!(form.label_of(form.control("consent")), HOSTILE, "{what}: the consent text, literally");

            let email = format!("{generator}-{}@signupd.test", return_to.map_or("hosted", |_| "back"));
            let (status, location) = submit(&form, &filled(&form, &email, &[])).await;
            assert_eq!(status, 303, "{what}");
            let expected =
                return_to.map_or("/check-inbox?list=news".to_owned(), |url| format!("{url}?signup=check-inbox"));
            assert_eq!(location, expected, "{what}");
            let stored = wait_for_pending(&database, &email, "news").await;
            assert_eq!(stored.as_deref(), Some(r#"{"first_name":"Ann","topic":"rust","campaign":"spring"}"#), "{what}");
        }
    }

    // A --return-to the command refuses is one the server ignores: the browser lands on the
    // hosted page, not on the other site.
    let (template, _) = printed(&config, &public_url, &["--list", "news", "--return-to", &thanks]);
    let form = parse(&rendered("html", &template, &["campaign"], "spring"));
    let mut fields = filled(&form, "elsewhere@signupd.test", &[]);
    for (name, value) in &mut fields {
        if name == "return_to" {
            *value = "https://evil.test/".to_owned();
        }
    }
    assert_eq!(submit(&form, &fields).await, (303, "/check-inbox?list=news".to_owned()));
    let refused = snippet(&config, &public_url, &["--list", "news", "--return-to", "https://evil.test/"]);
    assert_eq!(refused.status.code(), Some(1));
}

#[tokio::test]
async fn each_generators_form_for_several_lists_signs_up_for_the_ticked_lists() {
    let (_dir, config, served, database) = site();
    let public_url = served.url("");
    for generator in GENERATORS {
        let what = format!("--for {generator}, two lists");
        let (template, stderr) =
            printed(&config, &public_url, &["--list", "news", "--list", "offers", "--for", generator]);
        assert!(
            stderr.contains("warning: the lists \"news\" and \"offers\" declare the field \"topic\" differently"),
            "{what}: {stderr}"
        );
        let form = parse(&rendered(generator, &template, &["campaign"], "spring"));
        assert_accessible(&form, &what);
        assert_eq!(form.legend.as_deref(), Some("Which lists would you like?"), "{what}");
        let boxes: Vec<&Control> =
            form.controls.iter().filter(|control| control.attr("name") == Some("list")).collect();
        let labels: Vec<&str> = boxes.iter().map(|control| form.label_of(control)).collect();
        assert_eq!(labels, [format!("News <& more> {HOSTILE}"), "Offers {% raw %} Email me the offers.".to_owned()]);
        assert!(
            boxes
                .iter()
                .all(|control| control.attr("type") == Some("checkbox") && !control.attributes.contains_key("checked"))
        );
        let offered: Vec<&str> = form
            .controls
            .iter()
            .filter(|c| c.attr("name") == Some("offered"))
            .filter_map(|c| c.attr("value"))
            .collect();
        assert_eq!(offered, ["news", "offers"], "{what}");
        let names: Vec<&str> = form.controls.iter().filter_map(|control| control.attr("name")).collect();
        assert_eq!(names.iter().filter(|name| **name == "topic").count(), 1, "{what}: each name once: {names:?}");
        assert_eq!(form.control("topic").tag, "select", "{what}: as the first list declares it");
        assert_eq!(form.label_of(form.control("city")), "City (optional)", "{what}");
        assert_eq!(
            form.label_of(form.control("consent")),
            "Email me the lists I ticked. I can unsubscribe from each at any time.",
            "{what}"
        );

        let email = format!("{generator}-both@signupd.test");
        let (status, location) = submit(&form, &filled(&form, &email, &["news", "offers"])).await;
        assert_eq!((status, location.as_str()), (303, "/check-inbox?list=news"), "{what}");
        // Each list keeps the values of its own fields.
        let news = wait_for_pending(&database, &email, "news").await;
        assert_eq!(news.as_deref(), Some(r#"{"first_name":"Ann","topic":"rust","campaign":"spring"}"#), "{what}");
        let offers = wait_for_pending(&database, &email, "offers").await;
        assert_eq!(offers.as_deref(), Some(r#"{"topic":"rust","city":"Ann"}"#), "{what}");
    }
}

#[test]
fn operator_text_with_markup_and_template_syntax_comes_out_as_literal_text_in_every_generator() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &lists());
    for generator in GENERATORS {
        let (template, _) = printed(&config, "https://signup.shop.test", &["--list", "news", "--for", generator]);
        for literal in ["{{ x }}", "{% y %}", "{z}", "<b>", "{{ n }}", "{{ go }}"] {
            assert!(!template.contains(literal), "--for {generator}: {literal} reaches the engine:\n{template}");
        }
        let form = parse(&rendered(generator, &template, &["campaign"], "spring"));
        assert_eq!(form.label_of(form.control("consent")), HOSTILE, "--for {generator}");
        let (template, _) =
            printed(&config, "https://signup.shop.test", &["--list", "news", "--list", "offers", "--for", generator]);
        let form = parse(&rendered(generator, &template, &["campaign"], "spring"));
        let news = form.controls.iter().find(|control| control.attr("value") == Some("news")).unwrap();
        assert_eq!(form.label_of(news), format!("News <& more> {HOSTILE}"), "--for {generator}");
    }
}

#[test]
fn what_the_command_refuses_exits_with_its_code_names_the_option_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &lists());
    let thanks = format!("{SITE}/thanks");
    let cases: [(&str, Vec<&str>, i32, &str); 8] = [
        ("unknown list", vec!["--list", "nope"], 1, "signupd: error: --list: no list with id \"nope\" is configured"),
        ("one unknown list of two", vec!["--list", "news", "--list", "nope"], 1, "--list: no list with id \"nope\""),
        ("no --list", vec![], 2, "--list <ID>"),
        ("unknown --for", vec!["--list", "news", "--for", "wordpress"], 2, "invalid value 'wordpress' for '--for"),
        ("return_to elsewhere", vec!["--list", "news", "--return-to", "https://evil.test/"], 1, "--return-to: "),
        ("relative return_to", vec!["--list", "news", "--return-to", "/thanks"], 1, "--return-to: \"/thanks\" is not"),
        ("script return_to", vec!["--list", "news", "--return-to", "javascript:alert(1)"], 1, "--return-to: "),
        (
            "a list without allowed_origins",
            vec!["--list", "news", "--list", "closed", "--return-to", &thanks],
            1,
            "--return-to: the list \"closed\" has no allowed_origins",
        ),
    ];
    for (name, args, code, expected) in cases {
        let output = snippet(&config, "https://signup.shop.test", &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{name}: {stderr}");
        assert!(stderr.contains(expected), "{name}: expected {expected:?} in {stderr:?}");
        if code == 1 {
            assert_eq!(after_config_line(&stderr).trim_end().lines().count(), 1, "{name}: one line: {stderr}");
        }
        assert!(output.stdout.is_empty(), "{name}: no form printed");
        assert_eq!(files_under(dir.path()), ["signupd.toml"], "{name}: nothing written");
    }
}

#[test]
fn the_guides_example_is_what_the_command_prints() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &guide_example("snippet-config"));
    let command = guide_example("snippet-command");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..2], ["signupd", "snippet"], "{command}");
    let args: Vec<&str> =
        words[2..].iter().copied().filter(|word| !word.ends_with(".toml") && *word != "--config").collect();
    let (form, _) = printed(&config, "https://signup.bakery.test", &args);
    assert_eq!(
        form.replace("https://signup.bakery.test", "https://signup.example.com"),
        guide_example("snippet-example")
    );
}

#[test]
fn for_jekyll_a_multilingual_lists_form_posts_the_pages_language_and_lang_fixes_one() {
    // Arrange: a list in English and German
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &format!("[[lists]]\nid = \"news\"\nname = \"News\"\nlanguages = [\"de\"]\nallowed_origins = [{SITE:?}]\n"),
    );

    // Act
    let (page, _) = printed(&config, "https://signup.bakery.test", &["--list", "news", "--for", "jekyll"]);
    let (german, _) =
        printed(&config, "https://signup.bakery.test", &["--list", "news", "--for", "jekyll", "--lang", "de"]);

    // Assert: without --lang, the Liquid expression Jekyll's own theme (minima) writes into
    // <html lang>: the page's front-matter `lang`, else the site's; empty (neither set) counts
    // as none, and the server then follows the browser
    assert!(
        page.contains("<input type=\"hidden\" name=\"lang\" value=\"{{ page.lang | default: site.lang }}\">"),
        "{page}"
    );
    assert!(page.contains("lang=\"en\">") && !page.contains("E-Mail-Adresse"), "the words in English: {page}");
    // Assert: with --lang, that language's words and its code, and no expression
    assert!(german.contains("<input type=\"hidden\" name=\"lang\" value=\"de\">"), "{german}");
    assert!(german.contains("lang=\"de\">") && german.contains("E-Mail-Adresse"), "the words in German: {german}");
    assert!(!german.contains("page.lang"), "{german}");
}
