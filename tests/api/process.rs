//! Running the real binary: `signupd serve` as a child process on port 0 (its bound ports read
//! from its log), killed when dropped; the `.eml` files its file transport writes, read back into
//! the tokens they carry; and read-only looks at its database file.

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
pub struct Served {
    child: Child,
    pub port: u16,
    /// The bound metrics port, when `server.metrics_listen` is set.
    pub metrics_port: Option<u16>,
    /// Every stderr line, as the server writes it.
    lines: mpsc::Receiver<String>,
    /// The stderr lines read so far.
    seen: Vec<String>,
}

/// The surge alert, and with it surge mode, turned off: these tests sign up hundreds at once.
pub const NO_SURGE: &str = "surge_alert = { window = \"10m\", max = 0 }";

/// A config in `dir` (data under `dir/data`, mail files under `dir/data/mail`) with the rate
/// limit and surge mode out of the way (a test that wants the surge alert replaces
/// [`NO_SURGE`]) and the given mail budget, all of it available at once (`burst`). `extra` is
/// appended as is (it must not open `[signup]` or `[mail]`); without a `[[lists]]` table there,
/// the list is `news`.
pub fn config(dir: &Path, max_mails_per_hour: u32, extra: &str) -> PathBuf {
    let mail_dir = dir.join("data").join("mail");
    write_config(
        dir,
        &format!(
            "[signup]\nrate_limits = [ {{ window = \"1m\", max = 100000000 }} ]\nnetwork_rate_limits = []\n{NO_SURGE}\n\
             [mail]\nfile_dir = {:?}\nmax_mails_per_hour = {max_mails_per_hour}\nburst = {max_mails_per_hour}\n{extra}",
            mail_dir.display().to_string()
        ),
    )
}

/// Starts `signupd serve` on port 0 without waiting for it to listen: for a start that must fail.
pub fn spawn_serve(config: &Path) -> Served {
    spawn_serve_with(config, &[])
}

/// [`spawn_serve`] with the variables `env` set (`RUST_LOG`).
pub fn spawn_serve_with(config: &Path, env: &[(&str, &str)]) -> Served {
    let mut child = signupd()
        .arg("serve")
        .arg("--config")
        .arg(config)
        .env("SIGNUPD_SERVER__LISTEN", "127.0.0.1:0")
        .envs(env.iter().copied())
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
    Served { child, port: 0, metrics_port: None, lines, seen: Vec::new() }
}

/// Starts `signupd serve` on port 0 and waits for the line that names the bound port (and the
/// metrics port, if any).
pub fn serve(config: &Path) -> Served {
    serve_with(config, &[])
}

/// [`serve`] with the variables `env` set (`RUST_LOG`).
pub fn serve_with(config: &Path, env: &[(&str, &str)]) -> Served {
    let mut served = spawn_serve_with(config, env);
    let Some(line) = served.line_matching(|line| line.contains("signupd is listening")) else {
        panic!("signupd serve did not start listening; its stderr:\n{}", served.seen.join("\n"));
    };
    served.port = port_field(&line, "port").unwrap_or_else(|| panic!("no port in {line:?}"));
    served.metrics_port = port_field(&line, "metrics_port");
    served
}

/// The number in the log field `name=1234` (text) or `"name":1234` (JSON).
fn port_field(line: &str, name: &str) -> Option<u16> {
    let (text, json) = (format!(" {name}="), format!("\"{name}\":"));
    let at = match line.find(&text) {
        Some(at) => at + text.len(),
        None => line.find(&json)? + json.len(),
    };
    line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

impl Served {
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn sigterm(&self) {
        self.signal("TERM");
    }

    /// Sends the signal `name` (`HUP`, `TERM`, …).
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill").arg(format!("-{name}")).arg(&pid).status().unwrap();
        assert!(sent.success(), "kill -{name} {pid}");
    }

    /// The next stderr line that `wanted` accepts, within 30 s; `None` when the process ended
    /// (or stayed silent) first. Every line read is kept in [`Self::seen`].
    pub fn line_matching(&mut self, wanted: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else {
                return None;
            };
            self.seen.push(line.clone());
            if wanted(&line) {
                return Some(line);
            }
        }
        None
    }

    /// Like [`Self::line_matching`], and the test fails without the line.
    pub fn wait_for(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        self.line_matching(wanted)
            .unwrap_or_else(|| panic!("expected log line not seen; stderr so far:\n{}", self.seen.join("\n")))
    }

    /// The stderr lines read so far.
    pub fn seen(&self) -> &[String] {
        &self.seen
    }

    /// Every stderr line the process has written by now.
    pub fn log(&mut self) -> String {
        self.seen.extend(self.lines.try_iter());
        self.seen.join("\n")
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the process to end; its exit code.
    pub fn wait(&mut self) -> Option<i32> {
        self.child.wait().unwrap().code()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The exit status, if the process ends within `limit`.
    pub async fn exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
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
    pub async fn stop(mut self) {
        self.sigterm();
        let status = self.exit_within(Duration::from_secs(10)).await.expect("serve exits within 10 s of SIGTERM");
        assert_eq!(status.code(), Some(0), "{status:?}");
    }

    /// Waits until `/healthz` answers 200.
    pub async fn healthy(&self, client: &reqwest::Client) {
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

    /// The stderr lines not yet read, up to the end of the stream (the process has exited).
    pub fn remaining_stderr(&self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            lines.push(line);
        }
        lines
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

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// The database file, read-only

pub fn read_only(database: &Path) -> Connection {
    Connection::open_with_flags(database, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).unwrap()
}

pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

pub fn strings(conn: &Connection, sql: &str) -> BTreeSet<String> {
    let mut statement = conn.prepare(sql).unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

pub fn unix_now() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Mail files

/// The tokens the mails written so far carry, by recipient.
#[derive(Debug, Default, Clone)]
pub struct Tokens {
    pub confirm: Option<String>,
    pub manage: Option<String>,
    /// How many mails (complete enough to name the recipient) went to this address.
    pub mails: usize,
}

/// Reads every `.eml` file in `dir` (oldest first: the names are UUIDv7), with quoted-printable
/// soft line breaks and `=3D` undone and headers unfolded. A file cut short by `kill -9` may lack
/// its recipient or a whole token; what it lacks is skipped.
pub fn tokens_by_recipient(dir: &Path) -> BTreeMap<String, Tokens> {
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
        tokens.mails += 1;
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

/// The one complete token after `needle` in `text`, if any.
fn token_after(text: &str, needle: &str, file: &Path) -> Option<String> {
    let tokens: BTreeSet<String> = text
        .match_indices(needle)
        .map(|(at, _)| crate::helpers::link_token_at(&text[at + needle.len()..]))
        .filter(|token| crate::helpers::is_whole_link_token(token))
        .collect();
    assert!(tokens.len() <= 1, "{}: the {needle} links disagree: {tokens:?}", file.display());
    tokens.into_iter().next()
}
