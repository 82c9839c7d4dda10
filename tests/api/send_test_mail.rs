//! `signupd send-test-mail` against a real SMTP server on loopback: the real binary, the real
//! relay, the exit code and the words an operator reads.

use crate::helpers::{signupd, write_config};
use crate::smtp_server::{SmtpServer, free_port, smtp_config};

#[test]
fn send_test_mail_reports_the_relay_accepting_the_mail() {
    let server = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &server.config());

    let output =
        signupd().args(["send-test-mail", "--to", "Ops@Example.com", "--config"]).arg(&config).output().unwrap();

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("accepted") && stdout.contains("250"), "{stdout}");
    assert!(!stdout.contains("ops@example.com"), "the address is masked: {stdout}");
    let received = server.received();
    assert_eq!(received.len(), 1);
    let mail = String::from_utf8_lossy(&received[0]);
    assert!(mail.contains("To: ops@example.com"), "{mail}");
    assert!(mail.contains("Subject: signupd test mail"), "{mail}");
}

#[test]
fn send_test_mail_explains_a_refusal_with_exit_code_1() {
    let server = SmtpServer::start();
    server.refuse_recipients_with(550);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &server.config());

    let output =
        signupd().args(["send-test-mail", "--to", "ops@example.com", "--config"]).arg(&config).output().unwrap();

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("SMTP 550"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(!stderr.contains("ops@example.com"), "no address in the error: {stderr}");
}

#[test]
fn send_test_mail_to_a_closed_port_hints_at_the_port_and_security() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let config = write_config(dir.path(), &smtp_config(port));

    let output =
        signupd().args(["send-test-mail", "--to", "ops@example.com", "--config"]).arg(&config).output().unwrap();

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("connection refused by 127.0.0.1:{port}: nothing listens there")), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
}

#[test]
fn send_test_mail_refuses_a_bad_address_and_an_unknown_list() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let bad = signupd().args(["send-test-mail", "--to", "not-an-address", "--config"]).arg(&config).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--to:"));
    let list = signupd()
        .args(["send-test-mail", "--to", "a@example.com", "--list", "nope", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(list.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&list.stderr).contains("--list: no list with id \"nope\""));
    let usage = signupd().args(["send-test-mail"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2), "--to is required");
}
