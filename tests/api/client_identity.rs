//! Who the client is in each documented deployment (`docs/install.md`, "Deployments"): the
//! `X-Forwarded-For` chain read from the right through the real server, the shipped
//! configuration behind a tunnel, and the warning `serve` and `check-config` give when a loopback
//! listener trusts no loopback proxy. The same rows run through a real nginx in `.ci/nginx`.

use crate::helpers::{TestApp, after_config_line, signupd, spawn_app_with, write_config};
use crate::signup::{json_request, valid_json};

const ONE_PER_TEN_MINUTES: &str = "[signup]\nrate_limits = [{ window = \"10m\", max = 1 }]\n";
const PUBLIC_URL: &str = "public_url = \"https://signup.newsletter-operator.net\"";
const EDGE: &str = "173.245.48.1";

async fn signup(app: &TestApp, n: usize, headers: &[(&str, &str)]) -> u16 {
    let mut request = json_request(app, valid_json(&format!("person{n}@example.com")));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().status().as_u16()
}

/// The lines of `packaging/signupd.toml` that decide who the client is, so this test follows the
/// shipped file.
fn shipped_client_identity() -> String {
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/signupd.toml")).unwrap();
    let lines: Vec<&str> = shipped
        .lines()
        .filter(|line| ["trusted_proxies", "client_ip_header"].iter().any(|key| line.starts_with(key)))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    lines.join("\n")
}

#[actix_web::test]
async fn behind_the_shipped_configuration_two_tunnel_visitors_are_counted_apart() {
    let app = spawn_app_with(&format!("[server]\n{}\n{ONE_PER_TEN_MINUTES}", shipped_client_identity())).await;
    let (first, second) = ([("CF-Connecting-IP", "198.51.100.7")], [("CF-Connecting-IP", "203.0.113.9")]);

    assert_eq!(signup(&app, 0, &first).await, 202, "first visitor, first signup");
    assert_eq!(signup(&app, 1, &second).await, 202, "second visitor, first signup");
    assert_eq!(signup(&app, 2, &first).await, 429, "first visitor, second signup");
    assert_eq!(signup(&app, 3, &second).await, 429, "second visitor, second signup");
}

#[actix_web::test]
async fn behind_nginx_behind_cloudflare_a_forged_left_entry_does_not_buy_a_new_budget() {
    let app = spawn_app_with(&format!(
        "[server]\ntrusted_proxies = [\"127.0.0.1\", \"::1\", \"cloudflare\"]\nclient_ip_header = \"X-Forwarded-For\"\n{ONE_PER_TEN_MINUTES}"
    ))
    .await;
    let chain = |forged: &str, visitor: &str| format!("{forged}{visitor}, {EDGE}");

    assert_eq!(signup(&app, 0, &[("X-Forwarded-For", &chain("", "198.51.100.7"))]).await, 202);
    assert_eq!(signup(&app, 1, &[("X-Forwarded-For", &chain("", "203.0.113.9"))]).await, 202, "another visitor");
    let forged = chain("192.0.2.1, ", "198.51.100.7");
    assert_eq!(signup(&app, 2, &[("X-Forwarded-For", &forged)]).await, 429, "the forged entry is not the client");
    let split = [("X-Forwarded-For", "192.0.2.2"), ("X-Forwarded-For", "198.51.100.7"), ("X-Forwarded-For", EDGE)];
    assert_eq!(signup(&app, 3, &split).await, 429, "nor over several header lines");
}

fn check_config(extra: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), extra);
    let output = signupd().arg("check-config").arg("--config").arg(&path).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.code(), stdout, after_config_line(&stderr).to_owned())
}

#[test]
fn check_config_warns_when_a_public_service_on_loopback_trusts_no_loopback_proxy() {
    let (code, stdout, stderr) = check_config(&format!("[server]\n{PUBLIC_URL}\ntrusted_proxies = [\"cloudflare\"]"));

    assert_eq!(code, Some(0), "a warning, not an error: {stderr}");
    assert!(stderr.starts_with("signupd: warning: "), "{stderr}");
    assert!(stderr.contains("share one rate-limit budget"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stdout.contains("trusted_proxies = [\"cloudflare\"]"), "the effective values still print: {stdout}");
}

#[test]
fn check_config_is_quiet_when_the_local_proxy_is_trusted_or_the_service_is_local() {
    let cases = [
        ("loopback trusted", format!("[server]\n{PUBLIC_URL}\ntrusted_proxies = [\"127.0.0.1\", \"::1\"]")),
        ("the shipped lines", format!("[server]\n{PUBLIC_URL}\n{}", shipped_client_identity())),
        ("a local public_url", String::new()),
    ];
    for (case, extra) in cases {
        let (code, _, stderr) = check_config(&extra);
        assert_eq!(code, Some(0), "{case}: {stderr}");
        assert_eq!(stderr, "", "{case}");
    }
    let demo = signupd().arg("check-config").output().unwrap();
    assert_eq!(demo.status.code(), Some(0));
    assert_eq!(after_config_line(&String::from_utf8_lossy(&demo.stderr)), "", "the zero-setup demo");
}

#[test]
fn serve_warns_at_start_when_a_public_service_on_loopback_trusts_no_loopback_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &format!("[server]\n{PUBLIC_URL}"));
    let mut served = crate::process::spawn_serve(&path);
    let listening = served.line_matching(|line| line.contains("signupd is listening"));
    served.kill();
    assert!(listening.is_some(), "serve did not start; saw:\n{}", served.seen().join("\n"));
    let seen = served.seen();

    let warning = seen.iter().find(|line| line.contains("share one rate-limit budget"));
    let warning = warning.unwrap_or_else(|| panic!("no warning before the listening line; saw:\n{}", seen.join("\n")));
    assert!(warning.contains("WARN"), "{warning}");
}
