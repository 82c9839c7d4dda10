//! Start-up in process: secrets, migrations, and failures that must write nothing; and the
//! real binary's clean stop, which leaves the database as one file.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use signupd::app::{Application, BuildOptions};
use signupd::clock::SystemClock;
use signupd::storage::LATEST_VERSION;

use crate::helpers::{files_under, spawn_app, spawn_app_in, test_config};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[actix_web::test]
async fn first_start_creates_private_secrets_and_the_migrated_database() {
    let app = spawn_app().await;
    let dir = app.data_dir();
    assert_eq!(mode(&dir.join("token_secret")), 0o600);
    assert_eq!(mode(&dir.join("hash_key")), 0o600);
    assert_eq!(mode(&dir.join("signupd.sqlite3")), 0o600);
    assert_ne!(app.state.secrets.token_secret, app.state.secrets.hash_key, "two independent secrets");
    let conn = rusqlite::Connection::open(dir.join("signupd.sqlite3")).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version as usize, LATEST_VERSION);
}

#[actix_web::test]
async fn a_restart_reuses_the_secrets_and_migrates_as_a_no_op() {
    let first = spawn_app().await;
    let secret = first.state.secrets.token_secret.clone();
    let hash_key = first.state.secrets.hash_key.clone();
    let TestAppParts { dir } = TestAppParts::from(first);

    let second = spawn_app_in(dir, "").await;
    assert_eq!(second.state.secrets.token_secret, secret);
    assert_eq!(second.state.secrets.hash_key, hash_key);
    assert_eq!(second.state.writer.migrations_applied(), 0, "already at the latest version");
}

struct TestAppParts {
    dir: tempfile::TempDir,
}

impl From<crate::helpers::TestApp> for TestAppParts {
    fn from(app: crate::helpers::TestApp) -> Self {
        Self { dir: app.dir }
    }
}

#[actix_web::test]
async fn credentials_directory_secrets_are_used_when_present() {
    let dir = tempfile::tempdir().unwrap();
    let credentials = tempfile::tempdir().unwrap();
    std::fs::write(credentials.path().join("token_secret"), "c".repeat(40)).unwrap();
    let config = test_config(dir.path(), "");
    let options = BuildOptions {
        clock: Arc::new(SystemClock),
        credentials_dir: Some(credentials.path().to_owned()),
        background_workers: false,
    };
    let app = Application::build_with(config, options).await.unwrap();
    assert_eq!(app.state().secrets.token_secret.expose(), "c".repeat(40).as_bytes());
    assert!(!dir.path().join("token_secret").exists(), "no generated secret beside a credential");
    assert!(dir.path().join("hash_key").exists(), "the hash key had no credential, so it was generated");
}

#[actix_web::test]
async fn failed_starts_name_the_problem_and_write_nothing() {
    struct Case {
        name: &'static str,
        extra: &'static str,
        prepare: fn(&std::path::Path),
        expected: &'static str,
    }
    let cases = [
        Case {
            name: "unreadable secret file",
            extra: "[secrets]\ntoken_secret_file = \"/nonexistent/signupd/token_secret\"",
            prepare: |_| {},
            expected: "secrets.token_secret_file: cannot read /nonexistent/signupd/token_secret",
        },
        Case {
            name: "secret too short",
            extra: "[secrets]\nhash_key_file = \"/tmp/signupd-test-short-secret\"",
            prepare: |_| std::fs::write("/tmp/signupd-test-short-secret", "short").unwrap(),
            expected: "secrets.hash_key_file: /tmp/signupd-test-short-secret holds 5 bytes",
        },
        Case {
            name: "unreadable verify-only secret",
            extra: "[secrets]\nverify_only_secret_files = [\"/nonexistent/old\"]",
            prepare: |_| {},
            expected: "secrets.verify_only_secret_files[0]: cannot read /nonexistent/old",
        },
        // Regression: the SMTP password and the webhook secrets used to be read after the
        // database was created and migrated.
        Case {
            name: "SMTP user name without a password",
            extra: "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"127.0.0.1\"\nusername = \"relay-user\"\n\
                    [[lists]]\nid = \"news\"\nfrom = \"News <news@signupd.test>\"",
            prepare: |_| {},
            expected: "mail.smtp.username is set but there is no password",
        },
        Case {
            name: "missing DKIM key",
            extra: "[mail.dkim]\nselector = \"s1\"\ndomain = \"signupd.test\"\nprivate_key_file = \"/nonexistent/dkim.pem\"",
            prepare: |_| {},
            expected: "mail.dkim.private_key_file: cannot read /nonexistent/dkim.pem",
        },
        Case {
            name: "missing webhook secret",
            extra: "[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/\"\nsecret_file = \"/nonexistent/crm\"",
            prepare: |_| {},
            expected: "webhooks[0].secret_file: cannot read /nonexistent/crm",
        },
        Case {
            name: "missing custom stylesheet",
            extra: "[server]\ncustom_css_file = \"/nonexistent/brand.css\"",
            prepare: |_| {},
            expected: "server.custom_css_file: /nonexistent/brand.css cannot be read",
        },
        Case {
            name: "missing blocked domains file",
            extra: "[signup]\nblocked_domains_file = \"/nonexistent/blocked.txt\"",
            prepare: |_| {},
            expected: "signup.blocked_domains_file",
        },
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        (case.prepare)(dir.path());
        let config = test_config(&dir.path().join("data"), case.extra);
        let options = BuildOptions { clock: Arc::new(SystemClock), credentials_dir: None, background_workers: false };
        let error = format!("{:#}", Application::build_with(config, options).await.unwrap_err());
        assert!(error.contains(case.expected), "{}: expected {:?} in {error:?}", case.name, case.expected);
        assert_eq!(files_under(dir.path()), Vec::<String>::new(), "{}: nothing may be written", case.name);
    }
}

#[actix_web::test]
async fn a_data_dir_that_cannot_be_created_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where a parent directory should be: even root cannot create below it.
    std::fs::write(dir.path().join("file"), "").unwrap();
    let data_dir = dir.path().join("file/data");
    let config = test_config(&data_dir, "");
    let options = BuildOptions { clock: Arc::new(SystemClock), credentials_dir: None, background_workers: false };
    let error = format!("{:#}", Application::build_with(config, options).await.unwrap_err());
    assert!(error.starts_with("storage.data_dir: cannot create directory"), "{error}");
    assert!(error.contains(&data_dir.display().to_string()), "{error}");
    assert_eq!(files_under(dir.path()), ["file"]);
}

#[actix_web::test]
async fn a_database_from_a_newer_signupd_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("signupd.sqlite3");
    {
        let conn = rusqlite::Connection::open(&db_path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let before = std::fs::read(&db_path).unwrap();
    let config = test_config(dir.path(), "");
    let options = BuildOptions { clock: Arc::new(SystemClock), credentials_dir: None, background_workers: false };
    let error = format!("{:#}", Application::build_with(config, options).await.unwrap_err());
    assert!(error.contains("schema version 99"), "{error}");
    assert!(error.contains("newer signupd"), "{error}");
    assert_eq!(std::fs::read(&db_path).unwrap(), before, "the database is unchanged");
    assert_eq!(files_under(dir.path()), ["signupd.sqlite3"], "no secrets, no WAL files");
}

/// Regression: after a clean SIGTERM a 160 KB `-wal` and the `-shm` stayed beside the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_leaves_only_the_database_file() {
    // Arrange: a served signup, so the WAL has frames
    let dir = tempfile::tempdir().unwrap();
    let config = crate::process::config(dir.path(), 1000, "");
    let server = crate::process::serve(&config);
    let client = crate::process::client();
    let response = client
        .post(server.url("/api/signup"))
        .form(&[("email", "ann@example.net"), ("consent", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let data = dir.path().join("data");
    assert!(data.join("signupd.sqlite3-wal").exists(), "WAL mode while serving");

    // Act: SIGTERM, exit 0
    server.stop().await;

    // Assert
    let database: Vec<String> =
        files_under(&data).into_iter().filter(|name| name.starts_with("signupd.sqlite3")).collect();
    assert_eq!(database, ["signupd.sqlite3"], "no -wal or -shm after a clean stop");
    let conn = crate::process::read_only(&data.join("signupd.sqlite3"));
    assert_eq!(
        crate::process::count(&conn, "SELECT count(*) FROM intake")
            + crate::process::count(&conn, "SELECT count(*) FROM subscribers"),
        1,
        "the signup is in the file"
    );
}
