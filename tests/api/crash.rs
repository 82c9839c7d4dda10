//! Crashes and stops of the real binary: every answer `serve` gave survives `kill -9`, and a
//! SIGTERM with a large intake backlog exits at once, leaving the backlog for the next start.
//!
//! These tests run `signupd serve` as a child process on port 0 and read the database file
//! directly (read-only) between runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

use crate::process::{Served, Tokens, client, config, count, read_only, serve, strings, tokens_by_recipient, unix_now};

// ---------------------------------------------------------------------------------------------
// Test 1: kill -9 in the middle of a burst, ten times

/// A small xorshift generator: the test prints its seed, so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `range`.
    fn between(&mut self, range: std::ops::Range<u64>) -> u64 {
        range.start + self.next() % (range.end - range.start)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = usize::try_from(self.next() % (i as u64 + 1)).unwrap();
            items.swap(i, j);
        }
    }
}

#[derive(Debug, Clone)]
enum Request {
    Signup { email: String },
    Confirm { email: String, token: String },
    Remove { email: String, token: String },
}

impl Request {
    /// Sends the request; `true` when signupd acknowledged it (the answer that may only come
    /// after the commit).
    async fn acknowledged(&self, client: &reqwest::Client, base: &str) -> bool {
        let (path, fields, wanted) = match self {
            Self::Signup { email } => {
                ("/api/signup", vec![("email", email.as_str()), ("consent", "yes"), ("list", "news")], None)
            }
            Self::Confirm { token, .. } => ("/api/confirm", vec![("token", token.as_str())], Some("/confirmed")),
            Self::Remove { token, .. } => ("/api/manage", vec![("token", token.as_str())], Some("/removed")),
        };
        let Ok(response) = client.post(format!("{base}{path}")).form(&fields).send().await else {
            return false;
        };
        let location = response.headers().get("location").and_then(|value| value.to_str().ok()).unwrap_or("");
        response.status() == 303 && wanted.is_none_or(|prefix| location.starts_with(prefix))
    }
}

/// What signupd acknowledged, over all rounds.
#[derive(Debug, Default)]
struct Ledger {
    signed_up: BTreeSet<String>,
    confirmed: BTreeSet<String>,
    removed: BTreeSet<String>,
    /// Every address a removal was sent for, answered or not: its row may be gone.
    removal_sent: BTreeSet<String>,
    /// Requests that got no acknowledgement (the kill cut them off, or they came after it).
    unacknowledged: usize,
}

impl Ledger {
    fn record(&mut self, request: &Request, acknowledged: bool) {
        if !acknowledged {
            self.unacknowledged += 1;
            return;
        }
        let (set, email) = match request {
            Request::Signup { email } => (&mut self.signed_up, email),
            Request::Confirm { email, .. } => (&mut self.confirmed, email),
            Request::Remove { email, .. } => (&mut self.removed, email),
        };
        set.insert(email.clone());
    }

    /// Checks every acknowledgement against the database file; returns what is missing.
    fn violations(&self, database: &Path) -> Vec<String> {
        let conn = read_only(database);
        let intake: BTreeSet<String> = strings(&conn, "SELECT email FROM intake WHERE list_id = 'news'");
        let mut statement = conn.prepare("SELECT email, status FROM subscribers WHERE list_id = 'news'").unwrap();
        let rows: BTreeMap<String, String> = statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut violations = Vec::new();
        for email in self.signed_up.difference(&self.removal_sent) {
            if !intake.contains(email) && !rows.contains_key(email) {
                violations.push(format!("acknowledged signup {email} is neither in intake nor in subscribers"));
            }
        }
        for email in self.confirmed.difference(&self.removal_sent) {
            if rows.get(email).map(String::as_str) != Some("confirmed") {
                violations.push(format!("acknowledged confirm of {email}: the row is {:?}", rows.get(email)));
            }
        }
        for email in &self.removed {
            if rows.contains_key(email) || intake.contains(email) {
                violations.push(format!("acknowledged removal of {email}: the address is still stored"));
            }
        }
        violations
    }
}

/// Sends every request at a random moment of a burst of `BURST_MS`; with `kill`, kills the
/// server with `kill -9` in the middle of it. Records what was acknowledged.
async fn burst(server: &mut Served, rng: &mut Rng, requests: Vec<Request>, kill: bool, ledger: &mut Ledger) {
    let (client, base) = (client(), server.url(""));
    let tasks: Vec<_> = requests
        .into_iter()
        .map(|request| {
            let (client, base) = (client.clone(), base.clone());
            let delay = Duration::from_millis(rng.between(0..BURST_MS));
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let acknowledged = request.acknowledged(&client, &base).await;
                (request, acknowledged)
            })
        })
        .collect();
    if kill {
        tokio::time::sleep(Duration::from_millis(rng.between(BURST_MS / 4..BURST_MS * 3 / 4))).await;
        server.kill_9();
    }
    for task in tasks {
        let (request, acknowledged) = task.await.unwrap();
        ledger.record(&request, acknowledged);
    }
}

/// Waits until the workers of a fresh start have applied all intake and sent every mail that is
/// not held by a lease the killed process took (those wait for their lease to end).
async fn wait_for_workers(database: &Path, leased_before_start: &BTreeSet<i64>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let conn = read_only(database);
        let intake = count(&conn, "SELECT count(*) FROM intake");
        let outbox: BTreeSet<i64> = {
            let mut statement = conn.prepare("SELECT id FROM outbox").unwrap();
            statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
        };
        let waiting = outbox.difference(leased_before_start).count();
        if intake == 0 && waiting == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the workers did not catch up: {intake} intake items and {waiting} mails still queued"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn leased(database: &Path) -> BTreeSet<i64> {
    if !database.exists() {
        return BTreeSet::new();
    }
    let conn = read_only(database);
    let mut statement = conn.prepare("SELECT id FROM outbox WHERE lease_until IS NOT NULL").unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

const ROUNDS: usize = 10;
const SIGNUPS_PER_ROUND: usize = 100;
const CONFIRMS_PER_ROUND: usize = 50;
const REMOVALS_PER_ROUND: usize = 25;
/// Requests of a round start at random moments within this many milliseconds.
const BURST_MS: u64 = 600;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_signup_confirm_and_removal_survives_kill_9_across_ten_rounds() {
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("kill -9 test seed: {seed:#x}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 1_000_000, "");
    let database = dir.path().join("data/signupd.sqlite3");
    let mail_dir = dir.path().join("data/mail");
    let mut ledger = Ledger::default();

    for round in 0..ROUNDS {
        // Arrange: a fresh start on what the last kill left, its workers caught up, so the
        // mails of the last round's signups and confirms carry tokens to use
        let leased_before_start = leased(&database);
        let mut server = serve(&config);
        wait_for_workers(&database, &leased_before_start).await;
        let mails = tokens_by_recipient(&mail_dir);
        let mut usable: Vec<(String, Tokens)> =
            mails.into_iter().filter(|(email, _)| !ledger.removal_sent.contains(email)).collect();
        rng.shuffle(&mut usable);
        let mut requests = Vec::new();
        for (email, tokens) in &usable {
            let confirms = requests.iter().filter(|r| matches!(r, Request::Confirm { .. })).count();
            let removals = requests.iter().filter(|r| matches!(r, Request::Remove { .. })).count();
            match (&tokens.confirm, &tokens.manage) {
                (Some(token), _) if confirms < CONFIRMS_PER_ROUND && !ledger.confirmed.contains(email) => {
                    requests.push(Request::Confirm { email: email.clone(), token: token.clone() });
                }
                (_, Some(token)) if removals < REMOVALS_PER_ROUND => {
                    ledger.removal_sent.insert(email.clone());
                    requests.push(Request::Remove { email: email.clone(), token: token.clone() });
                }
                _ => {}
            }
        }
        for i in 0..SIGNUPS_PER_ROUND {
            requests.push(Request::Signup { email: format!("s{seed:x}-r{round}-{i}@example.com") });
        }

        // Act: every request at a random moment of the burst, and kill -9 in the middle of it
        burst(&mut server, &mut rng, requests, true, &mut ledger).await;

        // Assert: every acknowledgement is in the file the killed process left
        let violations = ledger.violations(&database);
        assert!(violations.is_empty(), "round {round} (seed {seed:#x}): {} lost:\n{}", violations.len(), {
            violations.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        });
    }

    // Assert: the rounds did exercise all three writes and the kills did cut requests off
    assert!(ledger.signed_up.len() >= SIGNUPS_PER_ROUND, "signups acknowledged: {}", ledger.signed_up.len());
    assert!(!ledger.confirmed.is_empty(), "no confirm was acknowledged: {ledger:?}");
    assert!(!ledger.removed.is_empty(), "no removal was acknowledged: {ledger:?}");
    assert!(ledger.unacknowledged > 0, "no kill hit a request");
    eprintln!(
        "acknowledged over {ROUNDS} kills: {} signups, {} confirms, {} removals; {} requests cut off",
        ledger.signed_up.len(),
        ledger.confirmed.len(),
        ledger.removed.len(),
        ledger.unacknowledged
    );

    // Assert: a last start on the crashed file works, keeps it all, and stops cleanly
    let leased_before_start = leased(&database);
    let server = serve(&config);
    wait_for_workers(&database, &leased_before_start).await;
    server.stop().await;
    let violations = ledger.violations(&database);
    assert!(violations.is_empty(), "after the last restart: {violations:?}");
    let conn = read_only(&database);
    let unsent = count(&conn, "SELECT count(*) FROM outbox WHERE lease_until IS NULL");
    assert_eq!(unsent, 0, "every mail not held by a dead lease was sent");
}

// ---------------------------------------------------------------------------------------------
// Test 2: SIGTERM with 20,000 signups waiting

const BACKLOG: i64 = 20_000;

fn intake_and_subscribers(database: &Path) -> (i64, i64) {
    let conn = read_only(database);
    (count(&conn, "SELECT count(*) FROM intake"), count(&conn, "SELECT count(*) FROM subscribers"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_large_backlog_exits_quickly_and_the_backlog_is_applied_after_restart() {
    // Arrange: a migrated database with 20,000 signups waiting in intake
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 1000, "");
    let database = dir.path().join("data/signupd.sqlite3");
    let client = client();
    let server = serve(&config);
    server.healthy(&client).await;
    server.stop().await;
    {
        let mut conn = Connection::open(&database).unwrap();
        let transaction = conn.transaction().unwrap();
        {
            let mut insert = transaction
                .prepare(
                    "INSERT INTO intake (list_id, email, consent_version, received_at) VALUES ('news', ?1, 'v1', ?2)",
                )
                .unwrap();
            let now = unix_now();
            for i in 0..BACKLOG {
                insert.execute(rusqlite::params![format!("backlog-{i}@example.com"), now]).unwrap();
            }
        }
        transaction.commit().unwrap();
    }

    // Act: start, and SIGTERM as soon as it answers
    let mut server = serve(&config);
    server.healthy(&client).await;
    server.sigterm();
    let status = server.exit_within(Duration::from_secs(10)).await;

    // Assert: exit 0 within 10 s, nothing lost
    let status = status.expect("serve exits within 10 s of SIGTERM, whatever is queued");
    assert_eq!(status.code(), Some(0), "{status:?}");
    let (intake, subscribers) = intake_and_subscribers(&database);
    assert_eq!(intake + subscribers, BACKLOG, "intake {intake} + subscribers {subscribers}");
    // Applying 20,000 items takes dozens of chunks; a stop that waited for the backlog (rather
    // than checking between chunks) would leave none of it.
    assert!(intake > 0, "the stop left the backlog queued instead of working through it");
    eprintln!("at SIGTERM: {subscribers} applied, {intake} left in intake");

    // Act: start again and let the worker drain the rest
    let server = serve(&config);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (intake, subscribers) = loop {
        let (intake, subscribers) = intake_and_subscribers(&database);
        if intake == 0 || Instant::now() >= deadline {
            break (intake, subscribers);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    server.stop().await;

    // Assert
    assert_eq!(intake, 0, "the backlog was not applied within 60 s");
    assert_eq!(subscribers, BACKLOG);
    let (intake, subscribers) = intake_and_subscribers(&database);
    assert_eq!((intake, subscribers), (0, BACKLOG), "after the stop");
}

// ---------------------------------------------------------------------------------------------
// Test 3: kill -9 across the batched rate-limit counters

/// The client's budget in the counter test: fewer than the requests of either run.
const CLIENT_LIMIT: i64 = 40;
const SIGNUPS_PER_RUN: usize = 70;

/// Every recorded signup of the list: waiting in intake or applied.
fn recorded_signups(database: &Path) -> i64 {
    let conn = read_only(database);
    count(&conn, "SELECT (SELECT count(*) FROM intake) + (SELECT count(*) FROM subscribers)")
}

/// Sends `SIGNUPS_PER_RUN` signups from one client in a burst (see [`burst`]).
async fn signup_burst(server: &mut Served, rng: &mut Rng, run: &str, kill: bool, ledger: &mut Ledger) {
    let requests = (0..SIGNUPS_PER_RUN).map(|i| Request::Signup { email: format!("{run}-{i}@example.com") }).collect();
    burst(server, rng, requests, kill, ledger).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_across_batched_counters_loses_no_signup_and_gives_no_client_more_than_its_limit() {
    // Arrange: one client (the test, on loopback) with a daily budget; away from a day's end,
    // so both runs count in the same window
    let seconds_into_day = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() % 86_400;
    if seconds_into_day > 86_400 - 60 {
        tokio::time::sleep(Duration::from_secs(86_400 - seconds_into_day + 1)).await;
    }
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("counter kill -9 test seed: {seed:#x}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mail_dir = dir.path().join("data/mail");
    let config = crate::helpers::write_config(
        dir.path(),
        &format!(
            "[signup]\nrate_limits = [ {{ window = \"1d\", max = {CLIENT_LIMIT} }} ]\nnetwork_rate_limits = []\n\
             [mail]\nfile_dir = {:?}\n",
            mail_dir.display().to_string()
        ),
    );
    let database = dir.path().join("data/signupd.sqlite3");
    let mut ledger = Ledger::default();

    // Act: a burst cut off by kill -9, then a full burst on the file the kill left
    let mut server = serve(&config);
    signup_burst(&mut server, &mut rng, "killed", true, &mut ledger).await;
    let acknowledged_before_kill = ledger.signed_up.len();
    let recorded_before_kill = recorded_signups(&database);
    let mut server = serve(&config);
    signup_burst(&mut server, &mut rng, "restarted", false, &mut ledger).await;
    server.stop().await;

    // Assert: nothing acknowledged was lost, and the two runs together stayed within one budget
    let violations = ledger.violations(&database);
    assert!(violations.is_empty(), "seed {seed:#x}: {violations:?}");
    assert!(acknowledged_before_kill > 0, "the killed run counted signups before it died: {ledger:?}");
    assert!(
        recorded_before_kill >= i64::try_from(acknowledged_before_kill).unwrap(),
        "every signup acknowledged before the kill is in the file"
    );
    let recorded = recorded_signups(&database);
    assert_eq!(recorded, CLIENT_LIMIT, "exactly the budget was recorded over both runs (seed {seed:#x})");
    assert!(i64::try_from(ledger.signed_up.len()).unwrap() <= CLIENT_LIMIT, "{ledger:?}");
    let conn = read_only(&database);
    let counted =
        count(&conn, "SELECT count FROM rate_limits WHERE key NOT LIKE 'surge/%' AND key NOT LIKE 'mail-network/%'");
    assert_eq!(counted, recorded, "the client's counter counts exactly the recorded signups");
}
