//! `signupd healthcheck`, the real binary against a real server: exit 0 and a line on stdout
//! when `/readyz` answers 200, exit 1 with the reason on stderr otherwise.

use std::time::{Duration, Instant};

use crate::helpers::{TestApp, after_config_line, signupd, spawn_app, write_config};

/// Runs `signupd healthcheck` for a server listening on `listen`: (exit code, stdout, stderr).
async fn healthcheck(listen: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let mut command = signupd();
    command.arg("healthcheck").arg("--config").arg(&config).env("SIGNUPD_SERVER__LISTEN", listen);
    // Beside the server on this test's runtime: a blocking wait would stop it from answering.
    let output = tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    let stderr = text(&output.stderr);
    (output.status.code().unwrap(), text(&output.stdout), after_config_line(&stderr).to_owned())
}

fn port(app: &TestApp) -> u16 {
    app.address.rsplit_once(':').and_then(|(_, port)| port.parse().ok()).unwrap()
}

#[actix_web::test]
async fn a_ready_server_passes_and_every_address_is_asked_on_loopback() {
    let app = spawn_app().await;
    let (code, stdout, stderr) = healthcheck(&format!("0.0.0.0:{}", port(&app))).await;
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout, format!("ready: http://127.0.0.1:{}/readyz answered 200 OK", port(&app)));
    assert_eq!(stderr, "");
}

#[actix_web::test]
async fn a_server_that_cannot_write_fails_with_its_503() {
    let app = spawn_app().await;
    let blocker = rusqlite::Connection::open(app.state.db.path()).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE blocker (x);").unwrap();

    let (code, stdout, stderr) = healthcheck(&format!("127.0.0.1:{}", port(&app))).await;
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!("signupd: error: http://127.0.0.1:{}/readyz answered 503 Service Unavailable: not ready", port(&app))
    );

    blocker.execute_batch("ROLLBACK").unwrap();
    let (code, _, stderr) = healthcheck(&format!("127.0.0.1:{}", port(&app))).await;
    assert_eq!(code, 0, "ready again once the lock is gone: {stderr}");
}

#[actix_web::test]
async fn no_server_fails_with_the_refused_connection() {
    // A port that was just free: nothing listens on it.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, stdout, stderr) = healthcheck(&format!("127.0.0.1:{free}")).await;
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with(&format!("signupd: error: http://127.0.0.1:{free}/readyz: cannot connect (")),
        "{stderr}"
    );
    assert!(stderr.to_lowercase().contains("refused"), "{stderr}");
}

#[actix_web::test]
async fn a_server_that_never_answers_fails_after_five_seconds() {
    // Accepts the connection (the kernel's backlog does) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = silent.local_addr().unwrap().to_string();
    let started = Instant::now();
    let (code, _, stderr) = healthcheck(&listen).await;
    let took = started.elapsed();
    assert_eq!(code, 1);
    assert_eq!(stderr, format!("signupd: error: http://{listen}/readyz: no answer within 5 s"));
    assert!(took >= Duration::from_secs(5) && took < Duration::from_secs(30), "gave up after {took:?}");
    drop(silent);
}

#[actix_web::test]
async fn a_bad_listen_address_is_named_and_nothing_is_asked() {
    let (code, stdout, stderr) = healthcheck("not-an-address").await;
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(stderr.starts_with("signupd: error: ") && stderr.contains("server.listen"), "{stderr}");
    assert!(!stderr.contains("/readyz"), "{stderr}");
}
