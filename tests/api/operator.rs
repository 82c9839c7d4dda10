//! The operator's commands — `export`, `remove`, `stats`, `backup` — run as the real binary
//! against a real SQLite file while `signupd serve` runs on it, and the Prometheus listener of
//! that server. Subscribers are put into their states the way visitors put them there: a signup
//! over HTTP, the confirmation mail the file transport writes, the confirm (or manage) POST with
//! the token from that mail.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use tempfile::TempDir;

use crate::helpers::{after_config_line, files_under, signupd};
use crate::process::{
    Served, Tokens, client, config, count, read_only, serve, spawn_serve, strings, tokens_by_recipient, unix_now,
};

/// Two lists; `news` with its own consent text, to find it in the export.
const LISTS: &str = "[[lists]]\nid = \"news\"\nconsent_text = \"News, now and then.\"\n[[lists]]\nid = \"other\"\n";
const NEWS_CONSENT: &str = "News, now and then.";

/// The CSV header, in the documented order.
pub const COLUMNS: [&str; 13] = [
    "email",
    "list",
    "status",
    "created_at",
    "confirmed_at",
    "confirm_method",
    "consent_version",
    "consent_text",
    "unsubscribe_url",
    "source",
    "tags",
    "fields",
    "language",
];

/// A config with both lists, the file transport, no rate limit to speak of, the given mail budget
/// and the metrics listener on `metrics_listen`.
fn operator_config(dir: &Path, max_mails_per_hour: u32, metrics_listen: &str) -> PathBuf {
    config(dir, max_mails_per_hour, &format!("[server]\nmetrics_listen = {metrics_listen:?}\n{LISTS}"))
}

/// `signupd serve` on a fresh data directory, and the ways a test acts on it.
struct Fixture {
    dir: TempDir,
    config: PathBuf,
    server: Served,
    client: reqwest::Client,
}

impl Fixture {
    fn start() -> Self {
        Self::with_budget(1000)
    }

    fn with_budget(max_mails_per_hour: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = operator_config(dir.path(), max_mails_per_hour, "127.0.0.1:0");
        let server = serve(&config);
        Self { dir, config, server, client: client() }
    }

    fn database(&self) -> PathBuf {
        self.dir.path().join("data/signupd.sqlite3")
    }

    fn mail_dir(&self) -> PathBuf {
        self.dir.path().join("data/mail")
    }

    /// A new directory in the test's temporary directory.
    fn new_dir(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir(&path).unwrap();
        path
    }

    /// `signupd ARGS --config PATH`, run off the async workers (the server keeps being used).
    async fn run(&self, args: &[&str]) -> Output {
        let mut command = signupd();
        command.args(args).arg("--config").arg(&self.config);
        tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
    }

    async fn sign_up(&self, email: &str, list: &str) {
        let response = self
            .client
            .post(self.server.url("/api/signup"))
            .form(&[("email", email), ("consent", "yes"), ("list", list)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "signup of {email} on {list}");
    }

    /// Waits until `email` got `mails` mails; the tokens of the newest.
    async fn mails_to(&self, email: &str, mails: usize) -> Tokens {
        let dir = self.mail_dir();
        eventually(&format!("{mails} mail(s) to {email}"), || {
            tokens_by_recipient(&dir).remove(email).filter(|tokens| tokens.mails >= mails)
        })
        .await
    }

    async fn confirm(&self, token: &str) {
        let response =
            self.client.post(self.server.url("/api/confirm")).form(&[("token", token)]).send().await.unwrap();
        assert_eq!(response.status(), 303);
        assert!(location(&response).starts_with("/confirmed"), "{:?}", location(&response));
    }

    /// Removes through the manage page's button.
    async fn remove_by_manage(&self, token: &str) {
        let response = self.client.post(self.server.url("/api/manage")).form(&[("token", token)]).send().await.unwrap();
        assert_eq!(response.status(), 303);
        assert!(location(&response).starts_with("/removed"), "{:?}", location(&response));
    }

    /// A pending subscriber whose confirmation mail was written.
    async fn pending(&self, email: &str, list: &str) -> Tokens {
        self.sign_up(email, list).await;
        self.mails_to(email, 1).await
    }

    /// A confirmed subscriber whose welcome mail was written.
    async fn confirmed(&self, email: &str, list: &str) -> Tokens {
        let tokens = self.pending(email, list).await;
        self.confirm(tokens.confirm.as_deref().unwrap()).await;
        self.mails_to(email, 2).await
    }

    /// Waits until the intake and mail queues are empty.
    async fn idle(&self) {
        let database = self.database();
        eventually("empty intake and mail queues", || {
            let conn = read_only(&database);
            (count(&conn, "SELECT count(*) FROM intake") == 0 && count(&conn, "SELECT count(*) FROM outbox") == 0)
                .then_some(())
        })
        .await;
    }

    /// The status of `email`'s row on `list`, if it has one.
    fn status(&self, list: &str, email: &str) -> Option<String> {
        use rusqlite::OptionalExtension;
        read_only(&self.database())
            .query_row("SELECT status FROM subscribers WHERE list_id = ?1 AND email = ?2", [list, email], |row| {
                row.get(0)
            })
            .optional()
            .unwrap()
    }

    fn count(&self, sql: &str) -> i64 {
        count(&read_only(&self.database()), sql)
    }
}

fn location(response: &reqwest::Response) -> String {
    response.headers().get("location").and_then(|value| value.to_str().ok()).unwrap_or("").to_owned()
}

/// Polls `probe` until it gives a value (30 s at most).
async fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit 0, or the failure with its stderr.
fn succeeded(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
}

/// Exit 1 with exactly one line on stderr, which is returned.
fn failed_with_one_line(output: &Output) -> String {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    let stderr = after_config_line(&stderr).to_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("signupd: error: "), "{stderr:?}");
    stderr
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// ---------------------------------------------------------------------------------------------
// export

/// One exported record, as strings: a JSON `null` becomes `None`, the `tags` array its tags
/// joined by a space, as the CSV cell holds them, and the `fields` object its JSON text (`None`
/// when empty, as the CSV cell is).
pub type Record = BTreeMap<String, Option<String>>;

pub fn json_record(value: &Value) -> Record {
    let object = value.as_object().unwrap_or_else(|| panic!("not an object: {value}"));
    let keys: BTreeSet<&str> = object.keys().map(String::as_str).collect();
    assert_eq!(keys, COLUMNS.into_iter().collect::<BTreeSet<_>>(), "the fields of {value}");
    object
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Value::Array(tags) if key == "tags" => Some(
                    tags.iter()
                        .map(|tag| tag.as_str().unwrap_or_else(|| panic!("tags: not a string: {tag}")))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                Value::Object(fields) if key == "fields" => (!fields.is_empty()).then(|| value.to_string()),
                Value::Null if key != "tags" && key != "fields" => None,
                Value::String(text) if key != "tags" && key != "fields" => Some(text.clone()),
                other => panic!("{key}: not a string or null (tags: an array of strings; fields an object): {other}"),
            };
            (key.clone(), value)
        })
        .collect()
}

pub fn parse_json(output: &Output) -> Vec<Record> {
    succeeded(output);
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    value.as_array().unwrap().iter().map(json_record).collect()
}

pub fn parse_jsonl(output: &Output) -> Vec<Record> {
    succeeded(output);
    stdout(output).lines().map(|line| json_record(&serde_json::from_str(line).unwrap())).collect()
}

/// CSV rows as cells by column name; the header must be the documented one.
pub fn parse_csv(output: &Output) -> Vec<BTreeMap<String, String>> {
    succeeded(output);
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, COLUMNS, "the CSV header");
    reader
        .records()
        .map(|record| header.iter().cloned().zip(record.unwrap().iter().map(str::to_owned)).collect())
        .collect()
}

/// The emails of `records`, in order.
fn emails(records: &[Record]) -> Vec<String> {
    records.iter().map(|record| record["email"].clone().unwrap()).collect()
}

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items
}

/// The record without its `unsubscribe_url`, which is signed with the time of each export.
fn without_url(record: &Record) -> Record {
    let mut record = record.clone();
    record.remove("unsubscribe_url");
    record
}

/// The path and query of an exported `unsubscribe_url`, to post to the test's server (the links
/// name `server.public_url`, not the test's port).
fn path_and_query(link: &str) -> String {
    let url = url::Url::parse(link).unwrap();
    format!("{}?{}", url.path(), url.query().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_gives_the_same_records_as_csv_json_and_json_lines_filters_them_and_its_unsubscribe_links_work() {
    // Arrange: on news two confirmed (one an address a spreadsheet would run as a formula) and
    // one pending; on other one confirmed
    let fx = Fixture::start();
    let started = unix_now();
    join_all([
        fx.confirmed("ann@example.com", "news"),
        fx.confirmed("=sum@example.com", "news"),
        fx.confirmed("cat@example.com", "other"),
    ])
    .await;
    fx.pending("bob@example.com", "news").await;
    fx.idle().await;

    // Act: the default export (confirmed rows of every list) in each format
    let csv_rows = parse_csv(&fx.run(&["export"]).await);
    let json = parse_json(&fx.run(&["export", "--format", "json"]).await);
    let jsonl = parse_jsonl(&fx.run(&["export", "--format", "jsonl"]).await);

    // Assert: the confirmed rows, the same in all three formats
    assert_eq!(
        sorted(emails(&json)),
        ["=sum@example.com", "ann@example.com", "cat@example.com"],
        "confirmed rows of every list"
    );
    assert_eq!(json.iter().map(without_url).collect::<Vec<_>>(), jsonl.iter().map(without_url).collect::<Vec<_>>());
    assert_eq!(csv_rows.len(), json.len());
    for (csv_row, record) in csv_rows.iter().zip(&json) {
        for column in COLUMNS {
            let value = record[column].clone().unwrap_or_default();
            let cell = &csv_row[column];
            if column == "unsubscribe_url" {
                assert!(cell.contains("/api/unsubscribe?token="), "{cell:?}");
            } else if value.starts_with('=') {
                assert_eq!(*cell, format!("'{value}"), "a formula cell gets a leading '");
            } else {
                assert_eq!(*cell, value, "{column} of {:?}", record["email"]);
            }
        }
    }
    let sum = csv_rows.iter().find(|row| row["email"].contains("sum@")).unwrap();
    assert_eq!(sum["email"], "'=sum@example.com");
    assert_eq!(sum["list"], "news");
    assert!(!stdout(&fx.run(&["export"]).await).lines().any(|line| line.starts_with('=')), "no cell starts with =");

    // Assert: each record's fields
    for record in &json {
        let field = |name: &str| record[name].clone();
        let email = field("email").unwrap();
        assert_eq!(field("status").as_deref(), Some("confirmed"), "{email}");
        assert_eq!(field("list").as_deref(), Some(if email == "cat@example.com" { "other" } else { "news" }));
        assert_eq!(field("confirm_method").as_deref(), Some("button"), "{email}");
        assert_eq!(field("consent_version").as_deref(), Some("v1"), "{email}");
        if email != "cat@example.com" {
            assert_eq!(field("consent_text").as_deref(), Some(NEWS_CONSENT), "{email}");
        }
        for time in ["created_at", "confirmed_at"] {
            let text = field(time).unwrap_or_else(|| panic!("{email}: no {time}"));
            let at = chrono::DateTime::parse_from_rfc3339(&text).unwrap().timestamp();
            assert!(text.ends_with('Z') && (started - 1..=unix_now()).contains(&at), "{email} {time}: {text}");
        }
        let link = field("unsubscribe_url").unwrap();
        assert!(link.starts_with("http://127.0.0.1:8080/api/unsubscribe?token="), "{link}");
    }

    // Act + Assert: filters
    let all = parse_json(&fx.run(&["export", "--format", "json", "--status", "all"]).await);
    assert_eq!(sorted(emails(&all)), ["=sum@example.com", "ann@example.com", "bob@example.com", "cat@example.com"]);
    let pending = parse_json(&fx.run(&["export", "--format", "json", "--status", "pending"]).await);
    assert_eq!(emails(&pending), ["bob@example.com"]);
    assert_eq!(pending[0]["confirmed_at"], None);
    assert_eq!(pending[0]["unsubscribe_url"], None, "no unsubscribe link for a pending row");
    let other = parse_json(&fx.run(&["export", "--format", "json", "--list", "other"]).await);
    assert_eq!(emails(&other), ["cat@example.com"]);
    let news_all = parse_json(&fx.run(&["export", "--format", "json", "--list", "news", "--status", "all"]).await);
    assert_eq!(sorted(emails(&news_all)), ["=sum@example.com", "ann@example.com", "bob@example.com"]);
    let future = fx.run(&["export", "--status", "all", "--since", "2999-01-01"]).await;
    assert_eq!(parse_csv(&future).len(), 0, "nothing was created after 2999");
    assert!(stderr(&future).contains("exported 0 record(s)"), "{}", stderr(&future));
    let past = parse_jsonl(&fx.run(&["export", "--format", "jsonl", "--status", "all", "--since", "2000-01-01"]).await);
    assert_eq!(past.len(), 4, "everything was created after 2000");
    // A signup after a given second is the only one --since that second gives.
    let since = unix_now() + 1;
    tokio::time::sleep(Duration::from_millis(u64::try_from(since * 1000).unwrap() - now_millis() + 10)).await;
    fx.pending("late@example.com", "news").await;
    let since = chrono::DateTime::from_timestamp(since, 0).unwrap().to_rfc3339();
    let late = parse_json(&fx.run(&["export", "--format", "json", "--status", "all", "--since", &since]).await);
    assert_eq!(emails(&late), ["late@example.com"], "--since {since}");

    // Act: the exported one-click link of ann, posted as a mail client would
    let ann = csv_rows.iter().find(|row| row["email"] == "ann@example.com").unwrap();
    let response = fx
        .client
        .post(fx.server.url(&path_and_query(&ann["unsubscribe_url"])))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();

    // Assert: 200, and ann alone is gone
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "Unsubscribed");
    assert_eq!(fx.status("news", "ann@example.com"), None);
    let after = parse_json(&fx.run(&["export", "--format", "json", "--status", "all"]).await);
    assert_eq!(
        sorted(emails(&after)),
        ["=sum@example.com", "bob@example.com", "cat@example.com", "late@example.com"],
        "only the linked row is gone"
    );
}

fn now_millis() -> u64 {
    u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_output_is_a_new_0600_file_never_overwritten_and_bad_arguments_write_nothing() {
    // Arrange
    let fx = Fixture::start();
    futures_util::join!(fx.confirmed("ann@example.com", "news"), fx.pending("bob@example.com", "other"));
    let exports = fx.new_dir("exports");
    let out = exports.join("subscribers.jsonl");
    let out_arg = out.to_str().unwrap();

    // Act: an export to a new file
    let first = fx.run(&["export", "--status", "all", "--format", "jsonl", "--output", out_arg]).await;

    // Assert: the records are in the 0600 file, not on stdout
    succeeded(&first);
    assert_eq!(stdout(&first), "", "the records go to the file");
    assert!(stderr(&first).contains("exported 2 record(s)"), "{}", stderr(&first));
    assert_eq!(mode(&out), 0o600);
    let written = std::fs::read(&out).unwrap();
    let records: Vec<Record> = String::from_utf8(written.clone())
        .unwrap()
        .lines()
        .map(|line| json_record(&serde_json::from_str(line).unwrap()))
        .collect();
    assert_eq!(sorted(emails(&records)), ["ann@example.com", "bob@example.com"]);

    // Act + Assert: a second export to the same path fails and leaves the first file alone
    let second = fx.run(&["export", "--output", out_arg]).await;
    let line = failed_with_one_line(&second);
    assert!(line.contains("--output") && line.contains(out_arg) && line.contains("exists already"), "{line}");
    assert_eq!(std::fs::read(&out).unwrap(), written, "the first export is intact");
    assert_eq!(stdout(&second), "");

    // Act + Assert: an unknown list and an unreadable --since are named, and nothing is written
    let unknown_list = exports.join("unknown-list.csv");
    let bad_since = exports.join("bad-since.csv");
    for (args, named) in [
        (vec!["export", "--list", "nope", "--output", unknown_list.to_str().unwrap()], ["--list", "\"nope\""]),
        (vec!["export", "--list", "nope"], ["--list", "\"nope\""]),
        (vec!["export", "--since", "yesterday", "--output", bad_since.to_str().unwrap()], ["--since", "\"yesterday\""]),
        (vec!["export", "--since", "yesterday"], ["--since", "\"yesterday\""]),
    ] {
        let output = fx.run(&args).await;
        let line = failed_with_one_line(&output);
        assert!(named.iter().all(|part| line.contains(part)), "{args:?}: {line}");
        assert_eq!(stdout(&output), "", "{args:?}: nothing on stdout");
    }
    assert_eq!(files_under(&exports), ["subscribers.jsonl"], "no file for a failed export");
}

// ---------------------------------------------------------------------------------------------
// remove

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_suppresses_a_pending_address_for_good_and_a_confirmed_one_until_a_new_double_opt_in() {
    // Arrange: one pending and one confirmed address on news
    let fx = Fixture::start();
    let (_, confirmed) =
        futures_util::join!(fx.pending("pen@example.com", "news"), fx.confirmed("con@example.com", "news"));
    fx.idle().await;

    // Act: remove both by the command line
    let pending_removed = fx.run(&["remove", "pen@example.com"]).await;
    let confirmed_removed = fx.run(&["remove", "con@example.com", "--list", "news"]).await;

    // Assert: gone, suppressed as the manage page would, and the address never printed
    succeeded(&pending_removed);
    succeeded(&confirmed_removed);
    let (pending_out, confirmed_out) = (stdout(&pending_removed), stdout(&confirmed_removed));
    assert!(pending_out.contains("p***@example.com from list news (suppressed as not_me)"), "{pending_out}");
    assert!(confirmed_out.contains("c***@example.com from list news (suppressed as unsubscribed)"), "{confirmed_out}");
    assert!(!pending_out.contains("pen@") && !confirmed_out.contains("con@"), "{pending_out}{confirmed_out}");
    assert_eq!(fx.status("news", "pen@example.com"), None);
    assert_eq!(fx.status("news", "con@example.com"), None);
    assert_eq!(fx.count("SELECT count(*) FROM suppressions WHERE list_id = 'news' AND reason = 'not_me'"), 1);
    assert_eq!(fx.count("SELECT count(*) FROM suppressions WHERE list_id = 'news' AND reason = 'unsubscribed'"), 1);

    // Act: both sign up again
    fx.sign_up("pen@example.com", "news").await;
    fx.sign_up("con@example.com", "news").await;

    // Assert: the confirmed one gets a new confirmation mail with a new link, and can confirm
    let again = fx.mails_to("con@example.com", 3).await;
    let new_token = again.confirm.unwrap();
    assert_ne!(Some(&new_token), confirmed.confirm.as_ref(), "a new confirm link");
    assert_eq!(fx.status("news", "con@example.com").as_deref(), Some("pending"), "a new double opt-in");
    fx.confirm(&new_token).await;
    assert_eq!(fx.status("news", "con@example.com").as_deref(), Some("confirmed"));
    assert_eq!(fx.count("SELECT count(*) FROM suppressions WHERE reason = 'unsubscribed'"), 0, "lifted on confirm");

    // Assert: the not_me one got nothing: its signup was applied without a row or a mail
    fx.idle().await;
    assert_eq!(fx.status("news", "pen@example.com"), None);
    assert_eq!(tokens_by_recipient(&fx.mail_dir())["pen@example.com"].mails, 1, "no new mail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_refuses_a_malformed_address_without_repeating_it_and_says_when_nothing_matched() {
    // Arrange
    let fx = Fixture::start();
    fx.pending("ann@example.com", "news").await;

    // Act
    let malformed = fx.run(&["remove", "secret.person@@example.com"]).await;
    let unknown = fx.run(&["remove", "nobody@example.com"]).await;
    let unknown_list = fx.run(&["remove", "ann@example.com", "--list", "nope"]).await;

    // Assert: a malformed address is exit 1 with one line that does not contain it
    let line = failed_with_one_line(&malformed);
    assert!(line.contains("EMAIL"), "{line}");
    assert!(!line.contains("secret.person"), "the input is repeated: {line}");
    assert_eq!(stdout(&malformed), "");

    // Assert: an address nothing has is exit 0 and says so, masked
    succeeded(&unknown);
    let text = stdout(&unknown);
    assert!(text.contains("nothing matched n***@example.com"), "{text}");
    assert!(!text.contains("nobody@"), "{text}");

    // Assert: an unknown list is named, and ann is still there
    let line = failed_with_one_line(&unknown_list);
    assert!(line.contains("--list") && line.contains("\"nope\""), "{line}");
    assert_eq!(fx.status("news", "ann@example.com").as_deref(), Some("pending"));
    assert_eq!(fx.count("SELECT count(*) FROM suppressions"), 0);
}

#[actix_web::test]
async fn remove_takes_the_reason_as_stored_or_as_clap_spells_it_and_refuses_others_as_a_usage_error() {
    // Arrange
    let fx = Fixture::start();
    fx.confirmed("con@example.com", "news").await;
    fx.confirmed("two@example.com", "news").await;

    // Act
    let stored_spelling = fx.run(&["remove", "con@example.com", "--reason", "not_me"]).await;
    let clap_spelling = fx.run(&["remove", "two@example.com", "--reason", "not-me"]).await;
    let unknown = fx.run(&["remove", "con@example.com", "--reason", "spam"]).await;

    // Assert
    succeeded(&stored_spelling);
    succeeded(&clap_spelling);
    assert_eq!(fx.count("SELECT count(*) FROM suppressions WHERE reason = 'not_me'"), 2);
    assert_eq!(unknown.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("[possible values: unsubscribed, not_me]"));
}

// ---------------------------------------------------------------------------------------------
// stats

/// The hour of a Unix time, for the mail budget (counted per clock hour).
fn hour(time: i64) -> i64 {
    time.div_euclid(3600)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_counts_each_list_the_queues_the_mail_budget_and_the_last_cleanup() {
    // Arrange: on news two pending, one confirmed, one unsubscribed; on other two pending, the
    // second with its mail held back by the budget (7 mails: 5 confirmations and 2 welcomes)
    let fx = Fixture::with_budget(7);
    let started = unix_now();
    let (_, _, _, unsubscribed, _) = futures_util::join!(
        fx.pending("p1@example.com", "news"),
        fx.pending("p2@example.com", "news"),
        fx.confirmed("c1@example.com", "news"),
        fx.confirmed("u1@example.com", "news"),
        fx.pending("o1@example.com", "other"),
    );
    fx.idle().await;
    fx.remove_by_manage(unsubscribed.manage.as_deref().unwrap()).await;
    fx.sign_up("o2@example.com", "other").await;
    eventually("o2's mail waiting for budget", || {
        (fx.count("SELECT count(*) FROM intake") == 0 && fx.count("SELECT count(*) FROM outbox") == 1).then_some(())
    })
    .await;
    // The status page's counts, which `stats` shares, reach the database every few seconds.
    eventually("the signups and confirmations in the rollups", || {
        let sum =
            |series: &str| fx.count(&format!("SELECT coalesce(sum(value), 0) FROM rollups WHERE series = '{series}'"));
        (sum("signups.accepted") == 6 && sum("confirmations") == 2).then_some(())
    })
    .await;

    // Act
    let json = fx.run(&["stats", "--json"]).await;
    let table = fx.run(&["stats"]).await;
    let same_hour = hour(started) == hour(unix_now());

    // Assert: per list
    succeeded(&json);
    let stats: Value = serde_json::from_slice(&json.stdout).unwrap();
    let lists = stats["lists"].as_array().unwrap();
    assert_eq!(lists.iter().map(|list| list["id"].as_str().unwrap()).collect::<Vec<_>>(), ["news", "other"]);
    let (news, other) = (&lists[0], &lists[1]);
    assert_eq!((news["pending"].as_i64(), news["confirmed"].as_i64()), (Some(2), Some(1)), "{news}");
    assert_eq!(news["imported"], 0, "{news}");
    assert_eq!(news["suppressed"], serde_json::json!({"unsubscribed": 1, "not_me": 0}), "{news}");
    // The unsubscribed row is gone, but its signup and confirmation happened: counted, as the
    // status page counts them (events, not rows); the cohort rate is of the 3 rows still held.
    assert_eq!(news["signups"], serde_json::json!({"last_24h": 4, "last_7d": 4}), "accepted signups: {news}");
    assert_eq!(news["confirmations"], serde_json::json!({"last_24h": 2, "last_7d": 2}), "{news}");
    let rate = news["confirmation_rate_7d"].as_f64().unwrap();
    assert!((rate - 1.0 / 3.0).abs() < 1e-9, "{rate}");
    let median = news["median_time_to_confirm_secs_7d"].as_i64().unwrap();
    assert!((0..60).contains(&median), "{median}");
    assert_eq!((other["pending"].as_i64(), other["confirmed"].as_i64()), (Some(2), Some(0)), "{other}");
    assert_eq!(other["suppressed"], serde_json::json!({"unsubscribed": 0, "not_me": 0}), "{other}");
    assert_eq!(other["signups"], serde_json::json!({"last_24h": 2, "last_7d": 2}), "{other}");
    assert_eq!(other["confirmation_rate_7d"].as_f64(), Some(0.0), "{other}");
    assert_eq!(other["median_time_to_confirm_secs_7d"], Value::Null, "{other}");

    // Assert: queues, budget, cleanup (the budget resets each clock hour: checked within one)
    let queues = stats["queues"].as_array().unwrap();
    assert_eq!(queues[0]["name"], "intake");
    assert_eq!(queues[0]["depth"], 0);
    assert_eq!(queues[0]["oldest_age_secs"], Value::Null);
    assert_eq!(queues[1]["name"], "mail");
    assert_eq!(queues[2]["name"], "webhook");
    assert_eq!(queues[2]["depth"], 0, "no webhook is configured");
    if same_hour {
        assert_eq!(queues[1]["depth"], 1, "o2's confirmation waits for budget");
        assert!(queues[1]["oldest_age_secs"].as_i64().is_some_and(|age| (0..60).contains(&age)), "{}", queues[1]);
        assert_eq!(stats["mail_budget"], serde_json::json!({"used_this_hour": 7, "max_per_hour": 7}));
    } else {
        eprintln!("the clock hour changed during the test: queue and budget figures not checked");
    }
    let cleanup = stats["last_cleanup_at"].as_str().expect("serve ran the cleanup at start");
    let cleanup = chrono::DateTime::parse_from_rfc3339(cleanup).unwrap().timestamp();
    assert!((started - 5..=unix_now()).contains(&cleanup), "{cleanup} vs start {started}");
    let generated = chrono::DateTime::parse_from_rfc3339(stats["generated_at"].as_str().unwrap()).unwrap();
    assert!((started..=unix_now()).contains(&generated.timestamp()));

    // Assert: the table has a row per list with the same figures
    succeeded(&table);
    let table = stdout(&table);
    let row = |id: &str| -> Vec<String> {
        let line = table.lines().find(|line| line.split_whitespace().next() == Some(id));
        line.unwrap_or_else(|| panic!("no row for {id}: {table}")).split_whitespace().map(str::to_owned).collect()
    };
    // list, pending, confirmed, imported (none here: `import.rs` has them), unsub, not_me, …
    assert_eq!(row("news")[..10], ["news", "2", "1", "0", "1", "0", "4", "4", "2", "2"], "{table}");
    assert_eq!(row("other")[..10], ["other", "2", "0", "0", "0", "0", "2", "2", "0", "0"], "{table}");
    for queue in ["intake", "mail", "webhook"] {
        assert!(table.contains(&format!("queue {queue}")), "{table}");
    }
    if same_hour {
        assert!(table.contains("mail budget this hour: 7 of 7"), "{table}");
    }
    assert!(table.contains("last cleanup: 20"), "{table}");
}

// ---------------------------------------------------------------------------------------------
// backup

const BACKUP_SIGNUPS: usize = 2000;

/// The names in `dir`, sorted (not recursive: `dir` may be `/sys`).
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A backup, opened as an immutable file: reading it leaves no `-wal` or `-shm` beside it.
fn open_copy(path: &Path) -> rusqlite::Connection {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    rusqlite::Connection::open_with_flags(format!("file:{}?immutable=1", path.display()), flags).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backup_taken_during_a_burst_of_signups_is_checked_private_and_holds_every_signup_acknowledged_before_it() {
    // Arrange: 2,000 signups posted concurrently; the mail budget keeps the mail workers quiet
    let fx = Fixture::with_budget(1);
    let dest = fx.new_dir("backups").join("copy.sqlite3");
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let permits = Arc::new(tokio::sync::Semaphore::new(32));
    let signup_url = fx.server.url("/api/signup");
    let tasks: Vec<_> = (0..BACKUP_SIGNUPS)
        .map(|i| {
            let (client, url) = (fx.client.clone(), signup_url.clone());
            let (acknowledged, permits) = (acknowledged.clone(), permits.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire().await.unwrap();
                let email = format!("burst-{i}@example.com");
                let response = client
                    .post(url)
                    .form(&[("email", email.as_str()), ("consent", "yes"), ("list", "news")])
                    .send()
                    .await
                    .unwrap();
                if response.status() == 303 {
                    acknowledged.lock().unwrap().push(email);
                }
            })
        })
        .collect();

    // Act: once about half were acknowledged, back up
    let burst_started = Instant::now();
    let before: BTreeSet<String> = eventually("half of the signups acknowledged", || {
        let acknowledged = acknowledged.lock().unwrap();
        (acknowledged.len() >= BACKUP_SIGNUPS / 2).then(|| acknowledged.iter().cloned().collect())
    })
    .await;
    let backup = fx.run(&["backup", dest.to_str().unwrap()]).await;
    for task in tasks {
        task.await.unwrap();
    }
    eprintln!("{BACKUP_SIGNUPS} signups in {:?}", burst_started.elapsed());

    // Assert: the backup worked, and the server acknowledged every signup meanwhile
    succeeded(&backup);
    assert!(stdout(&backup).starts_with(&format!("backup written to {}", dest.display())), "{}", stdout(&backup));
    assert_eq!(acknowledged.lock().unwrap().len(), BACKUP_SIGNUPS, "signups refused during the backup");
    let live = read_only(&fx.database());
    let stored = count(&live, "SELECT (SELECT count(*) FROM intake) + (SELECT count(*) FROM subscribers)");
    assert_eq!(stored, i64::try_from(BACKUP_SIGNUPS).unwrap());

    // Assert: the copy is private, sound, and holds what was acknowledged before it began
    assert_eq!(mode(&dest), 0o600);
    assert_eq!(files_under(dest.parent().unwrap()), ["copy.sqlite3"], "no temporary file left");
    let copy = open_copy(&dest);
    let verdict: String = copy.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(verdict, "ok");
    let copied = strings(&copy, "SELECT email FROM intake UNION SELECT email FROM subscribers");
    let missing: Vec<_> = before.difference(&copied).take(10).collect();
    assert!(missing.is_empty(), "acknowledged before the backup but not in it: {missing:?}");
    eprintln!("acknowledged before the backup: {}, in the copy: {}", before.len(), copied.len());
    assert!(copied.len() < BACKUP_SIGNUPS, "the backup was not taken while signups were still arriving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_replaces_dest_only_with_force_and_leaves_no_partial_file_where_it_cannot_finish() {
    // Arrange
    let fx = Fixture::start();
    fx.pending("ann@example.com", "news").await;
    let backups = fx.new_dir("backups");
    let dest = backups.join("copy.sqlite3");
    std::fs::write(&dest, "an older file").unwrap();
    let dest_arg = dest.to_str().unwrap();

    // Act + Assert: an existing DEST is refused without --force, and left alone
    let refused = fx.run(&["backup", dest_arg]).await;
    let line = failed_with_one_line(&refused);
    assert!(line.contains(dest_arg) && line.contains("--force"), "{line}");
    assert_eq!(std::fs::read(&dest).unwrap(), b"an older file");

    // Act + Assert: with --force it is replaced by a sound 0600 copy
    let forced = fx.run(&["backup", dest_arg, "--force"]).await;
    succeeded(&forced);
    assert!(stdout(&forced).contains("0 confirmed, 1 pending, 0 suppressions; integrity check ok"), "{}", {
        stdout(&forced)
    });
    assert_eq!(mode(&dest), 0o600);
    let copy = open_copy(&dest);
    assert_eq!(strings(&copy, "SELECT email FROM subscribers"), BTreeSet::from(["ann@example.com".to_owned()]));
    drop(copy);
    assert_eq!(files_under(&backups), ["copy.sqlite3"]);

    // Act + Assert: a directory it may not write in is exit 1, naming it, with nothing left.
    // Permission bits do not stop root: then /sys, where nobody creates files.
    let locked = fx.new_dir("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    let locked = if std::fs::write(locked.join("probe"), "").is_ok() { PathBuf::from("/sys") } else { locked };
    let before = names_in(&locked);
    let unwritable = fx.run(&["backup", locked.join("copy.sqlite3").to_str().unwrap()]).await;
    let line = failed_with_one_line(&unwritable);
    assert!(line.contains(&format!("cannot write in {}", locked.display())), "{line}");
    assert_eq!(names_in(&locked), before, "nothing left in {}", locked.display());

    // Act + Assert: a copy that cannot be moved into place (DEST is a directory) is removed
    let occupied = backups.join("occupied");
    std::fs::create_dir(&occupied).unwrap();
    let failed = fx.run(&["backup", occupied.to_str().unwrap(), "--force"]).await;
    let line = failed_with_one_line(&failed);
    assert!(line.contains("cannot move the backup into place"), "{line}");
    assert_eq!(files_under(&backups), ["copy.sqlite3", "occupied"], "the partial copy was removed");
}

// ---------------------------------------------------------------------------------------------
// metrics

/// One sample of the Prometheus text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line:?}"));
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.strip_suffix('}').unwrap_or_else(|| panic!("{line:?}"))),
                None => (series, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once("=\"").unwrap_or_else(|| panic!("{line:?}"));
                    (key.to_owned(), value.trim_end_matches('"').to_owned())
                })
                .collect();
            Sample { name: name.to_owned(), labels, value: value.parse().unwrap_or_else(|_| panic!("{line:?}")) }
        })
        .collect()
}

/// The sum of the samples of `name` that carry `labels` (among others); `None` when none does.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<f64> = samples
        .iter()
        .filter(|sample| {
            sample.name == name
                && labels.iter().all(|(key, value)| sample.labels.get(*key).map(String::as_str) == Some(value))
        })
        .map(|sample| sample.value)
        .collect();
    (!matching.is_empty()).then(|| matching.iter().sum())
}

async fn scrape(client: &reqwest::Client, port: u16) -> String {
    let response = client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_signups_confirmations_removals_and_mails_on_their_own_port_and_name_nobody() {
    // Arrange
    let fx = Fixture::start();
    let port = fx.server.metrics_port.expect("serve logs metrics_port");
    assert_ne!(port, fx.server.port);
    let before = samples(&scrape(&fx.client, port).await);

    // Act: a signup, its confirmation, its removal on the manage page; another signup left pending
    let first = fx.confirmed("mia@example.com", "news").await;
    fx.remove_by_manage(first.manage.as_deref().unwrap()).await;
    let second = fx.pending("pia@example.com", "news").await;
    fx.idle().await;
    let text = scrape(&fx.client, port).await;
    let after = samples(&text);

    // Assert: the counters moved by what happened
    let moved = |name: &str, labels: &[(&str, &str)], by: f64| {
        let was = value(&before, name, labels).unwrap_or(0.0);
        let is = value(&after, name, labels).unwrap_or_else(|| panic!("no {name} {labels:?} in:\n{text}"));
        assert_eq!(is - was, by, "{name} {labels:?}");
    };
    moved("signupd_signups_total", &[("list", "news"), ("outcome", "accepted")], 2.0);
    moved("signupd_confirmations_total", &[("list", "news"), ("method", "button")], 1.0);
    moved("signupd_removals_total", &[("list", "news"), ("reason", "unsubscribed"), ("via", "manage")], 1.0);
    moved("signupd_mails_total", &[("kind", "confirmation"), ("result", "sent")], 2.0);
    moved("signupd_mails_total", &[("kind", "welcome"), ("result", "sent")], 1.0);

    // Assert: the gauges read the database at scrape time
    let gauge = |name: &str, labels: &[(&str, &str)]| value(&after, name, labels);
    assert_eq!(gauge("signupd_subscribers", &[("list", "news"), ("status", "pending")]), Some(1.0));
    assert_eq!(gauge("signupd_subscribers", &[("list", "news"), ("status", "confirmed")]), Some(0.0));
    assert_eq!(gauge("signupd_subscribers", &[("list", "other"), ("status", "pending")]), Some(0.0));
    for queue in ["intake", "mail", "webhook"] {
        assert_eq!(gauge("signupd_queue_depth", &[("queue", queue)]), Some(0.0), "{queue}");
    }

    // Assert: histograms with buckets
    for histogram in [
        "signupd_http_request_duration_seconds",
        "signupd_smtp_send_duration_seconds",
        "signupd_time_to_confirm_seconds",
    ] {
        let infinity = value(&after, &format!("{histogram}_bucket"), &[("le", "+Inf")]);
        assert!(infinity.is_some_and(|count| count >= 1.0), "{histogram}: {infinity:?}\n{text}");
    }
    assert!(value(&after, "signupd_http_request_duration_seconds_bucket", &[("route", "/api/signup")]).is_some());

    // Assert: no address, no client IP, no token
    assert!(!text.contains('@'), "{text}");
    assert!(!text.contains("127.0.0.1"), "{text}");
    assert!(!text.contains("mia") && !text.contains("pia"), "{text}");
    for token in [first.confirm, first.manage, second.confirm, second.manage].into_iter().flatten() {
        assert!(!text.contains(&token), "a token in the metrics");
    }

    // Assert: the public listener does not serve them
    let public = fx.client.get(fx.server.url("/metrics")).send().await.unwrap();
    assert_eq!(public.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_scrape_describes_every_metric_and_has_every_counter_at_zero() {
    // Regression (issue "Heard the first time"): a counter that first appears at 1 is invisible
    // to Prometheus's increase(), so the guide's alerts fired only on the second failure.
    // Arrange: a server that has seen nothing
    let fx = Fixture::start();
    let port = fx.server.metrics_port.expect("serve logs metrics_port");

    // Act
    let text = scrape(&fx.client, port).await;
    let first = samples(&text);

    // Assert: # HELP and # TYPE for every metric of the guide's table
    let described = |prefix: &str| -> BTreeSet<&str> {
        text.lines().filter_map(|line| line.strip_prefix(prefix)?.split(' ').next()).collect()
    };
    let (help, types) = (described("# HELP "), described("# TYPE "));
    assert_eq!(help, types, "a metric without help text, or help without a type:\n{text}");
    for metric in [
        "signupd_signups_total",
        "signupd_confirmations_total",
        "signupd_removals_total",
        "signupd_mails_total",
        "signupd_surge_alerts_total",
        "signupd_webhooks_total",
        "signupd_relay_events_total",
        "signupd_api_auth_failures_total",
        "signupd_queue_depth",
        "signupd_queue_oldest_seconds",
        "signupd_subscribers",
        "signupd_smtp_send_duration_seconds",
        "signupd_time_to_confirm_seconds",
    ] {
        assert!(help.contains(metric), "{metric} is not described in the first scrape:\n{text}");
    }

    // Assert: every counter at 0, for each list and each label value the guide names
    let zero = |name: &str, labels: &[(&str, &str)]| {
        assert_eq!(value(&first, name, labels), Some(0.0), "{name} {labels:?} in the first scrape:\n{text}");
    };
    for list in ["news", "other"] {
        for outcome in ["accepted", "honeypot", "invalid_email", "rate_limited", "storage_unavailable"] {
            zero("signupd_signups_total", &[("list", list), ("outcome", outcome)]);
        }
        for outcome in signupd::metrics::series::SIGNUP_OUTCOMES {
            zero("signupd_signups_total", &[("list", list), ("outcome", outcome)]);
        }
        for method in ["button", "retype", "preferences"] {
            zero("signupd_confirmations_total", &[("list", list), ("method", method)]);
        }
        for reason in ["unsubscribed", "not_me"] {
            for via in ["manage", "one_click"] {
                zero("signupd_removals_total", &[("list", list), ("reason", reason), ("via", via)]);
            }
        }
        for reason in ["bounced", "complained"] {
            zero("signupd_removals_total", &[("list", list), ("reason", reason), ("via", "relay")]);
            assert_eq!(
                value(&first, "signupd_removals_total", &[("list", list), ("reason", reason), ("via", "manage")]),
                None
            );
        }
        zero("signupd_surge_alerts_total", &[("list", list)]);
        zero("signupd_time_to_confirm_seconds_count", &[("list", list)]);
    }
    zero("signupd_signups_total", &[("list", "none"), ("outcome", "unknown_list")]);
    for surface in ["api", "admin"] {
        zero("signupd_api_auth_failures_total", &[("surface", surface)]);
    }
    assert_eq!(value(&first, "signupd_signups_total", &[("list", "none"), ("outcome", "accepted")]), None);
    for kind in ["confirmation", "welcome"] {
        for result in ["sent", "retry", "failed"] {
            zero("signupd_mails_total", &[("kind", kind), ("result", result)]);
        }
    }
    zero("signupd_mails_total", &[("kind", "confirmation"), ("result", "capped")]);
    for result in ["delivered", "retry", "dropped"] {
        zero("signupd_webhooks_total", &[("result", result)]);
    }
    // No relay is configured: a refusal at send time is the only source of relay events.
    for event in ["hard_bounce", "soft_bounce", "policy", "complaint", "ignored"] {
        zero("signupd_relay_events_total", &[("relay", "smtp"), ("event", event)]);
    }
    zero("signupd_smtp_send_duration_seconds_count", &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exits_1_naming_server_metrics_listen_when_its_port_is_taken() {
    // Arrange: the metrics port is held by someone else
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let config = operator_config(dir.path(), 1000, &address);

    // Act
    let mut server = spawn_serve(&config);
    let status = server.exit_within(Duration::from_secs(30)).await.expect("serve exits");

    // Assert
    assert_eq!(status.code(), Some(1), "{status:?}");
    let lines = server.remaining_stderr();
    assert!(!lines.iter().any(|line| line.contains("signupd is listening")), "{lines:?}");
    let errors: Vec<_> = lines.iter().filter(|line| line.starts_with("signupd: error: ")).collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert!(errors[0].contains("server.metrics_listen") && errors[0].contains(&address), "{}", errors[0]);
    drop(taken);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_fails_with_one_line_while_another_process_holds_the_write_lock_and_changes_nothing() {
    // Arrange: a pending address, and a third process holding the database's write lock
    let fx = Fixture::start();
    fx.pending("ann@example.com", "news").await;
    fx.idle().await;
    let blocker = rusqlite::Connection::open(fx.database()).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE; DELETE FROM rate_limits WHERE 0").unwrap();

    // Act
    let blocked = fx.run(&["remove", "ann@example.com"]).await;
    blocker.execute_batch("ROLLBACK").unwrap();

    // Assert: exit 1, one line that says why, and the row untouched
    let line = failed_with_one_line(&blocked);
    assert!(line.contains("cannot be written") && line.contains("locked"), "{line}");
    assert!(!line.contains("ann@"), "{line}");
    assert_eq!(fx.status("news", "ann@example.com").as_deref(), Some("pending"));
    assert_eq!(fx.count("SELECT count(*) FROM suppressions"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_rides_out_a_removal_by_the_command_line_without_a_failed_request() {
    // Arrange: an address to remove while signups keep arriving
    let fx = Fixture::start();
    fx.pending("ann@example.com", "news").await;
    fx.idle().await;

    // Act: 300 signups over HTTP while the command line removes, both writing the one file
    let signups = (0..300).map(|n| {
        fx.client
            .post(fx.server.url("/api/signup"))
            .form(&[("email", format!("wave{n}@example.com")), ("consent", "yes".into()), ("list", "news".into())])
            .send()
    });
    let (answers, removed) =
        futures_util::join!(futures_util::future::join_all(signups), fx.run(&["remove", "ann@example.com"]));

    // Assert: every signup acknowledged, the removal done
    succeeded(&removed);
    let statuses: Vec<u16> = answers.into_iter().map(|answer| answer.unwrap().status().as_u16()).collect();
    assert!(statuses.iter().all(|status| *status == 303), "{statuses:?}");
    assert_eq!(fx.status("news", "ann@example.com"), None);
}
