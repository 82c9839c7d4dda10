//! Credentials found the way the packaged unit lays them out, by the real binary.
//!
//! On a Debian install the secrets are files in `/etc/signupd/credentials/`: `token_secret`,
//! `hash_key`, `smtp/password` and `webhook/<name>`. The unit loads the two directories whole,
//! and systemd flattens them (`$CREDENTIALS_DIRECTORY/webhook_crm`); an operator running a
//! command by hand sees the directory form. Regression: `check-config` and `send-test-webhook`
//! run with `CREDENTIALS_DIRECTORY=/etc/signupd/credentials` failed with "cannot read
//! …/webhook_crm", and `backup` pointed at the data directory for a hash key that lives beside
//! the configuration.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::helpers::{signupd, write_config};
use crate::webhook_receiver::{Receiver, Reply};

const TOKEN_SECRET: &str = "token-secret-token-secret-token-secret-0001\n";
const HASH_KEY: &str = "hash-key-hash-key-hash-key-hash-key-hash-0001\n";
const WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n";

/// How the credentials directory is laid out.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// As in `/etc/signupd/credentials/`: `smtp/password`, `webhook/crm`.
    OnDisk,
    /// As systemd hands them over: `smtp_password`, `webhook_crm`.
    Flattened,
}

/// Writes the credentials into `dir` in `layout`.
fn write_credentials(dir: &Path, layout: Layout) {
    let nested = matches!(layout, Layout::OnDisk);
    let files = [
        ("token_secret", TOKEN_SECRET),
        ("hash_key", HASH_KEY),
        (if nested { "smtp/password" } else { "smtp_password" }, "relay-password\n"),
        (if nested { "webhook/crm" } else { "webhook_crm" }, WEBHOOK_SECRET),
    ];
    for (path, contents) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

/// `<dir>/signupd.toml` as the package's: SMTP with a user name and no password file, one
/// webhook without a secret file, both left to the credentials.
fn packaged_config(dir: &Path, webhook_url: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    write_config(
        dir,
        &format!(
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"127.0.0.1\"\nport = 2525\nusername = \"relay-user\"\n\
             [[webhooks]]\nname = \"crm\"\nurl = \"{webhook_url}\"\n\
             [[lists]]\nid = \"news\"\nfrom = \"News <news@signupd.test>\"\n"
        ),
    )
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The test event's signature, checked with the secret the credentials hold: the secret found
/// is the one on disk, not some other.
fn assert_signed_with_the_credential(receiver: &Receiver, case: &str) {
    let requests = receiver.requests();
    assert_eq!(requests.len(), 1, "{case}: {requests:?}");
    let request = &requests[0];
    assert_eq!(request.json()["type"], "test", "{case}");
    let key = signupd::outbound::webhooks::parse_secret(WEBHOOK_SECRET).unwrap();
    let timestamp = request.header("webhook-timestamp").unwrap().parse().unwrap();
    let expected = signupd::outbound::webhooks::sign(&key, &request.webhook_id(), timestamp, &request.text());
    assert_eq!(request.header("webhook-signature"), Some(expected.as_str()), "{case}");
}

#[test]
fn commands_run_by_hand_find_the_credentials_beside_the_configuration_file() {
    // Arrange: a directory laid out like /etc/signupd
    let receiver = Receiver::start(Reply::Status(204));
    let etc = tempfile::tempdir().unwrap();
    let config = packaged_config(etc.path(), &receiver.url("/hook"));
    let credentials = etc.path().join("credentials");
    write_credentials(&credentials, Layout::OnDisk);

    // Act: no environment at all (`signupd()` clears $CREDENTIALS_DIRECTORY)
    let by_flag = run(signupd().arg("check-config").arg("--config").arg(&config));
    let by_env = run(signupd().arg("check-config").env("SIGNUPD_CONFIG", &config));
    let webhook = run(signupd().arg("send-test-webhook").arg("--config").arg(&config));

    // Assert
    for (case, output) in [("--config", &by_flag), ("SIGNUPD_CONFIG", &by_env)] {
        assert_eq!(output.status.code(), Some(0), "{case}: {}", stderr(output));
        let printed = stdout(output);
        assert!(printed.contains(&format!("# credentials directory: {}", credentials.display())), "{case}: {printed}");
        assert!(printed.contains(&format!("# hash key: {}", credentials.join("hash_key").display())), "{printed}");
        assert!(printed.contains(&format!("# token secret: {}", credentials.join("token_secret").display())));
        for secret in [TOKEN_SECRET, HASH_KEY, WEBHOOK_SECRET, "relay-password"] {
            assert!(!printed.contains(secret.trim_end()), "{case}: a secret printed: {printed}");
        }
    }
    assert_eq!(webhook.status.code(), Some(0), "{}{}", stdout(&webhook), stderr(&webhook));
    assert!(stdout(&webhook).starts_with("crm: 204"), "{}", stdout(&webhook));
    assert_signed_with_the_credential(&receiver, "beside the configuration");
}

#[test]
fn credentials_directory_is_read_in_either_layout() {
    for layout in [Layout::OnDisk, Layout::Flattened] {
        // Arrange: the configuration elsewhere, so only $CREDENTIALS_DIRECTORY can find them
        let receiver = Receiver::start(Reply::Status(204));
        let dir = tempfile::tempdir().unwrap();
        let config = packaged_config(&dir.path().join("etc"), &receiver.url("/hook"));
        let credentials = dir.path().join("run-credentials");
        write_credentials(&credentials, layout);

        // Act
        let checked =
            run(signupd().arg("check-config").arg("--config").arg(&config).env("CREDENTIALS_DIRECTORY", &credentials));
        let webhook = run(signupd()
            .arg("send-test-webhook")
            .arg("--config")
            .arg(&config)
            .env("CREDENTIALS_DIRECTORY", &credentials));

        // Assert
        assert_eq!(checked.status.code(), Some(0), "{layout:?}: {}", stderr(&checked));
        assert!(stdout(&checked).contains(&format!("# credentials directory: {}", credentials.display())));
        assert_eq!(webhook.status.code(), Some(0), "{layout:?}: {}{}", stdout(&webhook), stderr(&webhook));
        assert_signed_with_the_credential(&receiver, &format!("{layout:?}"));
    }
}

#[test]
fn a_missing_credential_is_reported_with_the_directory_that_was_searched() {
    // Arrange: the package layout without the webhook's secret
    let etc = tempfile::tempdir().unwrap();
    let config = packaged_config(etc.path(), "http://127.0.0.1:9/hook");
    let credentials = etc.path().join("credentials");
    write_credentials(&credentials, Layout::OnDisk);
    std::fs::remove_file(credentials.join("webhook/crm")).unwrap();

    // Act
    let checked = run(signupd().arg("check-config").arg("--config").arg(&config));
    let webhook = run(signupd().arg("send-test-webhook").arg("--config").arg(&config));

    // Assert
    for (command, output) in [("check-config", &checked), ("send-test-webhook", &webhook)] {
        let message = stderr(output);
        assert_eq!(output.status.code(), Some(1), "{command}: {message}");
        assert!(message.contains("webhooks[0].secret_file: not set"), "{command}: {message}");
        assert!(message.contains(&credentials.join("webhook/crm").display().to_string()), "{command}: {message}");
        assert!(message.contains(&credentials.join("webhook_crm").display().to_string()), "{command}: {message}");
    }
}

#[test]
fn backup_names_the_hash_key_file_it_found_not_the_data_directory() {
    // Arrange: a package-like layout with a migrated database
    let etc = tempfile::tempdir().unwrap();
    let config = packaged_config(etc.path(), "http://127.0.0.1:9/hook");
    let credentials = etc.path().join("credentials");
    write_credentials(&credentials, Layout::OnDisk);
    let migrated = run(signupd().arg("migrate").arg("--config").arg(&config));
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    let dest = etc.path().join("copy.sqlite3");

    // Act
    let backup = run(signupd().arg("backup").arg(&dest).arg("--config").arg(&config));

    // Assert
    assert_eq!(backup.status.code(), Some(0), "{}", stderr(&backup));
    let printed = stdout(&backup);
    let hint = format!("keep the hash key with it: {}", credentials.join("hash_key").display());
    assert!(printed.contains(&hint), "{printed}");
    // The unsubscribe links already sent need the token secret: named too, or a restored backup
    // breaks every link in the mail already sent.
    let hint = format!(
        "keep the token secret with it: {} (the credential token_secret)",
        credentials.join("token_secret").display()
    );
    assert!(printed.contains(&hint), "{printed}");
    assert!(!printed.contains(TOKEN_SECRET.trim_end()), "the secret itself printed: {printed}");
    assert!(!printed.contains("data directory"), "{printed}");
    assert!(!printed.contains(HASH_KEY.trim_end()), "the key itself printed: {printed}");

    // And where the hash key is not where this command looks, it says so.
    std::fs::rename(&credentials, etc.path().join("elsewhere")).unwrap();
    let again = run(signupd().arg("backup").arg(&dest).arg("--force").arg("--config").arg(&config));
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let warning = format!("the hash key should be {}", etc.path().join("data/hash_key").display());
    assert!(stdout(&again).contains(&warning), "{}", stdout(&again));
    let warning = format!("the token secret should be {}", etc.path().join("data/token_secret").display());
    assert!(stdout(&again).contains(&warning), "{}", stdout(&again));
    assert!(stdout(&again).contains("does not exist"), "{}", stdout(&again));
}

/// The shipped `packaging/signupd.toml` with its FILL IN values on a test domain and its
/// commented-out `[[api_tokens]]` example switched on (`# key` becomes `key`, `# # note` a
/// comment), as an operator following its comment would.
fn shipped_config_with_its_api_token_example(dir: &Path) -> PathBuf {
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/signupd.toml")).unwrap();
    let filled = shipped.replace("example.com", "signupd.test").replace("example.org", "signupd.test");
    let (before, example) =
        filled.split_once("# [[api_tokens]]").expect("the shipped config shows an [[api_tokens]] example");
    let example = format!("# [[api_tokens]]{example}");
    let switched_on: Vec<&str> = example.lines().map(|line| line.strip_prefix("# ").unwrap_or(line)).collect();
    let path = dir.join("signupd.toml");
    std::fs::write(&path, format!("{before}{}\n", switched_on.join("\n"))).unwrap();
    path
}

#[test]
fn the_shipped_api_token_example_works_as_its_comment_says_with_the_token_in_the_credentials() {
    // Arrange: /etc/signupd as the install guide lays it out, the token where the comment says
    let etc = tempfile::tempdir().unwrap();
    let config = shipped_config_with_its_api_token_example(etc.path());
    let credentials = etc.path().join("credentials");
    write_credentials(&credentials, Layout::OnDisk);
    let without_token = run(signupd().arg("check-config").arg("--config").arg(&config));
    let token = "n8n-token-of-at-least-32-characters-long";
    std::fs::create_dir_all(credentials.join("api_token")).unwrap();
    std::fs::write(credentials.join("api_token/n8n"), format!("{token}\n")).unwrap();

    // Act
    let with_token = run(signupd().arg("check-config").arg("--config").arg(&config));

    // Assert: refused without the file, naming where it goes; accepted with it, never printed
    assert_eq!(without_token.status.code(), Some(1), "{}", stdout(&without_token));
    assert!(
        stderr(&without_token).contains("api_tokens[0].token_file") && stderr(&without_token).contains("api_token/n8n")
    );
    assert_eq!(with_token.status.code(), Some(0), "{}", stderr(&with_token));
    let printed = stdout(&with_token);
    assert!(printed.contains("[[api_tokens]]\nname = \"n8n\""), "{printed}");
    assert!(printed.contains("scopes = [\"read\"]"), "{printed}");
    assert!(!printed.contains(token), "the token printed: {printed}");
}
