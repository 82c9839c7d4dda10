//! The repository's documents stand on their own and cannot drift from the code:
//!
//! - every relative link in a Markdown file points at a file inside the repository, and a link
//!   with a `#fragment` into a Markdown file names a heading that exists there (a link to the
//!   team's workspace beside the repository, to a renamed file or to a reworded heading fails);
//! - every image has alt text and is a PNG small enough for the repository;
//! - the configuration reference (`docs/configuration.md`) documents exactly the keys of
//!   `config.example.toml`, and the default it gives for each key is the value `check-config`
//!   prints when the key is left out;
//! - the man page (`packaging/signupd.8`) documents every subcommand `signupd --help` lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use crate::helpers::signupd;

/// Documents that other branches are adding. A link to one of them may point nowhere until it
/// lands; once the file exists, links to it and their fragments are checked like any other.
const DOCUMENTS_IN_FLIGHT: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap()
}

/// Every Markdown file of the repository outside build output and installed packages.
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The lines of a Markdown text outside fenced code blocks: brackets in code are not links, and
/// `#` in a shell block is not a heading.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut in_fence = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                return false;
            }
            !in_fence
        })
        .collect()
}

/// A link target: the path (empty for a fragment-only link) and the fragment, if any.
#[derive(Debug, PartialEq, Eq)]
struct Link {
    path: String,
    fragment: Option<String>,
}

/// The targets of `[text](target)` links outside code blocks.
fn links(text: &str) -> Vec<Link> {
    prose_lines(text)
        .into_iter()
        .flat_map(|line| {
            line.match_indices("](").filter_map(move |(at, _)| {
                let rest = &line[at + 2..];
                let target = rest[..rest.find(')')?].trim();
                let (path, fragment) = match target.split_once('#') {
                    Some((path, fragment)) => (path, Some(fragment.to_owned())),
                    None => (target, None),
                };
                Some(Link { path: path.to_owned(), fragment })
            })
        })
        .collect()
}

/// The anchor a heading gets on the usual Markdown hosts: lowercase; letters, digits, `-` and
/// `_` kept; spaces become `-`; everything else (backticks, brackets, dots, colons) dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every heading anchor of a Markdown text; a repeated heading gets `-1`, `-2`, … appended.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let count = seen.entry(base.clone()).or_default();
        found.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
        *count += 1;
    }
    found
}

/// `path` with `.` and `..` resolved without touching the filesystem (the file may not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_documents_points_at_a_file_and_heading_in_the_repository() {
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    for expected in ["README.md", "docs/http-api.md", "docs/configuration.md", "docs/operations.md"] {
        assert!(files.contains(&root.join(expected)), "{expected} is checked");
    }

    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for link in links(&text) {
            if link.path.contains("://") || link.path.starts_with("mailto:") {
                continue;
            }
            let target = if link.path.is_empty() { file.clone() } else { file.parent().unwrap().join(&link.path) };
            let target = normalize(&target);
            if !target.exists() {
                let in_flight = DOCUMENTS_IN_FLIGHT.iter().any(|doc| target == root.join(doc));
                if !in_flight {
                    broken.push(format!("{name}: {} (no such file in the repository)", link.path));
                }
                continue;
            }
            if !target.canonicalize().is_ok_and(|path| path.starts_with(&root)) {
                broken.push(format!("{name}: {} (outside the repository)", link.path));
                continue;
            }
            if let Some(fragment) = &link.fragment
                && target.extension().is_some_and(|ext| ext == "md")
                && !anchors(&std::fs::read_to_string(&target).unwrap()).contains(fragment)
            {
                broken.push(format!("{name}: {}#{fragment} (no such heading)", link.path));
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

/// The `![alt](target)` images outside code blocks: (alt text, target).
fn images(text: &str) -> Vec<(String, String)> {
    prose_lines(text)
        .into_iter()
        .flat_map(|line| {
            line.match_indices("![").filter_map(move |(at, _)| {
                let rest = &line[at + 2..];
                let close = rest.find("](")?;
                let target = &rest[close + 2..];
                Some((rest[..close].to_owned(), target[..target.find(')')?].trim().to_owned()))
            })
        })
        .collect()
}

#[test]
fn every_image_in_the_documents_has_alt_text_and_is_a_small_png_in_the_repository() {
    // The link test checks that each image exists; here what a reader without it gets (the alt
    // text), and that a screenshot stays a reasonable size for the repository.
    const MAX_BYTES: u64 = 150 * 1024;
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    let mut wrong = Vec::new();
    let mut seen = 0;
    for file in &files {
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for (alt, target) in images(&std::fs::read_to_string(file).unwrap()) {
            seen += 1;
            let path = normalize(&file.parent().unwrap().join(&target));
            if alt.trim().is_empty() {
                wrong.push(format!("{name}: {target} has no alt text"));
            }
            match std::fs::read(&path) {
                Ok(bytes) if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") => {
                    wrong.push(format!("{name}: {target} is not a PNG"))
                }
                Ok(bytes) if bytes.len() as u64 > MAX_BYTES => wrong.push(format!(
                    "{name}: {target} is {} KiB, more than {} KiB",
                    bytes.len() / 1024,
                    MAX_BYTES / 1024
                )),
                Ok(_) => {}
                Err(error) => wrong.push(format!("{name}: {target}: {error}")),
            }
        }
    }
    assert!(wrong.is_empty(), "images: {wrong:#?}");
    assert!(seen >= 1, "docs/install.md shows a branded page");
}

#[test]
fn the_image_reader_finds_alt_text_and_target_outside_code() {
    let text = "a ![A page, in blue](shot.png) and ![](bare.png)\n```md\n![no](code.png)\n```\n";
    assert_eq!(
        images(text),
        [("A page, in blue".to_owned(), "shot.png".to_owned()), (String::new(), "bare.png".to_owned())]
    );
}

#[test]
fn the_link_reader_finds_relative_and_fragment_links_outside_code() {
    let text = "see [the map](src/lib.rs#layout), [spec](../elsewhere/SPEC.md) and [up](#top)\n\
                ```sh\necho [not](a-link.md)\n```\n";
    let found = links(text);
    let found: Vec<(&str, Option<&str>)> =
        found.iter().map(|link| (link.path.as_str(), link.fragment.as_deref())).collect();
    assert_eq!(found, [("src/lib.rs", Some("layout")), ("../elsewhere/SPEC.md", None), ("", Some("top"))]);
}

#[test]
fn heading_anchors_follow_the_usual_markdown_rules() {
    let text = "# signupd\n## `[mail.smtp]`\n## Mail deliverability: SPF, DKIM, DMARC\n\
                ## Secrets and `$CREDENTIALS_DIRECTORY`\n## Notes\n## Notes\n```sh\n# not a heading\n```\n";
    let expected: BTreeSet<String> = [
        "signupd",
        "mailsmtp",
        "mail-deliverability-spf-dkim-dmarc",
        "secrets-and-credentials_directory",
        "notes",
        "notes-1",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(anchors(text), expected);
}

// ---------------------------------------------------------------------------------------------
// The configuration reference against config.example.toml and the code's defaults

/// `config.example.toml` with its commented-out example tables switched on: a block that starts
/// with a commented table header (`# [[webhooks]]`) loses one level of `# ` up to the next blank
/// line, so `# name = "crm"` is a key and `# # Unique; …` stays a comment.
fn example_with_commented_tables() -> String {
    let text = std::fs::read_to_string(root().join("config.example.toml")).unwrap();
    let mut out = String::new();
    let mut in_block = false;
    for line in text.lines() {
        let header =
            line.strip_prefix("# ").is_some_and(|rest| rest.starts_with('[') && rest.trim_end().ends_with(']'));
        in_block = (in_block || header) && line.starts_with('#');
        let line =
            if in_block { line.strip_prefix("# ").or_else(|| line.strip_prefix('#')).unwrap_or(line) } else { line };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Every key of a TOML document as a dotted path. A list of tables written as `[[name]]` gives
/// `name.KEY` for the keys of its tables; any other value (an inline list of tables included)
/// is one key.
fn toml_keys(prefix: &str, value: &toml::Value, text: &str, keys: &mut BTreeSet<String>) {
    let join = |key: &str| if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") };
    match value {
        toml::Value::Table(table) => {
            for (key, value) in table {
                toml_keys(&join(key), value, text, keys);
            }
        }
        toml::Value::Array(items)
            if text.contains(&format!("[[{prefix}]]")) && items.iter().all(toml::Value::is_table) =>
        {
            for item in items {
                toml_keys(prefix, item, text, keys);
            }
        }
        _ => {
            keys.insert(prefix.to_owned());
        }
    }
}

fn example_keys() -> BTreeSet<String> {
    let text = example_with_commented_tables();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    let mut keys = BTreeSet::new();
    toml_keys("", &parsed, &text, &mut keys);
    keys
}

/// The rows of the reference tables of `docs/configuration.md` (tables whose header starts with
/// `| key | default |`): key → the default cell as written.
fn documented_keys() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap();
    let mut rows = BTreeMap::new();
    let mut in_reference = false;
    for line in prose_lines(&text) {
        if !line.starts_with('|') {
            in_reference = false;
            continue;
        }
        if line.starts_with("| key | default |") {
            in_reference = true;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let Some(key) = cells.first().and_then(|cell| cell.strip_prefix('`')).and_then(|cell| cell.strip_suffix('`'))
        else {
            continue;
        };
        if !in_reference
            || !key.contains('.')
            || !key.chars().all(|c| c.is_ascii_lowercase() || "._0123456789".contains(c))
        {
            continue;
        }
        let default = cells.get(1).copied().unwrap_or_default().to_owned();
        assert!(rows.insert(key.to_owned(), default).is_none(), "{key} is documented twice");
    }
    rows
}

#[test]
fn the_configuration_reference_documents_exactly_the_keys_of_the_example() {
    let example = example_keys();
    let documented: BTreeSet<String> = documented_keys().into_keys().collect();
    assert!(example.contains("server.listen") && example.contains("lists.id") && example.contains("webhooks.url"));

    let undocumented: Vec<&String> = example.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "keys of config.example.toml missing from docs/configuration.md: {undocumented:?}"
    );
    let unknown: Vec<&String> = documented.difference(&example).collect();
    assert!(unknown.is_empty(), "keys documented in docs/configuration.md but not in config.example.toml: {unknown:?}");
}

/// The value at a dotted key of the effective configuration; a list of tables (`lists`,
/// `webhooks`) stands for its first table.
fn effective_value<'a>(effective: &'a toml::Value, key: &str) -> Option<&'a toml::Value> {
    let mut value = effective;
    for part in key.split('.') {
        if let toml::Value::Array(items) = value {
            value = items.first()?;
        }
        value = value.get(part)?;
    }
    Some(value)
}

#[test]
fn every_documented_default_is_what_signupd_uses_when_the_key_is_left_out() {
    // Arrange: a configuration that sets only what has no default (a list id; a webhook's name
    // and url, its secret from $CREDENTIALS_DIRECTORY; a destination's and a relay's name and
    // kind, an API token's name and scopes, their credentials from there too), and the real
    // binary's effective values.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("signupd.toml");
    std::fs::write(
        &config,
        "[[lists]]\nid = \"docs\"\n\n[[webhooks]]\nname = \"docs\"\nurl = \"http://127.0.0.1:9/hook\"\n\n\
         [[destinations]]\nname = \"docs-out\"\nkind = \"buttondown\"\n\n\
         [[relays]]\nname = \"docs-relay\"\nkind = \"mailgun\"\n\n\
         [[api_tokens]]\nname = \"docs-api\"\nscopes = [\"read\"]\n",
    )
    .unwrap();
    let credentials = dir.path().join("credentials");
    std::fs::create_dir(&credentials).unwrap();
    std::fs::write(credentials.join("webhook_docs"), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n").unwrap();
    std::fs::write(credentials.join("destination_docs-out"), "buttondown-api-key\n").unwrap();
    std::fs::write(credentials.join("relay_docs-relay"), "mailgun-signing-key\n").unwrap();
    std::fs::write(credentials.join("api_token_docs-api"), "docs-api-token-of-at-least-32-characters\n").unwrap();

    // Act
    let output = signupd()
        .arg("check-config")
        .arg("--config")
        .arg(&config)
        .env("CREDENTIALS_DIRECTORY", &credentials)
        .current_dir(dir.path())
        .output()
        .unwrap();

    // Assert
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "check-config failed: {}", String::from_utf8_lossy(&output.stderr));
    let effective: toml::Value = toml::from_str(&stdout).unwrap();
    let mut wrong = Vec::new();
    let mut compared = 0;
    for (key, cell) in documented_keys() {
        // A default is one code span holding a TOML value; "required" and prose are not defaults.
        let Some(literal) = cell.strip_prefix('`').and_then(|cell| cell.strip_suffix('`')).filter(|s| !s.contains('`'))
        else {
            assert!(cell == "required", "{key}: the default {cell:?} is neither a `TOML value` nor \"required\"");
            continue;
        };
        let documented: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {literal}")) {
            Ok(mut table) => table.remove("v").unwrap(),
            Err(error) => panic!("{key}: the documented default {literal} is not a TOML value: {error}"),
        };
        match effective_value(&effective, &key) {
            Some(actual) if *actual == documented => compared += 1,
            Some(actual) => wrong.push(format!("{key}: documented {literal}, signupd uses {actual}")),
            None => wrong.push(format!("{key}: documented {literal}, but check-config prints no such key")),
        }
    }
    assert!(wrong.is_empty(), "documented defaults that differ from the code's:\n{}", wrong.join("\n"));
    assert!(compared >= 40, "only {compared} defaults were compared");
}

/// The subcommands `signupd --help` lists, but `help`.
fn subcommands_in_help() -> Vec<String> {
    let output = signupd().arg("--help").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let help = String::from_utf8(output.stdout).unwrap();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.len() > 10, "cannot read the commands of --help: {help}");
    commands
}

/// The words of the tags of the COMMANDS section of a man page (the line after each `.TP`), with
/// the font escapes and macros taken out: `\fBbackfill \-\-destination\fR` is `backfill`,
/// `--destination`; `.BR export ", " import` is `export`, `import`.
fn commands_in_man_page(page: &str) -> BTreeSet<String> {
    let mut in_commands = false;
    let mut after_tp = false;
    let mut words = BTreeSet::new();
    for line in page.lines() {
        if let Some(section) = line.strip_prefix(".SH ") {
            in_commands = section.trim() == "COMMANDS";
            continue;
        }
        if !in_commands {
            continue;
        }
        if line.trim() == ".TP" {
            after_tp = true;
            continue;
        }
        if std::mem::take(&mut after_tp) {
            let plain = line.replace("\\-", "-").replace("\\fB", " ").replace("\\fR", " ").replace("\\fI", " ");
            let plain = plain.trim_start_matches(|c: char| c == '.' || c.is_ascii_uppercase());
            words.extend(
                plain
                    .split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
                    .filter(|word| !word.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    words
}

#[test]
fn the_man_page_reader_finds_commands_in_each_tag_form() {
    let page = ".SH COMMANDS\n.TP\n.B check\\-config\nValidate.\n.TP\n.BR export \", \" import\nOperator.\n.TP\n\
                \\fBbackfill \\-\\-destination\\fR \\fINAME\\fR\nHand on.\n.SH FILES\n.TP\n.I lookup\n";
    let found = commands_in_man_page(page);
    for command in ["check-config", "export", "import", "backfill"] {
        assert!(found.contains(command), "{command}: {found:?}");
    }
    assert!(!found.contains("lookup"), "only the COMMANDS section: {found:?}");
    assert!(!found.contains("validate") && !found.contains("hand"), "only the tags: {found:?}");
}

/// packaging/signupd.8 is what `man signupd` shows on a Debian install: every subcommand the
/// binary has is there, so an operator who reads the page finds each (a subcommand added without
/// its section would be one the man page hides).
#[test]
fn the_man_page_documents_every_subcommand_signupd_help_lists() {
    let page = std::fs::read_to_string(root().join("packaging/signupd.8")).unwrap();
    let documented = commands_in_man_page(&page);
    let missing: Vec<String> =
        subcommands_in_help().into_iter().filter(|command| !documented.contains(command)).collect();
    assert!(missing.is_empty(), "packaging/signupd.8 does not document these subcommands of --help: {missing:?}");
}
