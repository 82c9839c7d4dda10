//! `signupd doctor` as an operator runs it: the real binary against a real relay on loopback,
//! a real data directory, and the configuration's mistakes one by one — each reported as a
//! problem with what to do, the exit code 1, and `--json` in its documented shape. (The relay's
//! certificate and login, against a real Postfix: tests/postfix/relay.py.)

use std::os::unix::fs::PermissionsExt;

use crate::helpers::{signupd, write_config};
use crate::smtp_server::{SmtpServer, free_port, smtp_config};

/// A name server that refuses every connection: the DNS checks warn, and nothing waits.
fn no_dns() -> String {
    format!("[signup]\ndns_servers = [\"127.0.0.1:{}\"]\n", free_port())
}

fn doctor(config: &std::path::Path, json: bool) -> (Option<i32>, String, String) {
    let mut command = signupd();
    command.arg("doctor").arg("--config").arg(config);
    if json {
        command.arg("--json");
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_good_loopback_setup_has_no_problem_and_the_relay_is_asked_without_sending() {
    // Arrange
    let relay = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &format!("{}{}", no_dns(), relay.config()));

    // Act
    let (code, stdout, stderr) = doctor(&config, false);

    // Assert
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let relay_line = format!("ok       relay: 127.0.0.1:{}: answered", relay.port);
    assert!(stdout.contains(&relay_line), "{stdout}");
    assert!(stdout.contains("machine: data directory") && stdout.contains("on a local filesystem"), "{stdout}");
    assert!(stdout.contains("machine: database") && stdout.contains("not there yet"), "{stdout}");
    assert!(stdout.contains(" 0 problems"), "{stdout}");
    assert_eq!(relay.mail_attempts(), 0, "doctor sends no mail");
    assert!(relay.received().is_empty());
    assert!(!dir.path().join("data").exists(), "doctor writes nothing");
}

#[test]
fn each_mistake_is_a_problem_with_what_to_do_and_the_exit_code_is_1() {
    // Arrange: a closed relay port, a hash key others can read, an https site proxied to
    // loopback without trusted_proxies
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let key = data.join("hash_key");
    std::fs::write(&key, "x".repeat(44)).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let port = free_port();
    let server = "[server]\npublic_url = \"https://signup.bakery.test\"\nlisten = \"127.0.0.1:8080\"\n";
    let config = write_config(dir.path(), &format!("{server}{}{}", no_dns(), smtp_config(port)));

    // Act
    let (code, stdout, stderr) = doctor(&config, false);

    // Assert
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("problems: fix them and run signupd doctor again"), "{stderr}");
    let problem = |needle: &str| {
        let line = stdout
            .lines()
            .position(|line| line.starts_with("problem") && line.contains(needle))
            .unwrap_or_else(|| panic!("no problem line with {needle:?}:\n{stdout}"));
        stdout.lines().nth(line + 1).unwrap_or_default().trim().to_owned()
    };
    assert!(problem(&format!("connection refused by 127.0.0.1:{port}")).starts_with('→'));
    assert_eq!(problem("others on the machine can read it"), format!("→ chmod 600 {}", key.display()));
    assert!(problem("a proxy is in front").contains("trusted_proxies = [\"127.0.0.1\", \"::1\"]"), "{stdout}");
    assert!(!stdout.contains(&"x".repeat(44)), "no secret printed");
}

#[test]
fn json_has_the_documented_shape() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &format!("{}{}", no_dns(), smtp_config(free_port())));

    // Act
    let (code, stdout, _) = doctor(&config, true);

    // Assert
    assert_eq!(code, Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    for check in checks {
        let mut keys: Vec<&str> = check.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["area", "name", "saw", "status", "todo"], "{check}");
        assert!(["ok", "warning", "problem"].contains(&check["status"].as_str().unwrap()), "{check}");
        assert_eq!(check["todo"].is_null(), check["status"] == "ok", "{check}");
    }
    let count = |status: &str| checks.iter().filter(|check| check["status"] == status).count();
    assert_eq!(report["problems"], count("problem"));
    assert_eq!(report["warnings"], count("warning"));
    assert!(checks.iter().any(|check| check["area"] == "relay" && check["status"] == "problem"), "{stdout}");
}
