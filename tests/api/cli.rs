//! The real binary: exit codes, check-config, migrate, gen-secret, serve's access log and
//! graceful shutdown.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{after_config_line, files_under, signupd, write_config};

#[test]
fn check_config_accepts_the_example_file() {
    let output = signupd().args(["check-config", "--config", "config.example.toml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("listen = \"127.0.0.1:8080\""), "{stdout}");
}

#[test]
fn check_config_reports_bad_keys_with_exit_code_1() {
    let cases = [
        ("unknown key", "[server]\nlissten = \"x\"", "server.lissten: unknown key"),
        ("bad duration", "[signup]\nresend_cooldown = \"soon\"", "signup.resend_cooldown"),
        ("bad URL", "[server]\npublic_url = \"example.com\"", "server.public_url"),
        ("duplicate list id", "[[lists]]\nid = \"a\"\n[[lists]]\nid = \"a\"", "lists[1].id: duplicate list id \"a\""),
        ("bad CIDR", "[server]\ntrusted_proxies = [\"1.2.3.4/99\"]", "server.trusted_proxies"),
        ("bad cron", "[cleanup]\nschedule = \"hourly\"", "cleanup.schedule"),
        ("missing lists", "lists = []", "lists: no list configured"),
    ];
    for (name, extra, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(dir.path(), extra);
        let output = signupd().arg("check-config").arg("--config").arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(expected), "{name}: expected {expected:?} in {stderr:?}");
        assert_eq!(after_config_line(&stderr).trim_end().lines().count(), 1, "{name}: one line after the file's");
        assert!(!dir.path().join("data").exists(), "{name}: nothing written");
    }
}

#[test]
fn serve_with_a_bad_config_exits_1_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "[secrets]\ntoken_secret_file = \"/nonexistent/secret\"");
    let output = signupd().arg("serve").arg("--config").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("secrets.token_secret_file: cannot read /nonexistent/secret"), "{stderr}");
    assert_eq!(files_under(dir.path()), ["signupd.toml"]);
}

#[test]
fn a_missing_config_file_is_named() {
    let output = signupd().args(["check-config", "--config", "/nonexistent/signupd.toml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read config file /nonexistent/signupd.toml"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(signupd().arg("frobnicate").output().unwrap().status.code(), Some(2));
    assert_eq!(signupd().output().unwrap().status.code(), Some(2));
    assert_eq!(signupd().args(["serve", "--bogus"]).output().unwrap().status.code(), Some(2));
    let version = signupd().arg("--version").output().unwrap();
    assert_eq!(version.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("signupd "));
}

#[test]
fn environment_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "[signup]\nconfirm_ttl = \"24h\"");
    let output = signupd()
        .arg("check-config")
        .env("SIGNUPD_CONFIG", &path)
        .env("SIGNUPD_SIGNUP__CONFIRM_TTL", "12h")
        .env("SIGNUPD_MAIL__SMTP__PASSWORD", "hunter2-hunter2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("confirm_ttl = \"12h\""), "{stdout}");
    assert!(!stdout.contains("hunter2"), "the password is never printed");
    assert!(stdout.contains("# SMTP password: set, from SIGNUPD_MAIL__SMTP__PASSWORD"), "{stdout}");
}

#[test]
fn environment_values_are_checked_and_named_too() {
    let output = signupd().arg("check-config").env("SIGNUPD_SERVER__IPV6_PREFIX", "200").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("server.ipv6_prefix"));
}

#[test]
fn gen_secret_prints_a_fresh_64_character_secret() {
    let first = signupd().arg("gen-secret").output().unwrap();
    let second = signupd().arg("gen-secret").output().unwrap();
    let first = String::from_utf8(first.stdout).unwrap();
    assert_eq!(first.trim_end().len(), 64);
    assert!(first.trim_end().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_ne!(first, String::from_utf8(second.stdout).unwrap());
}

#[test]
fn migrate_applies_then_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "");
    let first = signupd().arg("migrate").arg("--config").arg(&path).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let every_migration = format!("applied {} migration(s)", signupd::storage::LATEST_VERSION);
    assert!(String::from_utf8_lossy(&first.stdout).starts_with(&every_migration));
    let second = signupd().arg("migrate").arg("--config").arg(&path).output().unwrap();
    assert!(String::from_utf8_lossy(&second.stdout).starts_with("applied 0 migration(s)"));
    assert!(dir.path().join("data/signupd.sqlite3").exists());
}

/// A running `signupd serve` whose stderr is read line by line.
struct Served {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    port: u16,
}

fn serve(config: &std::path::Path, extra_env: &[(&str, &str)]) -> Served {
    let mut command = signupd();
    command
        .arg("serve")
        .arg("--config")
        .arg(config)
        .env("SIGNUPD_SERVER__LISTEN", "127.0.0.1:0")
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for (key, value) in extra_env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut served = Served { child, lines, port: 0 };
    let line = served.wait_for_line(|line| line.contains("signupd is listening"));
    served.port = line
        .split("port")
        .nth(1)
        .and_then(|rest| {
            rest.trim_start_matches(|c: char| !c.is_ascii_digit()).split(|c: char| !c.is_ascii_digit()).next()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    served
}

impl Served {
    fn wait_for_line(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        panic!("expected log line not seen; saw:\n{}", seen.join("\n"));
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(killed.success());
        self.child.wait().unwrap()
    }
}

/// A test that fails half-way must not leave a server running after the test binary exits.
impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn get(port: u16, path_and_query: &str) -> u16 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path_and_query} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap()
}

#[test]
fn the_access_log_records_the_path_but_never_the_query() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let mut served = serve(&config, &[]);
    assert_eq!(get(served.port, "/healthz?token=abc"), 200);
    let line = served.wait_for_line(|line| line.contains("signupd::access"));
    assert!(line.contains("/healthz"), "{line}");
    assert!(line.contains("200"), "{line}");
    assert!(line.contains("request_id"), "{line}");
    assert!(!line.contains("abc"), "the query string leaked: {line}");
    assert!(!line.contains("token"), "the query string leaked: {line}");
    assert_eq!(served.terminate().code(), Some(0));
}

#[test]
fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let mut served = serve(&config, &[("SIGNUPD_SERVER__LOG_FORMAT", "json")]);
    assert_eq!(get(served.port, "/readyz?x=secret"), 200);
    let line = served.wait_for_line(|line| line.contains("signupd::access"));
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(value["path"], "/readyz");
    assert_eq!(value["status"], 200);
    assert!(!line.contains("secret"));
    assert_eq!(served.terminate().code(), Some(0));
}

#[test]
fn sigterm_stops_serve_with_exit_code_0() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let served = serve(&config, &[]);
    assert_eq!(get(served.port, "/healthz"), 200);
    let status = served.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn serve_starts_with_the_example_config() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_str = data.display().to_string();
    let served = serve(std::path::Path::new("config.example.toml"), &[("SIGNUPD_STORAGE__DATA_DIR", &data_str)]);
    assert_eq!(get(served.port, "/readyz"), 200);
    assert!(data.join("signupd.sqlite3").exists());
    assert_eq!(served.terminate().code(), Some(0));
}
