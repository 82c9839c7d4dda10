//! Which configuration a command reads, and what it may not hold (`docs/configuration.md`,
//! "Where values come from" and the SMTP password): the real binary, its stderr line,
//! its refusal. The default path itself (`/etc/signupd/signupd.toml`) is chosen in `signupd::config::source`'s
//! unit tests, with the path as a parameter: a test that created the real file would change
//! what every other test running the binary without `--config` reads.

use std::path::Path;
use std::process::Output;

use crate::helpers::{files_under, signupd, write_config};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `mail.file_dir` under `dir` (its default, `./data/mail`, is relative to the working directory).
fn mail_in(dir: &Path) -> String {
    format!("[mail]\ntransport = \"file\"\nfile_dir = {:?}", dir.join("data/mail").display().to_string())
}

#[test]
fn every_command_that_reads_a_configuration_says_which_one_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &mail_in(dir.path()));
    let flag_line = format!("signupd: configuration {} (from --config)\n", path.display());
    let environment_line = format!("signupd: configuration {} (from SIGNUPD_CONFIG)\n", path.display());
    let commands: &[&[&str]] = &[
        &["check-config"],
        &["migrate"],
        &["stats"],
        &["audit"],
        &["snippet", "--list", "news"],
        &["send-test-mail", "--to", "ops@example.com"],
    ];
    for command in commands {
        let by_flag = signupd().args(*command).arg("--config").arg(&path).output().unwrap();
        assert_eq!(by_flag.status.code(), Some(0), "{command:?}: {}", stderr(&by_flag));
        assert!(stderr(&by_flag).starts_with(&flag_line), "{command:?}: {}", stderr(&by_flag));

        let by_environment = signupd().args(*command).env("SIGNUPD_CONFIG", &path).output().unwrap();
        assert_eq!(by_environment.status.code(), Some(0), "{command:?}: {}", stderr(&by_environment));
        assert!(stderr(&by_environment).starts_with(&environment_line), "{command:?}: {}", stderr(&by_environment));
    }
}

#[test]
fn the_flag_wins_over_signupd_config_and_the_line_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "");
    let output = signupd()
        .args(["check-config", "--config"])
        .arg(&path)
        .env("SIGNUPD_CONFIG", "/nonexistent/signupd.toml")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), format!("signupd: configuration {} (from --config)\n", path.display()));
}

#[test]
fn the_line_names_every_signupd_variable_that_changes_the_configuration_and_never_its_value() {
    // Arrange: a shell left with a data directory elsewhere and a password
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &mail_in(dir.path()));
    let elsewhere = dir.path().join("elsewhere");
    let flag_line = format!("configuration {} (from --config)", path.display());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let commands: &[&[&str]] = &[&["migrate"], &["stats"], &["check-config"], &["serve"]];
    for command in commands {
        // Act (`serve` stops at once: its listen address is taken)
        let output = signupd()
            .args(*command)
            .arg("--config")
            .arg(&path)
            .env("SIGNUPD_STORAGE__DATA_DIR", &elsewhere)
            .env("SIGNUPD_MAIL__SMTP__PASSWORD", "hunter2-in-the-shell")
            .env("SIGNUPD_SERVER__LISTEN", taken.local_addr().unwrap().to_string())
            .output()
            .unwrap();

        // Assert: the first line, or serve's first log line, names the three, sorted, and no value
        let stderr = stderr(&output);
        let first = stderr.lines().find(|line| line.contains("configuration ")).unwrap_or_default();
        assert!(first.contains(&flag_line), "{command:?}: {stderr}");
        assert!(
            first.ends_with(
                "; changed by the environment: SIGNUPD_MAIL__SMTP__PASSWORD, SIGNUPD_SERVER__LISTEN, \
                 SIGNUPD_STORAGE__DATA_DIR"
            ),
            "{command:?}: {first}"
        );
        assert!(!stderr.contains("hunter2") && !first.contains("elsewhere"), "{command:?}: no value: {stderr}");
    }
    // The variable did what the line says: the database is where it points.
    assert!(elsewhere.join("signupd.sqlite3").exists(), "{:?}", files_under(dir.path()));
}

#[test]
fn a_missing_file_named_by_signupd_config_is_an_error_after_the_line_naming_it() {
    let output = signupd().arg("stats").env("SIGNUPD_CONFIG", "/nonexistent/signupd.toml").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr(&output);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_eq!(lines[0], "signupd: configuration /nonexistent/signupd.toml (from SIGNUPD_CONFIG)");
    assert!(lines[1].starts_with("signupd: error: ") && lines[1].contains("/nonexistent/signupd.toml"), "{stderr}");
}

#[test]
fn without_a_file_the_line_says_the_zero_setup_defaults_apply() {
    // Only meaningful where the package's file is absent; where it exists, the default path
    // is what the line must name.
    let default = Path::new(signupd::config::source::DEFAULT_PATH);
    let cwd = tempfile::tempdir().unwrap();
    let output = signupd().args(["snippet", "--list", "default"]).current_dir(cwd.path()).output().unwrap();
    let first = stderr(&output).lines().next().unwrap_or_default().to_owned();
    if default.exists() {
        assert_eq!(first, format!("signupd: configuration {} (the default path)", default.display()));
    } else {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(first.starts_with("signupd: no configuration file ("), "{first}");
        assert!(first.contains("zero-setup defaults"), "{first}");
    }
}

#[test]
fn gen_secret_reads_no_configuration_and_says_nothing() {
    let output = signupd().arg("gen-secret").env("SIGNUPD_CONFIG", "/nonexistent/signupd.toml").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
}

#[test]
fn send_test_mail_with_the_file_transport_says_nothing_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &mail_in(dir.path()));
    let output = signupd().args(["send-test-mail", "--to", "ops@example.com", "--config"]).arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stdout(&output);
    assert!(said.starts_with("not sent: "), "{said}");
    assert!(said.contains("no mail left this machine"), "{said}");
    let written: Vec<String> =
        files_under(dir.path()).into_iter().filter(|file| file.starts_with("data/mail/")).collect();
    let [file] = written.as_slice() else { panic!("one mail file: {written:?}") };
    assert!(said.contains(file.as_str()), "names the file it wrote ({file}): {said}");
}

/// Secrets never in the file, through the binary: every command refuses the key.
#[test]
fn a_password_in_the_file_stops_every_command_naming_where_it_belongs() {
    for (case, smtp) in [("a password", "password = \"hunter2-hunter2\""), ("an empty password", "password = \"\"")] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(dir.path(), &format!("[mail.smtp]\nusername = \"relay-user\"\n{smtp}"));
        for command in [&["check-config"][..], &["serve"], &["migrate"], &["stats"]] {
            let output = signupd()
                .args(command)
                .arg("--config")
                .arg(&path)
                // The environment's password would hide the file's in a merged view: still refused.
                .env("SIGNUPD_MAIL__SMTP__PASSWORD", "from-the-environment")
                .env("SIGNUPD_SERVER__LISTEN", "127.0.0.1:0")
                .output()
                .unwrap();
            let stderr = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "{case}, {command:?}: {stderr}");
            let error = stderr.lines().find(|line| line.starts_with("signupd: error: ")).unwrap_or_default();
            assert!(error.contains("mail.smtp.password: "), "{case}, {command:?}: {stderr}");
            for named in ["mail.smtp.password_file", "SIGNUPD_MAIL__SMTP__PASSWORD", "credential smtp_password"] {
                assert!(error.contains(named), "{case}, {command:?}: {named} not in {error}");
            }
            assert!(!stderr.contains("hunter2") && !stderr.contains("from-the-environment"), "{stderr}");
            assert_eq!(files_under(dir.path()), ["signupd.toml"], "{case}, {command:?}: nothing written");
        }
    }
}

#[test]
fn check_config_says_where_the_password_comes_from_never_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let password_file = dir.path().join("smtp-password");
    std::fs::write(&password_file, "from-the-file\n").unwrap();
    for case in ["env", "file", "none"] {
        std::fs::create_dir(dir.path().join(case)).unwrap();
    }
    let by_environment = write_config(&dir.path().join("env"), "[mail.smtp]\nusername = \"relay-user\"");
    let by_file = write_config(
        &dir.path().join("file"),
        &format!("[mail.smtp]\nusername = \"relay-user\"\npassword_file = {:?}", password_file.display().to_string()),
    );
    let without = write_config(&dir.path().join("none"), "");
    let cases = [
        ("the environment alone", &by_environment, true, "# SMTP password: set, from SIGNUPD_MAIL__SMTP__PASSWORD\n"),
        (
            "password_file",
            &by_file,
            false,
            &*format!("# SMTP password: set, from the file {} (mail.smtp.password_file)\n", password_file.display()),
        ),
        ("nothing", &without, false, "# SMTP password: not set (unused: mail.smtp.username is empty)\n"),
    ];
    for (case, path, environment, expected) in cases {
        let mut command = signupd();
        command.arg("check-config").arg("--config").arg(path);
        if environment {
            command.env("SIGNUPD_MAIL__SMTP__PASSWORD", "from-the-environment");
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{case}: {}", stderr(&output));
        let printed = stdout(&output);
        assert!(printed.contains(expected), "{case}: {expected:?} not in {printed}");
        assert!(!printed.contains("password ="), "{case}: no password key to copy into a file: {printed}");
        assert!(!printed.contains("from-the-environment") && !printed.contains("from-the-file"), "{printed}");
    }
}
