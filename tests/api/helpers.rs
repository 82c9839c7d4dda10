//! The test harness: `spawn_app()` builds the real application on port 0 with a fresh data
//! directory, and `signupd()` runs the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use signupd::app::{Application, BuildOptions};
use signupd::clock::ManualClock;
use signupd::config::Config;
use signupd::state::AppState;
use tempfile::TempDir;

/// 2026-01-01T00:00:00Z: tests start here and move the clock explicitly.
pub const START: i64 = 1_767_225_600;

pub struct TestApp {
    pub address: String,
    pub state: AppState,
    #[allow(dead_code, reason = "the signup and mail suites move time")]
    pub clock: ManualClock,
    pub client: reqwest::Client,
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
/// lists), then port 0 and all data in `dir`.
pub fn test_config(dir: &Path, extra: &str) -> Config {
    let lists = if extra.contains("lists") { "" } else { "[[lists]]\nid = \"news\"\nname = \"News\"\n" };
    let mut config = Config::from_toml(&format!("{extra}\n{lists}")).expect("test configuration is valid");
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
    let state = application.state().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    actix_web::rt::spawn(application.run_until_stopped(async move {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("HTTP client");
    TestApp { address, state, clock, client, dir, _stop: stop }
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
