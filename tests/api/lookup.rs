//! `signupd lookup` (a subject access request) and the audit log (`signupd audit`), as the real
//! binary beside a running `signupd serve` on a real SQLite file: what lookup shows of an
//! address in each state, that it writes nothing but its audit entry, and that every operator
//! command appends one entry that names the address only by its keyed hash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::helpers::signupd;
use crate::process::{Served, client, config, count, read_only, serve, tokens_by_recipient};

const ANN: &str = "ann@example.com";
const LISTS: &str = "[[lists]]\nid = \"news\"\nconsent_text = \"News, now and then.\"\n[[lists]]\nid = \"other\"\n";

struct Fixture {
    dir: TempDir,
    config: PathBuf,
    server: Served,
}

impl Fixture {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 1000, LISTS);
        let server = serve(&config);
        let fixture = Self { dir, config, server };
        // The cleanup runs once at start and writes when it ran: wait for it, so that what a
        // test counts before and after is not changed by it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while count(&read_only(&fixture.database()), "SELECT count(*) FROM service_runs") == 0 {
            assert!(Instant::now() < deadline, "the start-up cleanup did not run");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        fixture
    }

    fn database(&self) -> PathBuf {
        self.dir.path().join("data/signupd.sqlite3")
    }

    async fn run(&self, args: &[&str]) -> Output {
        let mut command = signupd();
        command.args(args).arg("--config").arg(&self.config);
        tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
    }

    async fn sign_up(&self, email: &str, list: &str) {
        let response = client()
            .post(self.server.url("/api/signup"))
            .form(&[("email", email), ("consent", "yes"), ("list", list), ("source", "footer")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303);
    }

    /// Waits for `mails` mails to `email`; the newest one's confirm token.
    async fn mailed(&self, email: &str, mails: usize) -> Option<String> {
        let dir = self.dir.path().join("data/mail");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(tokens) = tokens_by_recipient(&dir).remove(email).filter(|tokens| tokens.mails >= mails) {
                return tokens.confirm;
            }
            assert!(Instant::now() < deadline, "no mail to {email}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the mail queue is empty: a mail's file is written before its queue row is
    /// deleted, so a count taken as soon as the file appears may still see the row.
    async fn settled(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while count(&read_only(&self.database()), "SELECT count(*) FROM outbox") > 0 {
            assert!(Instant::now() < deadline, "the mail queue did not empty");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Every table's row count.
    fn counts(&self) -> BTreeMap<String, i64> {
        let conn = read_only(&self.database());
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        tables
            .into_iter()
            .map(|table| (table.clone(), count(&conn, &format!("SELECT count(*) FROM {table}"))))
            .collect()
    }

    /// `signupd audit --json`, parsed.
    async fn audit(&self, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["audit", "--json"];
        args.extend_from_slice(extra);
        let output = self.run(&args).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(!text.contains(ANN) && !text.contains("ann@"), "the audit log holds no address: {text}");
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

async fn confirm(server: &Served, token: &str) {
    let response = client().post(server.url("/api/confirm")).form(&[("token", token)]).send().await.unwrap();
    assert_eq!(response.status(), 303);
}

fn database_is(path: &Path) -> bool {
    path.exists()
}

#[tokio::test]
async fn lookup_shows_every_record_of_an_address_and_writes_nothing_but_its_audit_entry() {
    // Arrange: Ann confirmed on news (with its welcome mail sent), pending on other
    let fixture = Fixture::start().await;
    fixture.sign_up(ANN, "news").await;
    let token = fixture.mailed(ANN, 1).await.expect("a confirm link");
    confirm(&fixture.server, &token).await;
    fixture.mailed(ANN, 2).await;
    fixture.sign_up(ANN, "other").await;
    fixture.mailed(ANN, 3).await;
    fixture.settled().await;
    let before = fixture.counts();

    // Act
    let text = fixture.run(&["lookup", ANN]).await;
    let json = fixture.run(&["lookup", "--json", "Ann@Example.com"]).await;

    // Assert: the text names each list's row, its consent text and the mail count
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let text = stdout(&text);
    for expected in [
        "list news: confirmed",
        "list other: pending",
        "consent text          News, now and then.",
        "source                footer",
        "confirm method        button",
        "confirmation mails in the last 24 hours: 2",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    // Assert: the JSON document (the Art. 20 file) holds the same, the address normalised
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let document: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(document["email"], ANN);
    let rows = document["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["list"], "news");
    assert_eq!(rows[0]["status"], "confirmed");
    assert_eq!(rows[0]["consent_text"], "News, now and then.");
    assert!(rows[0]["confirmed_at"].as_i64().is_some());
    assert_eq!(rows[1]["status"], "pending");
    assert_eq!(document["confirmation_mails_last_day"], 2);
    assert_eq!(document["suppressions"], serde_json::json!([]));
    // Assert: nothing written but two audit entries
    let mut after = fixture.counts();
    assert_eq!(after.remove("audit_log").unwrap() - before["audit_log"], 2);
    let mut before = before;
    before.remove("audit_log");
    assert_eq!(after, before, "lookup wrote nothing else");
    let hash = document["address_hash"].as_str().unwrap().to_owned();
    let entries = fixture.audit(&[]).await;
    let lookups: Vec<&Value> = entries.iter().filter(|entry| entry["action"] == "lookup").collect();
    assert_eq!(lookups.len(), 2);
    for entry in lookups {
        assert_eq!(entry["actor"], "cli");
        assert_eq!(entry["address_hash"], hash.as_str());
        assert_eq!(entry["count"], 2);
    }
}

#[tokio::test]
async fn an_unknown_address_has_nothing_held_a_removed_one_only_its_suppression_and_the_audit_log_says_who_did_what() {
    // Arrange
    let fixture = Fixture::start().await;
    fixture.sign_up(ANN, "news").await;
    fixture.mailed(ANN, 1).await;

    // Act: look up a stranger, remove Ann, look her up, export, read the log
    let stranger = fixture.run(&["lookup", "nobody@example.com"]).await;
    let removed = fixture.run(&["remove", ANN]).await;
    let after_removal = fixture.run(&["lookup", "--json", ANN]).await;
    let export = fixture.run(&["export", "--status", "all"]).await;
    let entries = fixture.audit(&[]).await;

    // Assert: the stranger: nothing held
    assert_eq!(stranger.status.code(), Some(0), "{}", stderr(&stranger));
    assert!(stdout(&stranger).contains("nothing held"), "{}", stdout(&stranger));
    // Assert: after the removal, only the suppression on news remains
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let document: Value = serde_json::from_str(&stdout(&after_removal)).unwrap();
    assert_eq!(document["rows"], serde_json::json!([]));
    assert_eq!(document["suppressions"][0]["list"], "news");
    assert_eq!(document["suppressions"][0]["reason"], "not_me");
    // Assert: one entry per action, in order, with the counts; the removal names Ann's hash
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
    let actions: Vec<&str> = entries.iter().map(|entry| entry["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["lookup", "remove", "lookup", "export"]);
    assert_eq!(entries[1]["count"], 1);
    assert_eq!(entries[1]["address_hash"], document["address_hash"]);
    assert_ne!(entries[0]["address_hash"], entries[1]["address_hash"], "another address, another hash");
    assert_eq!(entries[3]["count"], 0);
    assert_eq!(entries[3]["address_hash"], Value::Null);
    // Assert: --since filters, the text form reads, a bad time is a usage error
    let future = fixture.audit(&["--since", "2999-01-01"]).await;
    assert!(future.is_empty());
    let text = fixture.run(&["audit"]).await;
    assert!(stdout(&text).contains("cli  remove  list -  count 1"), "{}", stdout(&text));
    let bad = fixture.run(&["audit", "--since", "yesterday"]).await;
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(database_is(&fixture.database()));
}

#[tokio::test]
async fn a_malformed_address_is_refused_without_repeating_it_and_writes_nothing() {
    // Arrange
    let fixture = Fixture::start().await;
    let before = fixture.counts();

    // Act
    let output = fixture.run(&["lookup", "not-an-address-secret"]).await;

    // Assert
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("EMAIL:"), "{}", stderr(&output));
    assert!(!stderr(&output).contains("not-an-address-secret"));
    assert_eq!(fixture.counts(), before);
}
