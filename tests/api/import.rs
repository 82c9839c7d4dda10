//! `signupd import`, run as the real binary against a real SQLite file: the rules of a record,
//! the counts, the database left untouched where it must be (compared row by row), the memory of
//! a long file, and an import beside a real `signupd serve` taking signups.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use serde_json::Value;
use tempfile::TempDir;

use crate::helpers::{after_config_line, signupd};
use crate::process::{client, config, count, read_only, serve, unix_now};

/// `news` with two tags and its own consent text; `other` plain.
const LISTS: &str = "[[lists]]\nid = \"news\"\ntags = [\"beta\", \"pricing\"]\nconsent_text = \"News, now and then.\"\n\
                     [[lists]]\nid = \"other\"\n";

/// `(list, email, status, confirm_method, consent_version, confirmed_at, source, tags)`.
type Row = (String, String, String, Option<String>, String, Option<i64>, Option<String>, Option<String>);

/// A migrated database with the secrets `serve` would use, and no server.
struct Fixture {
    dir: TempDir,
    config: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        Self::with_lists(LISTS)
    }

    /// A fixture whose configuration has the `[[lists]]` tables `lists`.
    fn with_lists(lists: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 1000, lists);
        let migrated = signupd().arg("migrate").arg("--config").arg(&config).output().unwrap();
        assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
        for name in ["token_secret", "hash_key"] {
            let secret = signupd().arg("gen-secret").output().unwrap().stdout;
            let path = dir.path().join("data").join(name);
            std::fs::write(&path, secret).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        }
        Self { dir, config }
    }

    fn database(&self) -> PathBuf {
        self.dir.path().join("data/signupd.sqlite3")
    }

    /// Writes `contents` to a file named `name` in the test's directory.
    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// `signupd import FILE ARGS --config PATH`.
    fn import(&self, file: &Path, args: &[&str]) -> Output {
        signupd().arg("import").arg(file).args(args).arg("--config").arg(&self.config).output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        signupd().args(args).arg("--config").arg(&self.config).output().unwrap()
    }

    /// Every row of every table but the audit log, which records each import run (that an
    /// import appends its entry is the lookup suite's to check).
    fn dump(&self) -> Vec<String> {
        dump(&self.database()).into_iter().filter(|line| !line.starts_with("audit_log:")).collect()
    }

    /// Every row of `subscribers`, by list and address.
    fn rows(&self) -> Vec<Row> {
        let conn = read_only(&self.database());
        let mut statement = conn
            .prepare(
                "SELECT list_id, email, status, confirm_method, consent_version, confirmed_at, source, tags
                 FROM subscribers ORDER BY list_id, email",
            )
            .unwrap();
        statement
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

/// Every row of every table, as text, in a fixed order: two dumps are equal exactly when the
/// database holds the same rows.
fn dump(database: &Path) -> Vec<String> {
    let conn = read_only(database);
    let tables: Vec<String> = {
        let mut statement = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let mut lines = Vec::new();
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        let mut table_lines = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            let cells: Vec<String> = (0..columns)
                .map(|at| match row.get_ref(at).unwrap() {
                    ValueRef::Null => "NULL".to_owned(),
                    ValueRef::Integer(value) => value.to_string(),
                    ValueRef::Real(value) => value.to_string(),
                    ValueRef::Text(text) => String::from_utf8_lossy(text).into_owned(),
                    ValueRef::Blob(blob) => format!("{blob:?}"),
                })
                .collect();
            table_lines.push(format!("{table}: {}", cells.join(" | ")));
        }
        table_lines.sort();
        lines.extend(table_lines);
    }
    lines
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The version the guide promises a text imported without one: `import-` and the first 12 hex
/// digits of the SHA-256 of its UTF-8 bytes, worked out here with `ring` rather than by signupd.
fn derived(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!("import-{}", &hex::encode(digest.as_ref())[..12])
}

/// Each `(version, text)` recorded in `consent_texts` for `list`.
fn consent_texts(database: &Path, list: &str) -> Vec<(String, String)> {
    read_only(database)
        .prepare("SELECT consent_version, consent_text FROM consent_texts WHERE list_id = ?1 ORDER BY 1, 2")
        .unwrap()
        .query_map([list], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The records `export --format jsonl` writes for `list`.
fn exported(fx: &Fixture, list: &str) -> Vec<Value> {
    let export = fx.run(&["export", "--list", list, "--format", "jsonl"]);
    assert!(export.status.success(), "{}", stderr(&export));
    stdout(&export).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Exit 0; the counts line (stdout's last line).
fn counts(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    stdout(output).lines().last().unwrap_or_default().to_owned()
}

/// Exit 2 with one line on stderr (`case` names the call in a failure); that line.
fn usage_error(output: &Output, case: &str) -> String {
    let line = after_config_line(&stderr(output)).to_owned();
    assert_eq!(output.status.code(), Some(2), "{case}: a usage error: {line}");
    assert_eq!(line.lines().count(), 1, "{case}: one line: {line}");
    assert!(stdout(output).is_empty(), "{case}: no counts: {}", stdout(output));
    line
}

/// The refusal lines of stderr.
fn refusals(output: &Output) -> Vec<String> {
    stderr(output).lines().filter(|line| line.starts_with("line ")).map(str::to_owned).collect()
}

#[test]
fn a_language_imports_as_one_of_the_lists_languages_and_export_and_lookup_show_it() {
    // Arrange: a list in English (its `language`) and German
    let fx = Fixture::with_lists("[[lists]]\nid = \"news\"\nlanguages = [\"de\"]\n");
    let file = fx.file("people.csv", "email,language\nann@example.com,de-AT\nbob@example.com,\ncat@example.com,ja\n");

    // Act
    let output = fx.import(&file, &["--list", "news", "--consent-text", "Send me the news."]);

    // Assert: `de-AT` finds German, no value is the list's language, one it does not serve is refused
    assert_eq!(counts(&output), "imported 2, skipped 0 (existing 0, suppressed 0), refused 1");
    let refused = refusals(&output);
    assert!(
        refused[0].starts_with("line 4:") && refused[0].contains("language is not one of the languages of list news")
    );
    let languages: Vec<(String, String)> = exported(&fx, "news")
        .iter()
        .map(|record| (record["email"].as_str().unwrap().to_owned(), record["language"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(languages, [("ann@example.com".into(), "de".into()), ("bob@example.com".into(), "en".into())]);
    let lookup = fx.run(&["lookup", "ann@example.com", "--json"]);
    let document: Value = serde_json::from_str(&stdout(&lookup)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&lookup)));
    assert_eq!(document["rows"][0]["language"], "de", "{document}");
    let text = fx.run(&["lookup", "bob@example.com"]);
    assert!(stdout(&text).contains("  language              en"), "{}", stdout(&text));
}

#[test]
fn a_csv_imports_good_rows_as_confirmed_by_import_and_reports_a_bad_row_in_the_middle_by_line_masked() {
    // Arrange: three good rows around bad ones; an unknown column; a quoted line break
    let fx = Fixture::new();
    let file = fx.file(
        "subscribers.csv",
        "email,confirmed_at,source,tags,first_name\n\
         ann@example.com,2025-03-01T09:30:00Z,old-site,beta,\"Ann\nMarie\"\n\
         not-an-address,,,,Bob\n\
         carl@example.com,2099-01-01T00:00:00Z,,,Carl\n\
         dora@example.com,yesterday,,,Dora\n\
         eve@example.com,,Old Site,,Eve\n\
         finn@example.com,,,secret-tag,Finn\n\
         ,,,,Nobody\n\
         gus@example.com,,,\"pricing, beta\",Gus\n\
         HAL@Example.COM,,,,Hal\n",
    );
    let before = unix_now();

    // Act
    let output = fx.import(&file, &["--list", "news", "--consent-text", "Old newsletter, monthly."]);

    // Assert: the counts, and each refusal with its line (the quoted break makes ann's record two
    // lines), the address masked, an unparseable one not shown at all
    assert_eq!(counts(&output), "imported 3, skipped 0 (existing 0, suppressed 0), refused 6");
    assert_eq!(
        refusals(&output),
        [
            "line 4: refused: email: the email address has no @",
            "line 5: refused c***@example.com: confirmed_at is in the future",
            "line 6: refused d***@example.com: confirmed_at is not an RFC 3339 time (such as 2025-03-01T09:30:00Z)",
            "line 7: refused e***@example.com: source is not 1-64 characters of a-z, 0-9, '.', '_' and '-'",
            "line 8: refused f***@example.com: a tag is not one of the tags of list news",
            "line 9: refused: no email",
        ]
    );
    let all = stderr(&output);
    for secret in ["not-an-address", "carl@", "secret-tag", "Old Site"] {
        assert!(!all.contains(secret), "{secret} must not be echoed: {all}");
    }
    let rows = fx.rows();
    assert_eq!(rows.len(), 3);
    let (list, email, status, method, version, confirmed_at, source, tags) = &rows[0];
    assert_eq!((list.as_str(), email.as_str(), status.as_str()), ("news", "ann@example.com", "confirmed"));
    let version_of_the_flag = derived("Old newsletter, monthly.");
    assert_eq!((method.as_deref(), version.as_str()), (Some("import"), version_of_the_flag.as_str()));
    assert_eq!(*confirmed_at, Some(1_740_821_400), "the file's confirmed_at");
    assert_eq!((source.as_deref(), tags.as_deref()), (Some("old-site"), Some("beta")));
    assert_eq!(rows[1].1, "gus@example.com");
    assert_eq!(rows[1].7.as_deref(), Some("beta,pricing"), "comma- and space-separated tags, stored sorted");
    assert!(rows[1].5.unwrap() >= before, "no confirmed_at: the import's time");
    assert_eq!(rows[2].1, "hal@example.com", "normalised like a signup's address");
    let conn = read_only(&fx.database());
    assert_eq!(count(&conn, "SELECT count(*) FROM outbox"), 0, "nothing is mailed");
    assert_eq!(count(&conn, "SELECT count(*) FROM webhook_deliveries"), 0, "no webhook fires");
    assert_eq!(count(&conn, &format!("SELECT count(*) FROM subscribers WHERE created_at < {before}")), 0);
    assert_eq!(
        consent_texts(&fx.database(), "news"),
        [(version_of_the_flag, "Old newsletter, monthly.".to_owned())],
        "the text recorded once, under the version derived from it"
    );
}

/// `news` with a text field and a select field.
const FIELD_LISTS: &str = "[[lists]]\nid = \"news\"\n\
                           [[lists.fields]]\nname = \"company\"\nlabel = \"Company\"\n\
                           [[lists.fields]]\nname = \"topic\"\nlabel = \"Topic\"\nkind = \"select\"\noptions = [\"Rust\", \"Go\"]\n";

#[test]
fn a_field_value_that_is_not_a_string_is_refused_with_its_line_as_the_signup_api_refuses_it() {
    // Arrange: a number, an object, an array and a boolean where a field's text belongs, in the
    // `fields` object and as a member of its own; a null (no value) and a non-string member that
    // names no field of the list (ignored, as any other column is) beside good values
    let fx = Fixture::with_lists(FIELD_LISTS);
    let file = fx.file(
        "in.jsonl",
        "{\"email\":\"ann@example.com\",\"fields\":{\"company\":\"Acme\",\"topic\":\"Go\"}}\n\
         {\"email\":\"bob@example.com\",\"fields\":{\"company\":42}}\n\
         {\"email\":\"cat@example.com\",\"fields\":{\"company\":{\"name\":\"Acme\"}}}\n\
         {\"email\":\"dan@example.com\",\"company\":[\"Acme\"]}\n\
         {\"email\":\"eve@example.com\",\"fields\":{\"topic\":true}}\n\
         {\"email\":\"fay@example.com\",\"fields\":{\"company\":null},\"age\":41,\"topic\":\"Rust\"}\n",
    );

    // Act
    let output = fx.import(&file, &["--list", "news", "--consent-text", "Old newsletter, monthly."]);

    // Assert: each refused with its line and the field named, counted as refused, not imported
    assert_eq!(counts(&output), "imported 2, skipped 0 (existing 0, suppressed 0), refused 4");
    assert_eq!(
        refusals(&output),
        [
            "line 2: refused b***@example.com: field company is not text",
            "line 3: refused c***@example.com: field company is not text",
            "line 4: refused d***@example.com: field company is not text",
            "line 5: refused e***@example.com: field topic is not one of its options",
        ]
    );
    assert!(!stderr(&output).contains("42") && !stderr(&output).contains("Acme"), "{}", stderr(&output));
    let conn = read_only(&fx.database());
    let mut statement = conn.prepare("SELECT email, fields FROM subscribers ORDER BY email").unwrap();
    let stored: Vec<(String, Option<String>)> =
        statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        stored,
        [
            ("ann@example.com".to_owned(), Some(r#"{"company":"Acme","topic":"Go"}"#.to_owned())),
            ("fay@example.com".to_owned(), Some(r#"{"topic":"Rust"}"#.to_owned())),
        ]
    );
}

#[test]
fn without_a_consent_text_column_the_flag_is_required_before_anything_is_written() {
    let fx = Fixture::new();
    let file = fx.file("no-consent.csv", "email\nann@example.com\n");
    let before = fx.dump();

    let output = fx.import(&file, &["--list", "news"]);

    let line = usage_error(&output, "no consent_text column, no flag");
    assert!(line.contains("has no consent_text column: give --consent-text"), "{line}");
    assert_eq!(fx.dump(), before, "nothing written");
}

#[test]
fn per_row_consent_texts_and_versions_are_kept_and_recorded_and_a_version_names_one_text() {
    // Arrange: JSON lines, two versions with their texts, a row without a text (no flag), a row
    // giving v-old another text, a row with v-old's text but no version
    let fx = Fixture::new();
    let file = fx.file(
        "subscribers.jsonl",
        concat!(
            "{\"email\":\"ann@example.com\",\"consent_text\":\"Old wording.\",\"consent_version\":\"v-old\",\"tags\":[\"beta\"]}\n",
            "{\"email\":\"bob@example.com\",\"consent_text\":\"Older wording.\",\"consent_version\":\"v-older\",\"tags\":\"beta pricing\"}\n",
            "{\"email\":\"cat@example.com\",\"consent_version\":\"v-old\"}\n",
            "{\"email\":\"dan@example.com\",\"consent_text\":\"Not the old wording.\",\"consent_version\":\"v-old\"}\n",
            "{\"email\":\"eve@example.com\",\"consent_text\":\"Old wording.\",\"consent_version\":\"v-old\",\"unknown\":{\"a\":1}}\n",
            "{\"email\":\"fay@example.com\",\"consent_text\":\"bad version\",\"consent_version\":\"v 1\"}\n",
            "{\"email\":\"gil@example.com\",\"consent_text\":\"Old wording.\"}\n",
        ),
    );

    // Act
    let output = fx.import(&file, &["--list", "news"]);

    // Assert
    assert_eq!(counts(&output), "imported 4, skipped 0 (existing 0, suppressed 0), refused 3");
    assert_eq!(
        refusals(&output),
        [
            "line 3: refused c***@example.com: no consent_text, and no --consent-text was given",
            "line 4: refused d***@example.com: consent_text differs from the text recorded for consent_version v-old (a version names one text: give these rows a consent_version of their own)",
            "line 6: refused f***@example.com: consent_version is not 1-64 characters of A-Z, a-z, 0-9, '.', '-', '_'",
        ]
    );
    let texts = consent_texts(&fx.database(), "news");
    assert!(texts.contains(&("v-old".to_owned(), "Old wording.".to_owned())), "{texts:?}");
    assert!(texts.contains(&("v-older".to_owned(), "Older wording.".to_owned())), "{texts:?}");
    assert!(texts.contains(&(derived("Old wording."), "Old wording.".to_owned())), "{texts:?}");
    assert!(!texts.iter().any(|(_, text)| text == "Not the old wording."), "{texts:?}");
    let records = exported(&fx, "news");
    let of = |email: &str| records.iter().find(|record| record["email"] == email).unwrap().clone();
    assert_eq!(of("ann@example.com")["consent_text"], "Old wording.");
    assert_eq!(of("bob@example.com")["consent_text"], "Older wording.");
    assert_eq!(of("bob@example.com")["tags"], serde_json::json!(["beta", "pricing"]));
    assert_eq!(of("eve@example.com")["consent_version"], "v-old");
    assert_eq!(of("gil@example.com")["consent_version"], derived("Old wording.").as_str(), "no version: derived");
    assert_eq!(of("gil@example.com")["consent_text"], "Old wording.");

    // Act + Assert: a second import may not give a version another text than the one recorded
    // for it, here the list's current version named by --consent-version
    let flag = fx.file("flag.csv", "email\nzoe@example.com\n");
    let first = fx.import(&flag, &["--list", "news", "--consent-text", "First v1 text.", "--consent-version", "v1"]);
    assert_eq!(counts(&first), "imported 1, skipped 0 (existing 0, suppressed 0), refused 0");
    let second = fx.import(
        &fx.file("flag2.csv", "email\nyan@example.com\n"),
        &["--list", "news", "--consent-text", "Another.", "--consent-version", "v1"],
    );
    assert_eq!(counts(&second), "imported 0, skipped 0 (existing 0, suppressed 0), refused 1");
    assert!(
        refusals(&second)[0].contains("differs from the text recorded for consent_version v1"),
        "{:?}",
        refusals(&second)
    );
}

#[test]
fn a_plain_csv_of_addresses_with_consent_text_imports_under_a_version_derived_from_the_text() {
    // Arrange: `serve` has recorded the list's own text under its current version v1, so taking
    // v1 for these rows would refuse every one (the bug this guards)
    let fx = Fixture::new();
    let mut server = serve(&fx.config);
    server.sigterm();
    assert_eq!(server.wait(), Some(0), "serve stopped");
    assert_eq!(consent_texts(&fx.database(), "news"), [("v1".to_owned(), "News, now and then.".to_owned())]);
    let text = "Send me the monthly newsletter.";
    let file = fx.file("plain.csv", "email\nann@example.com\nbob@example.com\ncat@example.com\n");

    // Act
    let output = fx.import(&file, &["--list", "news", "--consent-text", text]);

    // Assert: every row under `import-` and 12 hex digits of the text's SHA-256, with the text
    assert_eq!(counts(&output), "imported 3, skipped 0 (existing 0, suppressed 0), refused 0");
    let version = derived(text);
    assert_eq!(version, "import-4544e04ce55f", "as python3's hashlib.sha256 gives it");
    let records = exported(&fx, "news");
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record["consent_version"], version.as_str(), "{record}");
        assert_eq!(record["consent_text"], text, "{record}");
        assert_eq!(record["confirm_method"], "import", "{record}");
    }
    assert_eq!(
        consent_texts(&fx.database(), "news"),
        [(version, text.to_owned()), ("v1".to_owned(), "News, now and then.".to_owned())]
    );

    // Act: the same import again
    let imported = fx.dump();
    let again = fx.import(&file, &["--list", "news", "--consent-text", text]);

    // Assert: every row skipped, nothing changed
    assert_eq!(counts(&again), "imported 0, skipped 3 (existing 3, suppressed 0), refused 0");
    assert_eq!(fx.dump(), imported, "nothing changed, row by row");
}

#[test]
fn two_texts_without_versions_get_two_derived_versions_each_recorded_with_its_text() {
    // Arrange: a consent_text column, no consent_version column
    let fx = Fixture::new();
    let file = fx.file(
        "texts.csv",
        "email,consent_text\nann@example.com,Old wording.\nbob@example.com,New wording.\ncat@example.com,Old wording.\n",
    );

    // Act: a dry run, then the import
    let dry = fx.import(&file, &["--list", "news", "--dry-run"]);
    let output = fx.import(&file, &["--list", "news"]);

    // Assert
    assert_eq!(counts(&output), "imported 3, skipped 0 (existing 0, suppressed 0), refused 0");
    assert_eq!(counts(&dry), counts(&output));
    let (old, new) = (derived("Old wording."), derived("New wording."));
    assert_ne!(old, new);
    let versions: Vec<(String, String)> =
        fx.rows().into_iter().map(|(_, email, _, _, version, ..)| (email, version)).collect();
    assert_eq!(
        versions,
        [
            ("ann@example.com".to_owned(), old.clone()),
            ("bob@example.com".to_owned(), new.clone()),
            ("cat@example.com".to_owned(), old.clone()),
        ]
    );
    let mut expected = vec![(old, "Old wording.".to_owned()), (new, "New wording.".to_owned())];
    expected.sort();
    assert_eq!(consent_texts(&fx.database(), "news"), expected);
}

#[test]
fn consent_version_names_the_version_and_a_later_import_giving_it_another_text_writes_nothing() {
    // Arrange
    let fx = Fixture::new();
    let first = fx.file("first.csv", "email\nann@example.com\nbob@example.com\n");
    let second = fx.file("second.csv", "email\ncat@example.com\ndan@example.com\n");

    // Act
    let named =
        fx.import(&first, &["--list", "news", "--consent-text", "Spring wording.", "--consent-version", "spring"]);

    // Assert: the flag's name, not a derived one
    assert_eq!(counts(&named), "imported 2, skipped 0 (existing 0, suppressed 0), refused 0");
    assert!(fx.rows().iter().all(|row| row.4 == "spring"), "{:?}", fx.rows());
    assert_eq!(consent_texts(&fx.database(), "news"), [("spring".to_owned(), "Spring wording.".to_owned())]);

    // Act: the same name with another text, as a dry run and for real
    let before = fx.dump();
    let args = ["--list", "news", "--consent-text", "Summer wording.", "--consent-version", "spring"];
    let dry = fx.import(&second, &[&args[..], &["--dry-run"][..]].concat());
    let refused = fx.import(&second, &args);

    // Assert: each row refused by its line, saying what to do; nothing written
    assert_eq!(counts(&refused), "imported 0, skipped 0 (existing 0, suppressed 0), refused 2");
    assert_eq!(counts(&dry), counts(&refused));
    let reason = "consent_text differs from the text recorded for consent_version spring (a version names one text: \
                  leave out --consent-version to have a version derived from each text, or name another)";
    assert_eq!(
        refusals(&refused),
        [format!("line 2: refused c***@example.com: {reason}"), format!("line 3: refused d***@example.com: {reason}")]
    );
    assert_eq!(fx.dump(), before, "nothing of the refused import written");
}

#[test]
fn consent_version_without_consent_text_names_the_files_one_wording_and_refuses_a_second() {
    // Arrange: every record carries its text; the third another one
    let fx = Fixture::new();
    let file = fx.file(
        "texts.jsonl",
        concat!(
            "{\"email\":\"ann@example.com\",\"consent_text\":\"Old wording.\"}\n",
            "{\"email\":\"bob@example.com\",\"consent_text\":\"Old wording.\"}\n",
            "{\"email\":\"cat@example.com\",\"consent_text\":\"Other wording.\"}\n",
        ),
    );

    // Act
    let output = fx.import(&file, &["--list", "news", "--consent-version", "old-tool"]);

    // Assert
    assert_eq!(counts(&output), "imported 2, skipped 0 (existing 0, suppressed 0), refused 1");
    let refused = refusals(&output);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].starts_with("line 3: refused c***@example.com: consent_text differs"), "{refused:?}");
    assert!(refused[0].contains("leave out --consent-version"), "{refused:?}");
    assert_eq!(consent_texts(&fx.database(), "news"), [("old-tool".to_owned(), "Old wording.".to_owned())]);
}

#[test]
fn a_bad_consent_version_is_a_usage_error_before_anything_is_written() {
    let fx = Fixture::new();
    let file = fx.file("list.csv", "email\nann@example.com\n");
    let before = fx.dump();
    let too_long = "v".repeat(65);
    for (case, version) in
        [("a space", "v 1"), ("empty", ""), ("65 characters", too_long.as_str()), ("not ASCII", "früh")]
    {
        for dry_run in [false, true] {
            let mut args = vec!["--list", "news", "--consent-text", "Yes.", "--consent-version", version];
            if dry_run {
                args.push("--dry-run");
            }

            let output = fx.import(&file, &args);

            let case = format!("{case} (dry run {dry_run})");
            let line = usage_error(&output, &case);
            assert!(line.contains("--consent-version"), "{case}: names the flag: {line}");
            assert_eq!(fx.dump(), before, "{case}: nothing written");
        }
    }
}

#[test]
fn the_format_comes_from_the_flag_or_the_extension_and_an_unknown_extension_is_a_usage_error() {
    let fx = Fixture::new();
    let jsonl = "{\"email\":\"ann@example.com\"}\n";
    let ndjson = fx.file("a.ndjson", jsonl);
    assert_eq!(
        counts(&fx.import(&ndjson, &["--list", "other", "--consent-text", "Yes."])),
        "imported 1, skipped 0 (existing 0, suppressed 0), refused 0"
    );

    let txt = fx.file("b.txt", "{\"email\":\"bob@example.com\"}\n");
    let before = fx.dump();
    let refused = fx.import(&txt, &["--list", "other", "--consent-text", "Yes."]);
    let line = usage_error(&refused, "an unknown extension");
    assert!(line.contains("--format"), "names the flag: {line}");
    assert_eq!(fx.dump(), before);
    let flagged = fx.import(&txt, &["--list", "other", "--consent-text", "Yes.", "--format", "jsonl"]);
    assert_eq!(counts(&flagged), "imported 1, skipped 0 (existing 0, suppressed 0), refused 0");

    // A CSV without an email column cannot be read at all: exit 1, one line, nothing written.
    let no_email = fx.file("c.csv", "mail\nann@example.com\n");
    let before = fx.dump();
    let failed = fx.import(&no_email, &["--list", "other", "--consent-text", "Yes."]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert_eq!(after_config_line(&stderr(&failed)).trim_end().lines().count(), 1, "{}", stderr(&failed));
    assert!(stderr(&failed).contains("no email column"), "{}", stderr(&failed));
    assert_eq!(fx.dump(), before);
    let missing = fx.import(&fx.dir.path().join("missing.csv"), &["--list", "other", "--consent-text", "Yes."]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
}

#[test]
fn a_reimport_changes_nothing_and_a_dry_run_writes_nothing_with_the_same_counts() {
    // Arrange: a file with a duplicate inside it; an address already pending on the list
    let fx = Fixture::new();
    let file = fx.file(
        "list.csv",
        "email,consent_text\nann@example.com,Yes please.\nbob@example.com,Yes please.\nANN@example.com,Yes please.\nx,Yes please.\n",
    );

    // Act: a dry run first, then the import
    let before = fx.dump();
    let dry = fx.import(&file, &["--list", "news", "--dry-run"]);
    assert_eq!(fx.dump(), before, "the dry run wrote nothing");
    let real = fx.import(&file, &["--list", "news"]);

    // Assert: the same counts; the later duplicate skipped as existing
    assert_eq!(counts(&dry), "imported 2, skipped 1 (existing 1, suppressed 0), refused 1");
    assert!(stdout(&dry).starts_with("dry run: nothing was written"), "{}", stdout(&dry));
    assert_eq!(counts(&real), counts(&dry));
    assert_eq!(refusals(&real), refusals(&dry));

    // Act: again, and a dry run of it
    let imported = fx.dump();
    let dry_again = fx.import(&file, &["--list", "news", "--dry-run"]);
    let again = fx.import(&file, &["--list", "news"]);

    // Assert: every row as it was
    assert_eq!(counts(&again), "imported 0, skipped 3 (existing 3, suppressed 0), refused 1");
    assert_eq!(counts(&dry_again), counts(&again));
    assert_eq!(fx.dump(), imported, "nothing changed, row by row");
}

#[test]
fn a_removed_address_is_suppressed_and_skipped_when_imported_again() {
    // Arrange: ann imported, then removed with the real `remove` command
    let fx = Fixture::new();
    let file = fx.file("list.csv", "email\nann@example.com\nbob@example.com\n");
    counts(&fx.import(&file, &["--list", "news", "--consent-text", "Yes."]));
    let removed = fx.run(&["remove", "ann@example.com", "--list", "news"]);
    assert!(removed.status.success(), "{}", stderr(&removed));

    // Act
    let dry = fx.import(&file, &["--list", "news", "--consent-text", "Yes.", "--dry-run"]);
    let before = fx.dump();
    let again = fx.import(&file, &["--list", "news", "--consent-text", "Yes."]);

    // Assert
    assert_eq!(counts(&again), "imported 0, skipped 2 (existing 1, suppressed 1), refused 0");
    assert_eq!(counts(&dry), counts(&again));
    assert_eq!(fx.dump(), before);
    let other = fx.import(&file, &["--list", "other", "--consent-text", "Yes."]);
    assert_eq!(counts(&other), "imported 2, skipped 0 (existing 0, suppressed 0), refused 0", "suppressed per list");
}

#[test]
fn a_bounced_or_complained_address_is_suppressed_on_every_list_and_skipped() {
    // Arrange: ann's mail bounced and bob complained, as relays report them (the every-list key)
    let fx = Fixture::new();
    let hash_key = signupd::config::secrets::read_secret(&fx.dir.path().join("data/hash_key")).unwrap();
    let conn = rusqlite::Connection::open(fx.database()).unwrap();
    for (email, reason) in [("ann@example.com", "bounced"), ("bob@example.com", "complained")] {
        let hash = signupd::storage::suppressions::every_list_hash(&hash_key, email);
        conn.execute(
            "INSERT INTO suppressions (hash, reason, created_at, list_id) VALUES (?1, ?2, 0, '*')",
            [&hash, reason],
        )
        .unwrap();
    }
    drop(conn);
    let file = fx.file("list.csv", "email\nann@example.com\nbob@example.com\ncat@example.com\n");

    for list in ["news", "other"] {
        // Act
        let dry = fx.import(&file, &["--list", list, "--consent-text", "Yes.", "--dry-run"]);
        let real = fx.import(&file, &["--list", list, "--consent-text", "Yes."]);

        // Assert: on each list, only cat
        assert_eq!(counts(&real), "imported 1, skipped 2 (existing 0, suppressed 2), refused 0", "{list}");
        assert_eq!(counts(&dry), counts(&real), "{list}");
    }
    let emails: Vec<String> = fx.rows().into_iter().map(|row| row.1).collect();
    assert_eq!(emails, ["cat@example.com", "cat@example.com"]);
}

/// Writes a CSV of `rows` addresses, with a consent version given in the file (the way an export
/// from another tool names its wording).
fn long_file(dir: &Path, name: &str, rows: usize) -> PathBuf {
    use std::io::Write;
    let path = dir.join(name);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(file, "email,confirmed_at,source,tags,consent_version").unwrap();
    for n in 0..rows {
        writeln!(file, "subscriber-{n:07}@example.com,2025-01-01T00:00:00Z,old-site,beta,import-2025").unwrap();
    }
    file.flush().unwrap();
    path
}

/// The peak resident memory of a command in KiB, as GNU time measures it.
fn peak_kib(fx: &Fixture, file: &Path) -> u64 {
    let report = fx.dir.path().join("time.txt");
    let output = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_signupd"))
        .arg("import")
        .arg(file)
        .args(["--list", "news", "--consent-text", "Yes.", "--config"])
        .arg(&fx.config)
        .env_remove("RUST_LOG")
        .output()
        .expect("GNU time (/usr/bin/time, Debian package time)");
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::read_to_string(&report).unwrap().trim().lines().last().unwrap().parse().unwrap()
}

#[test]
fn a_long_file_is_streamed_in_constant_memory() {
    // Arrange: 1,000 and 100,000 rows
    let fx = Fixture::new();
    let small = long_file(fx.dir.path(), "small.csv", 1_000);
    let large = long_file(fx.dir.path(), "large.csv", 100_000);

    // Act
    let small_peak = peak_kib(&fx, &small);
    let large_peak = peak_kib(&fx, &large);

    // Assert: a hundred times the rows, about the same memory (collecting the rows would add
    // tens of MiB)
    assert_eq!(count(&read_only(&fx.database()), "SELECT count(*) FROM subscribers"), 100_000);
    assert!(
        large_peak <= small_peak * 3 / 2 + 4 * 1024,
        "peak RSS {large_peak} KiB for 100,000 rows against {small_peak} KiB for 1,000"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_runs_beside_serve_taking_signups_and_its_rows_export_and_unsubscribe_like_any_other() {
    // Arrange: a server with a webhook endpoint (one that refuses connections, so its events
    // stay queued where they can be counted), and a file of 50,000 rows
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("webhook_secret");
    std::fs::write(&secret, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n").unwrap();
    let webhook =
        format!("[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret_file = {secret:?}\n");
    let config_path = config(dir.path(), 1_000_000, &format!("{webhook}{LISTS}"));
    let server = serve(&config_path);
    let http = client();
    let file = long_file(dir.path(), "list.csv", 50_000);

    // Act: the import, while signups go on until it ended
    let mut import = signupd();
    import
        .arg("import")
        .arg(&file)
        .args(["--list", "news", "--consent-text", "Yes."])
        .arg("--config")
        .arg(&config_path);
    let importing = tokio::task::spawn_blocking(move || import.output().unwrap());
    let mut signups = Vec::new();
    let started = Instant::now();
    while !importing.is_finished() {
        let email = format!("live-{}@example.org", signups.len());
        let response = http
            .post(server.url("/api/signup"))
            .form(&[("email", email.as_str()), ("consent", "yes"), ("list", "news")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "signup {} during the import", signups.len());
        signups.push(email);
        assert!(started.elapsed() < Duration::from_secs(600), "the import never ended");
    }
    let output = importing.await.unwrap();

    // Assert: every row imported, every signup recorded
    assert_eq!(counts(&output), "imported 50000, skipped 0 (existing 0, suppressed 0), refused 0");
    assert!(signups.len() > 10, "signups ran during the import: {}", signups.len());
    let database = dir.path().join("data/signupd.sqlite3");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let conn = read_only(&database);
        let live = count(&conn, "SELECT count(*) FROM subscribers WHERE email LIKE 'live-%'");
        if live == i64::try_from(signups.len()).unwrap() {
            break;
        }
        assert!(Instant::now() < deadline, "{live} of {} signups have a row", signups.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let conn = read_only(&database);
    assert_eq!(count(&conn, "SELECT count(*) FROM subscribers WHERE confirm_method = 'import'"), 50_000);
    assert_eq!(count(&conn, "SELECT count(*) FROM webhook_deliveries"), 0, "no event for an imported row");
    let mailed = "SELECT count(*) FROM outbox JOIN subscribers ON subscribers.id = outbox.subscriber_id
                  WHERE subscribers.confirm_method = 'import'";
    assert_eq!(count(&conn, mailed), 0, "no mail for an imported row");
    let mail_files = std::fs::read_dir(dir.path().join("data/mail")).map_or(0, Iterator::count);
    assert!(mail_files <= signups.len(), "{mail_files} mails for {} signups", signups.len());

    // Arrange: three more imported rows confirmed now, so inside every window of `stats`
    let recent = dir.path().join("recent.jsonl");
    std::fs::write(
        &recent,
        (0..3)
            .map(|n| format!("{{\"email\":\"recent-{n}@example.com\",\"source\":\"recent-import\"}}\n"))
            .chain(std::iter::once("{\"email\":\"live-0@example.org\"}\n".to_owned()))
            .collect::<String>(),
    )
    .unwrap();
    let mut recent_import = signupd();
    recent_import
        .arg("import")
        .arg(&recent)
        .args(["--list", "news", "--consent-text", "Yes."])
        .arg("--config")
        .arg(&config_path);
    // `serve` recorded the list's own text for its version v1: another text under v1 is refused.
    let refused = recent_import.args(["--consent-version", "v1"]).output().unwrap();
    assert_eq!(counts(&refused), "imported 0, skipped 0 (existing 0, suppressed 0), refused 4");
    assert!(refusals(&refused)[0].contains("differs from the text recorded for consent_version v1"));
    // Without --consent-version the text names its own version, whatever the list's is.
    let mut recent_import = signupd();
    recent_import.arg("import").arg(&recent).args(["--list", "news", "--consent-text", "Yes."]);
    let recent_output = recent_import.arg("--config").arg(&config_path).output().unwrap();
    assert_eq!(counts(&recent_output), "imported 3, skipped 1 (existing 1, suppressed 0), refused 0");
    let pending: String = read_only(&database)
        .query_row(
            "SELECT status || ' ' || ifnull(confirm_method, '-') FROM subscribers WHERE email = 'live-0@example.org'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(pending, "pending -", "an existing pending row is never changed");

    // Assert: stats keep the imports apart from the signups, which it reads from the status
    // page's rollups: the server stores them every few seconds
    let deadline = Instant::now() + Duration::from_secs(60);
    let accepted = "SELECT coalesce(sum(value), 0) FROM rollups WHERE list = 'news' AND series = 'signups.accepted'";
    while count(&read_only(&database), accepted) < i64::try_from(signups.len()).unwrap() {
        assert!(Instant::now() < deadline, "the accepted signups never reached the rollups");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let table = signupd().args(["stats", "--config"]).arg(&config_path).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let row: Vec<&str> = table.lines().find(|line| line.starts_with("news ")).unwrap().split_whitespace().collect();
    let live = signups.len().to_string();
    // list, pending, confirmed, imported, unsub, not_me, signups24h, signups7d, confirm24h, confirm7d
    assert_eq!(row[..10], ["news", &live, "50003", "50003", "0", "0", &live, &live, "0", "0"], "{table}");
    assert!(!table.contains("recent-import") && !table.contains("old-site"), "no imported source: {table}");
    let stats = signupd().args(["stats", "--json", "--config"]).arg(&config_path).output().unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let news = &stats["lists"][0];
    assert_eq!(news["id"], "news");
    assert_eq!(news["confirmed"], 50_003);
    assert_eq!(news["imported"], 50_003);
    assert_eq!(news["signups"]["last_24h"], signups.len(), "{news}");
    assert_eq!(news["signups"]["last_7d"], signups.len(), "{news}");
    assert_eq!(news["confirmations"]["last_24h"], 0, "{news}");
    assert_eq!(news["confirmations"]["last_7d"], 0, "{news}");
    assert_eq!(news["confirmation_rate_7d"], 0.0, "{news}");
    assert_eq!(news["median_time_to_confirm_secs_7d"], Value::Null, "{news}");
    let sources: Vec<&Value> = news["sources_7d"].as_array().unwrap().iter().collect();
    assert!(
        sources.iter().all(|source| source["source"] != "old-site" && source["source"] != "recent-import"),
        "no imported source: {sources:?}"
    );

    // Act: export one imported row and post its one-click link
    let export = signupd()
        .args(["export", "--list", "news", "--format", "jsonl", "--config"])
        .arg(&config_path)
        .output()
        .unwrap();
    let first: Value = serde_json::from_str(String::from_utf8(export.stdout).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["email"], "subscriber-0000000@example.com");
    assert_eq!(first["confirm_method"], "import");
    assert_eq!(first["confirmed_at"], "2025-01-01T00:00:00Z");
    let link = url::Url::parse(first["unsubscribe_url"].as_str().unwrap()).unwrap();
    let response = http
        .post(server.url(&format!("{}?{}", link.path(), link.query().unwrap())))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();

    // Assert: the row is gone, its address suppressed
    assert_eq!(response.status(), 200);
    let conn = read_only(&database);
    assert_eq!(count(&conn, "SELECT count(*) FROM subscribers WHERE email = 'subscriber-0000000@example.com'"), 0);
    assert_eq!(count(&conn, "SELECT count(*) FROM suppressions WHERE list_id = 'news'"), 1);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM webhook_deliveries"),
        1,
        "leaving is real: the endpoint hears of it (and so would have heard of a confirmation)"
    );

    // Act: the manage page's removal, with the removal token a mail to the row would carry,
    // derived from the hash key as a signup's row's is
    let id: String = conn
        .query_row("SELECT id FROM subscribers WHERE email = 'subscriber-0000001@example.com'", [], |row| row.get(0))
        .unwrap();
    let hash_key = signupd::config::secrets::read_secret(&dir.path().join("data/hash_key")).unwrap();
    let token = signupd::config::tokens::RemovalToken::derive(&hash_key, &id);
    let manage = http.get(server.url(&format!("/manage?token={}", token.expose()))).send().await.unwrap();
    assert_eq!(manage.status(), 200, "the manage page knows the imported row");
    let removed = http.post(server.url("/api/manage")).form(&[("token", token.expose())]).send().await.unwrap();

    // Assert
    assert_eq!(removed.status(), 303);
    let location = removed.headers().get("location").unwrap().to_str().unwrap().to_owned();
    assert!(location.starts_with("/removed"), "{location}");
    let conn = read_only(&database);
    assert_eq!(count(&conn, "SELECT count(*) FROM subscribers WHERE email = 'subscriber-0000001@example.com'"), 0);
    assert_eq!(count(&conn, "SELECT count(*) FROM suppressions WHERE list_id = 'news'"), 2);
    drop(server);
}
