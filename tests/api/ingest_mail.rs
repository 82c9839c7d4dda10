//! `signupd ingest-mail` as Postfix's pipe transport runs it: the real binary, one raw mail on
//! standard input, beside a running `signupd serve` on the same SQLite file. A delivery status
//! notification that quotes the `X-Signupd-Ref` of a mail this server sent suppresses its
//! address on every list; a forged one — no reference, or one that does not open — changes
//! nothing, whatever address it names; a report seen before acts once; and a database that
//! cannot be written is exit 75, so Postfix keeps the report and tries again. The complaint
//! breaker counts what a forger cannot multiply: a reference once whatever the
//! report's `Message-ID`, a registrable domain once however many addresses it has, and not a
//! reference sealed more than 30 days ago.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use signupd::outbound::mail::reference::ReferenceKey;
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
    // Postfix's log shows only the start of it: the outcome first, the configuration after.
    let lines: Vec<String> = stderr(&output).lines().map(str::to_owned).collect();
    assert!(lines[0].starts_with("signupd ingest-mail: handled"), "{lines:?}");
    assert!(lines.last().is_some_and(|line| line.starts_with("signupd: configuration ")), "{lines:?}");
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

// ---------------------------------------------------------------------------------------------
// The complaint breaker, from the outside: anyone who was sent one confirmation holds
// its reference, and anyone can pipe a feedback report into `ingest-mail`

/// An RFC 5965 feedback report (`abuse`) quoting `original_headers`, with `message_id` as its
/// own `Message-ID` or none: the least a forger needs to write.
fn feedback_report(original_headers: &str, message_id: Option<&str>) -> String {
    let message_id = message_id.map(|id| format!("Message-ID: <{id}>\r\n")).unwrap_or_default();
    format!(
        "From: abuse@reports.example.net\r\n\
         To: bounces@example.com\r\n\
         Subject: Abuse report\r\n\
         {message_id}\
         MIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=feedback-report; boundary=\"F1\"\r\n\
         \r\n\
         --F1\r\n\
         Content-Type: text/plain; charset=us-ascii\r\n\
         \r\n\
         This is an email abuse report.\r\n\
         \r\n\
         --F1\r\n\
         Content-Type: message/feedback-report\r\n\
         \r\n\
         Feedback-Type: abuse\r\n\
         User-Agent: SomeGenerator/1.0\r\n\
         Version: 1\r\n\
         \r\n\
         --F1\r\n\
         Content-Type: text/rfc822-headers\r\n\
         \r\n\
         {original_headers}\
         --F1--\r\n"
    )
}

impl Fixture {
    /// Signs each of `emails` up for `news`; the reference of each one's confirmation.
    async fn references(&self, emails: &[&str]) -> Vec<String> {
        for email in emails {
            self.sign_up(email, "news").await;
        }
        let mut references = Vec::new();
        for email in emails {
            references.push(self.reference_mailed_to(email).await);
        }
        references
    }

    /// Pipes a complaint about `email`'s mail carrying `reference` into `ingest-mail`, with
    /// `message_id` or none; what it said on stderr (exit 0 asserted).
    async fn complain(&self, email: &str, reference: &str, message_id: Option<&str>) -> String {
        let output = self.ingest(feedback_report(&original_headers(email, Some(reference)), message_id)).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stderr(&output)
    }

    /// A JSON signup of a new address to `news`: its answer's `next` (`send_confirmation` while
    /// the list is in surge mode, `confirm_email` otherwise).
    async fn next_after_signup(&self, email: &str) -> String {
        let response = client()
            .post(self.server.url("/api/signup"))
            .json(&serde_json::json!({ "email": email, "consent": true, "list": "news" }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202, "{email}");
        let body: serde_json::Value = response.json().await.unwrap();
        body["next"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned()
    }

    fn count(&self, sql: &str) -> i64 {
        count(&read_only(&self.database()), sql)
    }
}

#[tokio::test]
async fn a_catch_all_forger_repeating_reports_about_three_addresses_at_one_domain_leaves_the_list_out_of_surge() {
    // Arrange: three addresses at one registrable domain, whose confirmations the forger received
    let fixture = Fixture::start();
    let emails = ["ann@forger.example", "bob@forger.example", "cat@mail.forger.example"];
    let references = fixture.references(&emails).await;

    // Act: each reference reported three times: with a Message-ID, with a new one, with none
    for (n, (email, reference)) in emails.iter().zip(&references).enumerate() {
        let first = fixture.complain(email, reference, Some(&format!("fbl-{n}-a@reports.example.net"))).await;
        assert!(first.contains("handled"), "{first}");
        for again in [Some(format!("fbl-{n}-b@reports.example.net")), None] {
            let said = fixture.complain(email, reference, again.as_deref()).await;
            assert!(said.contains("recorded before"), "{again:?}: {said}");
        }
    }

    // Assert: each address is suppressed on every list and its row is gone, each report counted
    // once; but one domain is one complaint for the breaker, and the list is not in surge mode
    assert_eq!(fixture.suppressions("complained"), 3);
    for email in emails {
        assert_eq!(fixture.rows(email), 0, "{email}");
    }
    assert_eq!(fixture.count("SELECT value FROM rollups WHERE list = 'news' AND series = 'complaints'"), 3);
    assert_eq!(fixture.count("SELECT count(DISTINCT domain) FROM complaints WHERE list_id = 'news'"), 1);
    assert_eq!(fixture.next_after_signup("visitor@example.com").await, "confirm_email", "not in surge");
    // Assert: the breaker's rows name no address and no domain
    let conn = read_only(&fixture.database());
    let stored: Vec<String> = conn
        .prepare("SELECT list_id || ' ' || domain FROM complaints")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(stored.iter().all(|row| !row.contains("forger") && row.len() == "news ".len() + 64), "{stored:?}");
}

#[tokio::test]
async fn complaints_about_three_free_subdomains_of_one_private_suffix_leave_the_list_out_of_surge() {
    // Regression: the Public Suffix List's private section made each `*.duckdns.org` name a
    // registrable domain of its own, so three forged reports with their own references tripped
    // the breaker. By the ICANN section they are one domain, `duckdns.org`.
    let fixture = Fixture::start();
    let emails = ["ann@a-forger.duckdns.org", "bob@b-forger.duckdns.org", "cat@c-forger.duckdns.org"];
    let references = fixture.references(&emails).await;

    for (email, reference) in emails.iter().zip(&references) {
        assert!(fixture.complain(email, reference, None).await.contains("handled"), "{email}");
    }

    assert_eq!(fixture.suppressions("complained"), 3, "each report still acts on its own address");
    assert_eq!(fixture.count("SELECT count(DISTINCT domain) FROM complaints WHERE list_id = 'news'"), 1);
    assert_eq!(fixture.next_after_signup("visitor@example.com").await, "confirm_email", "not in surge");
}

#[tokio::test]
async fn complaints_about_three_addresses_at_three_domains_through_ingest_mail_trip_the_breaker() {
    // Arrange
    let fixture = Fixture::start();
    let emails = ["ann@example.com", "bob@mail.example.org", "cat@example.net"];
    let references = fixture.references(&emails).await;
    assert_eq!(fixture.next_after_signup("before@example.com").await, "confirm_email");

    // Act
    for (email, reference) in emails.iter().zip(&references) {
        assert!(fixture.complain(email, reference, None).await.contains("handled"), "{email}");
    }

    // Assert: three domains within the hour hold the list in surge mode
    assert_eq!(fixture.suppressions("complained"), 3);
    assert_eq!(fixture.next_after_signup("after@example.com").await, "send_confirmation", "in surge");
}

#[tokio::test]
async fn a_complaint_about_a_reference_sealed_over_30_days_ago_suppresses_its_address_but_does_not_count() {
    // Arrange: three addresses at three domains, and their references as they would be had their
    // mails been sealed 31 days ago (sealed here with the installation's own key, as the server
    // would have: the rows are the same, only the day differs)
    let fixture = Fixture::start();
    let emails = ["ann@example.com", "bob@example.org", "cat@example.net"];
    let references = fixture.references(&emails).await;
    let hash_key = signupd::config::secrets::read_secret(&fixture.dir.path().join("data/hash_key")).unwrap();
    let key = ReferenceKey::derive(&hash_key);
    let long_ago = crate::process::unix_now() - 31 * 86_400;
    let stale: Vec<String> = references
        .iter()
        .map(|value| {
            let opened = key.open(value).expect("the server's reference opens with its key");
            let (list, kind, id, hash) =
                (&opened.list_id, opened.kind, opened.subscriber_id, opened.suppression_hash());
            key.seal(list, kind, id, &hash, long_ago).unwrap()
        })
        .collect();

    // Act
    for (email, reference) in emails.iter().zip(&stale) {
        assert!(fixture.complain(email, reference, None).await.contains("handled"), "{email}");
    }

    // Assert: each address suppressed and removed, but none counted toward the breaker
    assert_eq!(fixture.suppressions("complained"), 3);
    for email in emails {
        assert_eq!(fixture.rows(email), 0, "{email}");
    }
    assert_eq!(fixture.count("SELECT count(*) FROM complaints"), 0);
    assert_eq!(fixture.next_after_signup("after@example.com").await, "confirm_email", "not in surge");
}
