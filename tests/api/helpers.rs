//! The test harness: `spawn_app()` builds the real application on port 0 with a fresh data
//! directory, and `signupd()` runs the real binary.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use signupd::app::{Application, BuildOptions};
use signupd::clock::ManualClock;
use signupd::config::Config;
use signupd::web::state::AppState;
use tempfile::TempDir;

/// 2026-01-01T00:00:00Z: tests start here and move the clock explicitly.
pub const START: i64 = 1_767_225_600;

pub struct TestApp {
    pub address: String,
    pub state: AppState,
    #[allow(dead_code, reason = "the signup and mail suites move time")]
    pub clock: ManualClock,
    pub client: reqwest::Client,
    /// The port of `GET /metrics`, when the config sets `server.metrics_listen`.
    pub metrics_port: Option<u16>,
    /// Keeps the data directory alive for the test's duration.
    pub dir: TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Configuration for a test app in `dir`: `extra` TOML (one list `news` unless it names
/// lists), then port 0 and all data in `dir`. Unless `extra` sets `burst`, the paced budget's
/// burst is the whole hour's budget: the injected clock does not move by itself, and only the
/// tests of the pace should wait for it.
pub fn test_config(dir: &Path, extra: &str) -> Config {
    let lists = if extra.contains("lists") { "" } else { "[[lists]]\nid = \"news\"\nname = \"News\"\n" };
    let mut config = Config::from_toml(&format!("{extra}\n{lists}")).expect("test configuration is valid");
    if !extra.contains("burst") {
        config.mail.burst = config.mail.max_mails_per_hour;
    }
    config.server.listen = "127.0.0.1:0".parse().expect("an address");
    config.storage.data_dir = dir.to_owned();
    config.mail.file_dir = dir.join("mail");
    config
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with("").await
}

pub async fn spawn_app_with(extra: &str) -> TestApp {
    let dir = tempfile::tempdir().expect("temporary directory");
    spawn_app_in(dir, extra).await
}

/// Starts an app on an existing data directory (to test what survives a restart).
pub async fn spawn_app_in(dir: TempDir, extra: &str) -> TestApp {
    let config = test_config(dir.path(), extra);
    let clock = ManualClock::starting_at(START);
    let options = BuildOptions { clock: Arc::new(clock.clone()), credentials_dir: None, background_workers: false };
    let application = Application::build_with(config, options).await.expect("the app builds");
    let address = format!("http://127.0.0.1:{}", application.port());
    let metrics_port = application.metrics_port();
    let state = application.state().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    actix_web::rt::spawn(application.run_until_stopped(async move {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("HTTP client");
    TestApp { address, state, clock, client, metrics_port, dir, _stop: stop }
}

/// The real `signupd` binary, with `RUST_LOG` and `SIGNUPD_*` cleared so the caller's
/// environment cannot change the outcome.
pub fn signupd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_signupd"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("SIGNUPD_") {
            command.env_remove(&key);
        }
    }
    command.env_remove("RUST_LOG").env_remove("CREDENTIALS_DIRECTORY");
    command
}

/// A command's stderr after its first line, which says which configuration it read
/// (`signupd: configuration …` or `signupd: no configuration file …`; `docs/configuration.md`).
pub fn after_config_line(stderr: &str) -> &str {
    let (first, rest) = stderr.split_once('\n').unwrap_or((stderr, ""));
    if first.starts_with("signupd: configuration ") || first.starts_with("signupd: no configuration file") {
        rest
    } else {
        stderr
    }
}

/// Writes a config file into `dir` with data under `dir/data`. `serve` in tests listens on
/// port 0 through the environment, so `extra` may contain any table.
pub fn write_config(dir: &Path, extra: &str) -> PathBuf {
    let data = dir.join("data");
    let path = dir.join("signupd.toml");
    let lists = if extra.contains("lists") { "" } else { "[[lists]]\nid = \"news\"\n" };
    let text = format!("{extra}\n[storage]\ndata_dir = {:?}\n{lists}", data.display().to_string());
    std::fs::write(&path, text).expect("write config");
    path
}

/// Every file under `dir`, relative, sorted: to assert that a failed start wrote nothing.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap_or(&path).display().to_string());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The token of a mailed link that starts `text`: base64url characters, and the dot inside a
/// removal token `<subscriber id>.<secret>` — but not a dot that ends the sentence after the link.
pub fn link_token_at(text: &str) -> String {
    let token: String =
        text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == '.').collect();
    token.trim_end_matches('.').to_owned()
}

/// Whether `token` is whole: a confirm token (43 base64url characters), or a removal token (a
/// 36-character subscriber id, a dot and a 43-character secret).
pub fn is_whole_link_token(token: &str) -> bool {
    match token.split_once('.') {
        None => token.len() == 43,
        Some((id, secret)) => id.len() == 36 && secret.len() == 43,
    }
}

/// `python3`, able to `import` every module of `modules` (`"dkim, nacl"`): as installed, or else
/// with `requirements` (`["dkimpy==1.1.8", "pynacl==1.6.2"]`) installed by pip into the target
/// directory for the tests, once per test binary. `.ci/run` installs the same pins; this serves
/// a plain `cargo test`.
pub fn python_with(modules: &str, requirements: &[&str]) -> Command {
    static PYTHONPATHS: Mutex<BTreeMap<String, Option<PathBuf>>> = Mutex::new(BTreeMap::new());
    fn imports(modules: &str, dir: Option<&Path>) -> bool {
        let mut command = Command::new("python3");
        command.args(["-c", &format!("import {modules}")]);
        if let Some(dir) = dir {
            command.env("PYTHONPATH", dir);
        }
        command.output().is_ok_and(|output| output.status.success())
    }
    // Held while pip runs, so two tests never install into one directory at once.
    let mut found = PYTHONPATHS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = found
        .entry(requirements.join(" "))
        .or_insert_with(|| {
            if imports(modules, None) {
                return None;
            }
            let name: String =
                requirements.join("-").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("python-{name}"));
            if !imports(modules, Some(&dir)) {
                let output = Command::new("python3")
                    .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
                    .arg(&dir)
                    .args(requirements)
                    .output()
                    .unwrap_or_else(|error| panic!("this test needs python3: {error}"));
                assert!(
                    output.status.success() && imports(modules, Some(&dir)),
                    "pip could not install {requirements:?} into {}: {}",
                    dir.display(),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            Some(dir)
        })
        .clone();
    let mut command = Command::new("python3");
    if let Some(dir) = dir {
        command.env("PYTHONPATH", dir);
    }
    command
}

/// Runs the Python `script` with `python` (from [`python_with`]), `input` as JSON on its stdin;
/// returns the lines it prints. A failing script fails the test with its stderr.
pub fn run_python(mut python: Command, script: &str, input: &serde_json::Value) -> Vec<String> {
    let mut child = python
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run python3: {error}"));
    child.stdin.take().expect("a piped stdin").write_all(input.to_string().as_bytes()).expect("write to python");
    let output = child.wait_with_output().expect("python runs");
    assert!(output.status.success(), "python: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8 output").lines().map(str::to_owned).collect()
}

/// The code between the `<!-- {marker}:start -->` and `<!-- {marker}:end -->` lines of the
/// operations guide, without the fences: an example the guide shows, run as shown.
pub fn guide_example(marker: &str) -> String {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md")).unwrap();
    let start =
        guide.find(&format!("<!-- {marker}:start -->")).unwrap_or_else(|| panic!("{marker}:start in the guide"));
    let end = guide.find(&format!("<!-- {marker}:end -->")).unwrap_or_else(|| panic!("{marker}:end in the guide"));
    guide[start..end].lines().skip(1).filter(|line| !line.starts_with("```")).map(|line| format!("{line}\n")).collect()
}
