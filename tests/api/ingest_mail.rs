//! `signupd ingest-mail` as Postfix's pipe transport runs it: the real binary, one raw mail on
//! standard input, beside a running `signupd serve` on the same SQLite file. A delivery status
//! notification that quotes the `X-Signupd-Ref` of a mail this server sent suppresses its
//! address on every list; a forged one — no reference, or one that does not open — changes
//! nothing, whatever address it names; a report seen before acts once; and a database that
//! cannot be written is exit 75, so Postfix keeps the report and tries again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::helpers::signupd;
use crate::process::{Served, client, config, count, read_only, serve};

const ANN: &str = "ann@example.com";
const BOB: &str = "bob@example.com";

struct Fixture {
    dir: TempDir,
    config: PathBuf,
    server: Served,
}

impl Fixture {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 1000, "[[lists]]\nid = \"news\"\n[[lists]]\nid = \"other\"\n");
        let server = serve(&config);
        Self { dir, config, server }
    }

    fn database(&self) -> PathBuf {
        self.dir.path().join("data/signupd.sqlite3")
    }

    async fn sign_up(&self, email: &str, list: &str) {
        let response = client()
            .post(self.server.url("/api/signup"))
            .form(&[("email", email), ("consent", "yes"), ("list", list)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303);
    }

    /// The `X-Signupd-Ref` of the first mail the file transport wrote to `email`.
    async fn reference_mailed_to(&self, email: &str) -> String {
        let dir = self.dir.path().join("data/mail");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(reference) = reference_in(&dir, email) {
                return reference;
            }
            assert!(Instant::now() < deadline, "no mail to {email}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `signupd ingest-mail --config …` with `mail` on standard input.
    async fn ingest(&self, mail: String) -> Output {
        let config = self.config.clone();
        tokio::task::spawn_blocking(move || ingest(&config, &mail)).await.unwrap()
    }

    fn rows(&self, email: &str) -> i64 {
        let conn = read_only(&self.database());
        conn.query_row("SELECT count(*) FROM subscribers WHERE email = ?1", [email], |row| row.get(0)).unwrap()
    }

    fn suppressions(&self, reason: &str) -> i64 {
        count(
            &read_only(&self.database()),
            &format!("SELECT count(*) FROM suppressions WHERE list_id = '*' AND reason = '{reason}'"),
        )
    }
}

fn ingest(config: &Path, mail: &str) -> Output {
    let mut child = signupd()
        .arg("ingest-mail")
        .arg("--config")
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(mail.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn reference_in(dir: &Path, email: &str) -> Option<String> {
    for entry in std::fs::read_dir(dir).ok()? {
        let text = std::fs::read_to_string(entry.ok()?.path()).ok()?;
        let (head, _) = text.split_once("\r\n\r\n")?;
        let head = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        let to_this = head.lines().any(|line| line.eq_ignore_ascii_case(&format!("To: {email}")));
        let reference = head.lines().find_map(|line| line.strip_prefix("X-Signupd-Ref: "));
        if let (true, Some(reference)) = (to_this, reference) {
            return Some(reference.trim().to_owned());
        }
    }
    None
}

/// A delivery status notification as Postfix writes one for an unknown local user, about a
/// mail to `recipient` whose header lines are `original_headers`, with its own `message_id`.
fn dsn(recipient: &str, original_headers: &str, message_id: &str) -> String {
    format!(
        "Return-Path: <>\r\n\
         From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\r\n\
         Subject: Undelivered Mail Returned to Sender\r\n\
         To: no-reply@example.com\r\n\
         Message-Id: <{message_id}>\r\n\
         MIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"B1\"\r\n\
         \r\n\
         --B1\r\n\
         Content-Type: text/plain; charset=us-ascii\r\n\
         \r\n\
         I'm sorry to have to inform you that your message could not be delivered.\r\n\
         <{recipient}>: unknown user: \"{local}\"\r\n\
         \r\n\
         --B1\r\n\
         Content-Type: message/delivery-status\r\n\
         \r\n\
         Reporting-MTA: dns; mx.example.net\r\n\
         Arrival-Date: Fri,  4 Dec 2026 12:00:00 +0000 (UTC)\r\n\
         \r\n\
         Final-Recipient: rfc822; {recipient}\r\n\
         Original-Recipient: rfc822;{recipient}\r\n\
         Action: failed\r\n\
         Status: 5.1.1\r\n\
         Diagnostic-Code: X-Postfix; unknown user: \"{local}\"\r\n\
         \r\n\
         --B1\r\n\
         Content-Type: text/rfc822-headers\r\n\
         \r\n\
         {original_headers}\
         --B1--\r\n",
        local = recipient.split('@').next().unwrap(),
    )
}

fn original_headers(recipient: &str, reference: Option<&str>) -> String {
    let mut headers = format!("From: News <no-reply@example.com>\r\nTo: {recipient}\r\nSubject: Please confirm\r\n");
    if let Some(reference) = reference {
        headers.push_str(&format!("X-Signupd-Ref: {reference}\r\n"));
    }
    headers.push_str("\r\n");
    headers
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn a_bounce_that_quotes_a_reference_suppresses_its_address_and_a_forged_one_changes_nothing() {
    // Arrange: Ann pending on two lists, Bob on one; Ann's confirmation carries a reference
    let fixture = Fixture::start();
    fixture.sign_up(ANN, "news").await;
    fixture.sign_up(ANN, "other").await;
    fixture.sign_up(BOB, "news").await;
    let reference = fixture.reference_mailed_to(ANN).await;
    fixture.reference_mailed_to(BOB).await;
    assert_eq!((fixture.rows(ANN), fixture.rows(BOB)), (2, 1));

    // Act: forged reports about Bob, without a reference and with one that does not open
    let forged_reference = format!("v1.{}", "A".repeat(120));
    for (headers, id) in [
        (original_headers(BOB, None), "forged-1@mx.example.net"),
        (original_headers(BOB, Some(&forged_reference)), "forged-2@mx.example.net"),
    ] {
        let output = fixture.ingest(dsn(BOB, &headers, id)).await;

        // Assert: exit 0 (Postfix is done with it), ignored, nothing changed
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stderr(&output).contains("ignored"), "{}", stderr(&output));
        assert_eq!(fixture.rows(BOB), 1);
        assert_eq!(fixture.suppressions("bounced"), 0);
    }

    // Act: the real bounce of Ann's confirmation, naming Bob's address in its text
    let report = dsn(BOB, &original_headers(ANN, Some(&reference)), "real-1@mx.example.net");
    let output = fixture.ingest(report.clone()).await;

    // Assert: the reference decides, not the address the report names: Ann's rows are gone from
    // both lists, with her queued mail, and her address is suppressed on every list
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("handled"), "{}", stderr(&output));
    assert!(!stderr(&output).contains(ANN) && !stderr(&output).contains(BOB), "no address in the output");
    assert_eq!(fixture.rows(ANN), 0);
    assert_eq!(fixture.rows(BOB), 1);
    assert_eq!(fixture.suppressions("bounced"), 1);
    let conn = read_only(&fixture.database());
    assert_eq!(count(&conn, "SELECT count(*) FROM rollups WHERE list = 'news' AND series = 'bounces.hard'"), 1);

    // Act: the same report again (Postfix retried after a lost answer)
    let again = fixture.ingest(report).await;

    // Assert: acted once
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("recorded before"), "{}", stderr(&again));
    assert_eq!(
        count(&conn, "SELECT value FROM rollups WHERE list = 'news' AND series = 'bounces.hard'"),
        1,
        "counted once"
    );

    // Act: Ann signs up again
    fixture.sign_up(ANN, "news").await;

    // Assert: answered as always, never mailed (the intake applies it to nothing)
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(fixture.rows(ANN), 0, "a bounced address gets no row and no mail");
}

#[tokio::test]
async fn a_database_that_cannot_be_written_is_exit_75_and_the_same_report_is_handled_once_it_can() {
    // Arrange: a pending signup and its reference; another process holds the write lock
    let fixture = Fixture::start();
    fixture.sign_up(ANN, "news").await;
    let reference = fixture.reference_mailed_to(ANN).await;
    let report = dsn(ANN, &original_headers(ANN, Some(&reference)), "locked-1@mx.example.net");
    let locker = rusqlite::Connection::open(fixture.database()).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO rate_limits VALUES ('test/lock', 1, 0);").unwrap();

    // Act
    let output = fixture.ingest(report.clone()).await;

    // Assert: EX_TEMPFAIL, and nothing written
    assert_eq!(output.status.code(), Some(75), "{}", stderr(&output));
    assert!(stderr(&output).contains("try again later"), "{}", stderr(&output));
    locker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(fixture.rows(ANN), 1);
    assert_eq!(fixture.suppressions("bounced"), 0);

    // Act: Postfix tries again once the lock is gone
    let output = fixture.ingest(report).await;

    // Assert
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(fixture.rows(ANN), 0);
    assert_eq!(fixture.suppressions("bounced"), 1);
}

#[tokio::test]
async fn without_a_database_ingest_mail_is_exit_75_and_says_why_without_the_report() {
    // Arrange: a configuration whose data directory holds no database yet
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 1000, "");

    // Act
    let output = tokio::task::spawn_blocking(move || ingest(&config, &dsn(ANN, &original_headers(ANN, None), "x@y")))
        .await
        .unwrap();

    // Assert
    assert_eq!(output.status.code(), Some(75), "{}", stderr(&output));
    assert!(stderr(&output).contains("there is no database"), "{}", stderr(&output));
    assert!(!stderr(&output).contains(ANN));
}

#[test]
fn a_mistake_in_ingest_mails_command_line_is_exit_75_so_postfix_keeps_the_report() {
    // Act: an option ingest-mail does not know, as a typo in master.cf's argv would give it
    let output = signupd().args(["ingest-mail", "--confg", "/etc/signupd/signupd.toml"]).output().unwrap();

    // Assert: not clap's usual 2, which Postfix would take as "give the report up"
    assert_eq!(output.status.code(), Some(75), "{}", stderr(&output));
    assert!(stderr(&output).starts_with("signupd ingest-mail: cannot record the report"), "{}", stderr(&output));
    // Other commands keep clap's exit status for a usage error.
    let other = signupd().args(["stats", "--confg", "x"]).output().unwrap();
    assert_eq!(other.status.code(), Some(2));
}
