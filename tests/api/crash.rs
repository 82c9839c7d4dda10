//! Crashes and stops of the real binary: every answer `serve` gave survives `kill -9`, and a
//! SIGTERM with a large intake backlog exits at once, leaving the backlog for the next start.
//!
//! These tests run `signupd serve` as a child process on port 0 and read the database file
//! directly (read-only) between runs.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};

use crate::helpers::{signupd, write_config};

// ---------------------------------------------------------------------------------------------
// The server process

/// A running `signupd serve`, killed (SIGKILL) when dropped, so a failed test never leaves a
/// server behind.
struct Served {
    child: Child,
    port: u16,
    /// Every stderr line, for the failure message of a start that never bound.
    lines: mpsc::Receiver<String>,
}

/// A config in `dir` (data under `dir/data`, mail files under `dir/data/mail`, the list `news`)
/// with the rate limit out of the way and the given hourly mail budget.
fn config(dir: &Path, max_mails_per_hour: u32) -> PathBuf {
    let mail_dir = dir.join("data").join("mail");
    write_config(
        dir,
        &format!(
            "[signup]\nrate_limits = [ {{ window = \"1m\", max = 100000000 }} ]\n\
             [mail]\nfile_dir = {:?}\nmax_mails_per_hour = {max_mails_per_hour}\n",
            mail_dir.display().to_string()
        ),
    )
}

/// Starts `signupd serve` on port 0 and waits for the line that names the bound port.
fn serve(config: &Path) -> Served {
    let mut child = signupd()
        .arg("serve")
        .arg("--config")
        .arg(config)
        .env("SIGNUPD_SERVER__LISTEN", "127.0.0.1:0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        // Keeps reading after the receiver is gone, so the server never blocks on a full pipe.
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let mut served = Served { child, port: 0, lines };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(line) = served.lines.recv_timeout(left) else {
            break;
        };
        if line.contains("signupd is listening") {
            served.port = line
                .split("port")
                .nth(1)
                .and_then(|rest| {
                    rest.trim_start_matches(|c: char| !c.is_ascii_digit()).split(|c: char| !c.is_ascii_digit()).next()
                })
                .and_then(|digits| digits.parse().ok())
                .unwrap_or_else(|| panic!("no port in {line:?}"));
            return served;
        }
        seen.push(line);
    }
    panic!("signupd serve did not start listening; its stderr:\n{}", seen.join("\n"));
}

impl Served {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// SIGKILL: no shutdown code runs.
    fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn sigterm(&self) {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success(), "kill -TERM {pid}");
    }

    /// The exit status, if the process ends within `limit`.
    async fn exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGTERM, and the process must exit with status 0 within the 10 s contract.
    async fn stop(mut self) {
        self.sigterm();
        let status = self.exit_within(Duration::from_secs(10)).await.expect("serve exits within 10 s of SIGTERM");
        assert_eq!(status.code(), Some(0), "{status:?}");
    }

    /// Waits until `/healthz` answers 200.
    async fn healthy(&self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(response) = client.get(self.url("/healthz")).send().await
                && response.status() == 200
            {
                return;
            }
            assert!(Instant::now() < deadline, "/healthz never answered 200");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn read_only(database: &Path) -> Connection {
    Connection::open_with_flags(database, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).unwrap()
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Mail files

/// The tokens the mails written so far carry, by recipient.
#[derive(Debug, Default, Clone)]
struct Tokens {
    confirm: Option<String>,
    manage: Option<String>,
}

/// Reads every `.eml` file in `dir` (oldest first: the names are UUIDv7), with quoted-printable
/// soft line breaks and `=3D` undone and headers unfolded. A file cut short by `kill -9` may lack
/// its recipient or a whole token; what it lacks is skipped.
fn tokens_by_recipient(dir: &Path) -> BTreeMap<String, Tokens> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let mut found: BTreeMap<String, Tokens> = BTreeMap::new();
    for file in files {
        let raw = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        let text = raw.replace("=\r\n", "").replace("=3D", "=").replace("\r\n ", " ").replace("\r\n\t", " ");
        let Some((head, _)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let Some(to) = head.split("\r\n").find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("To").then(|| recipient(value))
        }) else {
            continue;
        };
        let tokens = found.entry(to).or_default();
        if let Some(token) = token_after(&text, "/confirm?token=", &file) {
            tokens.confirm = Some(token);
        }
        if let Some(token) = token_after(&text, "/manage?token=", &file) {
            tokens.manage = Some(token);
        }
    }
    found
}

/// `Name <a@b>` or `a@b`, lowercased.
fn recipient(value: &str) -> String {
    let value = value.trim();
    let address = match (value.rfind('<'), value.rfind('>')) {
        (Some(open), Some(close)) if open < close => &value[open + 1..close],
        _ => value,
    };
    address.trim().to_ascii_lowercase()
}

/// The one complete 43-character token after `needle` in `text`, if any.
fn token_after(text: &str, needle: &str, file: &Path) -> Option<String> {
    let tokens: BTreeSet<String> = text
        .match_indices(needle)
        .map(|(at, _)| {
            text[at + needle.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect::<String>()
        })
        .filter(|token| token.len() == 43)
        .collect();
    assert!(tokens.len() <= 1, "{}: the {needle} links disagree: {tokens:?}", file.display());
    tokens.into_iter().next()
}

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

fn strings(conn: &Connection, sql: &str) -> BTreeSet<String> {
    let mut statement = conn.prepare(sql).unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

fn unix_now() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap()
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
    let config = config(dir.path(), 1_000_000);
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
        let client = client();
        let base = server.url("");
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
        tokio::time::sleep(Duration::from_millis(rng.between(BURST_MS / 4..BURST_MS * 3 / 4))).await;
        server.kill_9();
        for task in tasks {
            let (request, acknowledged) = task.await.unwrap();
            ledger.record(&request, acknowledged);
        }

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
    let config = config(dir.path(), 1000);
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
