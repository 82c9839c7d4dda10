//! One loader for `serve` and `check-config`: every bad configuration below is refused by both,
//! with the same one-line message naming the key or file, and `serve` refuses it before it
//! writes anything (no data directory, no database, no generated secret). And the other way
//! round: a configuration `check-config` calls valid is one `serve` starts with.
//!
//! Regression: `check-config` used to say "configuration is valid" for an SMTP user name
//! without a password, which `serve` refused only after it had migrated the database.

use std::path::Path;

use crate::helpers::{files_under, signupd, write_config};
use crate::process;
use crate::process::spawn_serve;

/// A list whose sender is not a placeholder, so `mail.transport = "smtp"` is accepted.
const LIST: &str = "[[lists]]\nid = \"news\"\nfrom = \"News <news@signupd.test>\"\n";
/// An SMTP relay on loopback (nothing connects to it: no check may).
const SMTP: &str = "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"127.0.0.1\"\nport = 2525\n";
/// A throwaway Ed25519 DKIM key (32 bytes, base64), only for these tests.
const DKIM_KEY: &str = "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
const WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n";

/// A bad configuration. `{dir}` in `toml` and `expected` stands for the test's directory.
struct Case {
    name: &'static str,
    toml: &'static str,
    /// Files to create first, relative to the directory.
    files: &'static [(&'static str, &'static str)],
    /// What the error line must contain (the key, the file).
    expected: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "SMTP user name without a password",
        toml: "[mail.smtp]\nusername = \"relay-user\"",
        files: &[],
        expected: &["mail.smtp.username is set but there is no password", "no credentials directory"],
    },
    Case {
        name: "a missing SMTP password_file",
        toml: "[mail.smtp]\nusername = \"relay-user\"\npassword_file = \"{dir}/smtp-password\"",
        files: &[],
        expected: &["mail.smtp.password_file: cannot read {dir}/smtp-password"],
    },
    Case {
        name: "a missing DKIM key file",
        toml: "[mail.dkim]\nselector = \"s1\"\ndomain = \"signupd.test\"\nalgorithm = \"ed25519\"\nprivate_key_file = \"{dir}/dkim.key\"",
        files: &[],
        expected: &["mail.dkim.private_key_file: cannot read {dir}/dkim.key"],
    },
    Case {
        name: "a missing webhook secret file",
        toml: "[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret_file = \"{dir}/crm.secret\"",
        files: &[],
        expected: &["webhooks[0].secret_file: cannot read {dir}/crm.secret"],
    },
    Case {
        name: "a malformed webhook secret",
        toml: "[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret_file = \"{dir}/crm.secret\"",
        files: &[("crm.secret", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n")],
        expected: &["webhooks[0].secret_file: the secret in {dir}/crm.secret must start with \"whsec_\""],
    },
    Case {
        name: "a webhook without secret_file or credential",
        toml: "[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"",
        files: &[("credentials/token_secret", "0123456789abcdef0123456789abcdef")],
        expected: &[
            "webhooks[0].secret_file: not set",
            "neither {dir}/credentials/webhook_crm nor {dir}/credentials/webhook/crm exists",
        ],
    },
    Case {
        name: "two different copies of one credential",
        toml: "[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"",
        files: &[
            ("credentials/webhook_crm", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"),
            ("credentials/webhook/crm", "whsec_c2Vjb25kLXNlY3JldC1vZi0yNC1ieXRlcy4=\n"),
        ],
        expected: &["{dir}/credentials/webhook_crm and {dir}/credentials/webhook/crm both exist and differ"],
    },
    Case {
        name: "a missing custom_css_file",
        toml: "[server]\ncustom_css_file = \"{dir}/brand.css\"",
        files: &[],
        expected: &["server.custom_css_file: {dir}/brand.css cannot be read"],
    },
    Case {
        name: "a missing blocked_domains_file",
        toml: "[signup]\nblocked_domains_file = \"{dir}/blocked.txt\"",
        files: &[],
        expected: &["signup.blocked_domains_file", "{dir}/blocked.txt"],
    },
    Case {
        name: "a hash_key_file that is too short",
        toml: "[secrets]\nhash_key_file = \"{dir}/hash.key\"",
        files: &[("hash.key", "short\n")],
        expected: &["secrets.hash_key_file: {dir}/hash.key holds 5 bytes"],
    },
];

/// `dir` with the case's files and its configuration (SMTP transport, one list); the config path.
fn arrange(dir: &Path, toml: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    for (path, contents) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    let toml = toml.replace("{dir}", &dir.display().to_string());
    // The case's tables after the SMTP ones, so a case may add keys to `[mail.smtp]`.
    let toml = match toml.strip_prefix("[mail.smtp]\n") {
        Some(smtp_keys) => format!("{SMTP}{smtp_keys}\n{LIST}"),
        None => format!("{SMTP}\n{toml}\n{LIST}"),
    };
    write_config(dir, &toml)
}

/// `signupd serve --config PATH` until it exits; its stderr. Should it start listening
/// instead (the check under test is missing), it is killed and the test fails: no test waits
/// on a server that should never have started.
fn serve_until_it_exits(config: &Path) -> (Option<i32>, String) {
    let mut served = spawn_serve(config);
    if let Some(line) = served.line_matching(|line| line.contains("signupd is listening")) {
        served.kill();
        panic!("serve started with a configuration it must refuse; its stderr:\n{}\n{line}", served.seen().join("\n"));
    }
    (served.wait(), served.log())
}

/// The `signupd: error: …` line.
fn error_line(stderr: &str) -> &str {
    stderr.lines().find(|line| line.starts_with("signupd: error: ")).unwrap_or_default()
}

#[test]
fn check_config_and_serve_refuse_the_same_bad_configurations_alike_and_serve_writes_nothing() {
    for case in CASES {
        // Arrange
        let dir = tempfile::tempdir().unwrap();
        let config = arrange(dir.path(), case.toml, case.files);
        let before = files_under(dir.path());
        let expected: Vec<String> =
            case.expected.iter().map(|text| text.replace("{dir}", &dir.path().display().to_string())).collect();

        // Act
        let checked = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();
        let (served, serve_stderr) = serve_until_it_exits(&config);

        // Assert
        let check_stderr = String::from_utf8_lossy(&checked.stderr);
        assert_eq!(checked.status.code(), Some(1), "{}: check-config: {check_stderr}", case.name);
        assert!(!String::from_utf8_lossy(&checked.stdout).contains("valid"), "{}: check-config said valid", case.name);
        assert_eq!(served, Some(1), "{}: serve: {serve_stderr}", case.name);
        let (check_error, serve_error) = (error_line(&check_stderr), error_line(&serve_stderr));
        for text in &expected {
            assert!(check_error.contains(text), "{}: expected {text:?} from check-config: {check_stderr}", case.name);
        }
        assert_eq!(check_error, serve_error, "{}: one message from both", case.name);
        assert_eq!(files_under(dir.path()), before, "{}: serve wrote something", case.name);
        assert!(!dir.path().join("data").exists(), "{}: no data directory", case.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_check_config_calls_valid_is_served() {
    // Arrange: every file and credential the table above gets wrong, right
    let dir = tempfile::tempdir().unwrap();
    let toml = "[mail.smtp]\nusername = \"relay-user\"\npassword_file = \"{dir}/smtp-password\"\n\
                [mail.dkim]\nselector = \"s1\"\ndomain = \"signupd.test\"\nalgorithm = \"ed25519\"\nprivate_key_file = \"{dir}/dkim.key\"\n\
                [[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret_file = \"{dir}/crm.secret\"\n\
                [[webhooks]]\nname = \"chat\"\nurl = \"http://127.0.0.1:9/chat\"\n\
                [server]\ncustom_css_file = \"{dir}/brand.css\"\n\
                [signup]\nblocked_domains_file = \"{dir}/blocked.txt\"\n\
                [secrets]\nhash_key_file = \"{dir}/hash.key\"";
    let hash_key = "h".repeat(40);
    let files = [
        ("smtp-password", "relay-password\n"),
        ("dkim.key", DKIM_KEY),
        ("crm.secret", WEBHOOK_SECRET),
        ("credentials/webhook/chat", WEBHOOK_SECRET),
        ("brand.css", "body { font-family: serif; }\n"),
        ("blocked.txt", "mailinator.com\n"),
        ("hash.key", hash_key.as_str()),
    ];
    let config = arrange(dir.path(), toml, &files);

    // Act
    let checked = signupd().arg("check-config").arg("--config").arg(&config).output().unwrap();

    // Assert: valid, then served
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stderr));
    assert!(stdout.starts_with("# configuration is valid"), "{stdout}");
    assert!(!stdout.contains("relay-password") && !stdout.contains(&hash_key), "a secret printed: {stdout}");
    let server = process::serve(&config);
    let client = process::client();
    let readyz = client.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 200);
    server.stop().await;
}
