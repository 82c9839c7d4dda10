//! No secret, token or address in the log at any level, whatever `RUST_LOG` says
//! (`signupd::app::telemetry`): the real `signupd serve` under `RUST_LOG=trace` through the whole
//! path — a signup, its mail through a relay that asks for `AUTH` over STARTTLS, the confirm
//! page and the confirmation, the welcome mail, a webhook, a destination, an operator API call
//! and an admin search — and then every line searched for each value that must not be in it.
//! The test prints what it searched for.

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::admin_page::form_token;
use crate::destinations::{destination_toml, write_credential};
use crate::helpers::{is_whole_link_token, link_token_at};
use crate::process::{self, Served};
use crate::relay_tls::Pki;
use crate::sender_apis::{Kind, SenderApi, Standing};
use crate::webhook_receiver::{Receiver, Reply};
use crate::webhooks::{HOOK_PATH, hook_toml, new_secret};

/// The subscriber; its local part is searched for on its own too.
const EMAIL: &str = "quill.tester+news@example.org";
const LOCAL_PART: &str = "quill.tester";
const RELAY_USER: &str = "relay-login@example.net";
const RELAY_PASSWORD: &str = "Hunter2-relay-PASSWORD-7f3a";
/// The operator API's and the admin page's token.
const ADMIN_TOKEN: &str = "admin-token-log-privacy-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// Waits up to 30 s for `done`, polling.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The token after the first `needle` in a raw message (quoted-printable soft breaks undone).
fn token_in(message: &[u8], needle: &str) -> String {
    let text = String::from_utf8_lossy(message).replace("=\r\n", "").replace("=3D", "=");
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle} in the mail:\n{text}"));
    link_token_at(&text[at + needle.len()..])
}

/// The forms of `value` a log line could carry it in: as it is, percent-encoded (a URL's
/// query), and standard base64 (an `Authorization` header, an SMTP `AUTH`).
fn forms(name: &str, value: &str) -> Vec<(String, String)> {
    let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    let mut forms = vec![(name.to_owned(), value.to_owned()), (format!("{name}, base64"), STANDARD.encode(value))];
    if encoded != value {
        forms.push((format!("{name}, percent-encoded"), encoded));
    }
    forms
}

#[tokio::test]
#[expect(
    clippy::print_stdout,
    reason = "the list of what was searched for is the test's report (--nocapture shows it)"
)]
async fn under_rust_log_trace_the_whole_path_logs_no_password_token_secret_or_address() {
    // Arrange: a relay asking for a login over STARTTLS (pinned), a webhook receiver, a
    // listmonk, an admin token, the metrics listener for the admin page
    let pki = Pki::new();
    let leaf = pki.leaf("relay", &["relay.log-privacy.test"], false, false);
    let relay = pki.relay_with_login(&leaf, RELAY_USER, RELAY_PASSWORD);
    let receiver = Receiver::start(Reply::Status(204));
    let listmonk = SenderApi::start(Kind::Listmonk);
    let dir = tempfile::tempdir().unwrap();
    let password_file = dir.path().join("smtp_password");
    std::fs::write(&password_file, format!("{RELAY_PASSWORD}\n")).unwrap();
    let webhook_secret = new_secret();
    let webhook_secret_file = dir.path().join("webhook_secret");
    std::fs::write(&webhook_secret_file, format!("{webhook_secret}\n")).unwrap();
    let credential_file = write_credential(dir.path(), "out", &listmonk.credential());
    let token_file = dir.path().join("api_token");
    std::fs::write(&token_file, format!("{ADMIN_TOKEN}\n")).unwrap();
    let extra = format!(
        "transport = \"smtp\"\nretry_base = \"1s\"\nwebhook_timeout = \"5s\"\n\
         [mail.smtp]\nhost = \"127.0.0.1\"\nport = {}\nsecurity = \"starttls\"\ntimeout = \"5s\"\n\
         username = \"{RELAY_USER}\"\npassword_file = {:?}\ncertificate_sha256 = \"{}\"\n\
         [server]\nmetrics_listen = \"127.0.0.1:0\"\n\
         [[api_tokens]]\nname = \"ops\"\ntoken_file = {:?}\nscopes = [\"admin\"]\n{}{}",
        relay.port,
        password_file.display().to_string(),
        leaf.fingerprint,
        token_file.display().to_string(),
        hook_toml("crm", &receiver.url(HOOK_PATH), &webhook_secret_file),
        destination_toml("out", &listmonk, &credential_file),
    );
    let config = process::config(dir.path(), 1000, &extra);
    let server = process::serve_with(&config, &[("RUST_LOG", "trace")]);
    let client = process::client();

    // Act: a bot's signup (its honeypot filled: a debug line of signupd's own), then the
    // visitor's; the confirmation goes through the relay, after AUTH
    let bot = [("email", "bot@example.org"), ("consent", "yes"), ("list", "news"), ("website", "spam")];
    assert_eq!(client.post(server.url("/api/signup")).form(&bot).send().await.unwrap().status().as_u16(), 303);
    let signup = client
        .post(server.url("/api/signup"))
        .form(&[("email", EMAIL), ("consent", "yes"), ("list", "news")])
        .send()
        .await
        .unwrap();
    assert_eq!(signup.status().as_u16(), 303);
    until("the confirmation mail", || !relay.received().is_empty()).await;
    let confirm_token = token_in(&relay.received()[0], "/confirm?token=");
    assert!(is_whole_link_token(&confirm_token), "{confirm_token}");

    // Act: the confirm page (the token in its query), then the confirmation
    let page = client.get(server.url(&format!("/confirm?token={confirm_token}"))).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let confirmed = client.post(server.url("/api/confirm")).form(&[("token", confirm_token.as_str())]).send().await;
    assert_eq!(confirmed.unwrap().status().as_u16(), 303);

    // Act: the welcome mail, the webhook, the destination
    until("the welcome mail", || relay.received().len() >= 2).await;
    let welcome = &relay.received()[1];
    let manage_token = token_in(welcome, "/manage?token=");
    assert!(is_whole_link_token(&manage_token), "{manage_token}");
    let unsubscribe_token = token_in(welcome, "/api/unsubscribe?token=");
    until("the webhook", || !receiver.requests().is_empty()).await;
    until("the destination", || listmonk.addresses().get(EMAIL) == Some(&Some(Standing::Subscribed))).await;

    // Act: the manage page, an operator API call, an admin search
    let manage = client.get(server.url(&format!("/manage?token={manage_token}"))).send().await.unwrap();
    assert_eq!(manage.status().as_u16(), 200);
    let looked_up = client
        .get(server.url("/api/v1/subscribers"))
        .query(&[("email", EMAIL)])
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(looked_up.status().as_u16(), 200);
    assert!(looked_up.text().await.unwrap().contains(EMAIL), "the API found the subscriber");
    let admin = format!("127.0.0.1:{}", server.metrics_port.expect("the metrics listener"));
    let page = client.get(format!("http://{admin}/admin")).basic_auth("me", Some(ADMIN_TOKEN)).send().await.unwrap();
    let search = form_token(&page.text().await.unwrap(), "/admin/search");
    let found = client
        .post(format!("http://{admin}/admin/search"))
        .basic_auth("me", Some(ADMIN_TOKEN))
        .header("Origin", format!("http://{admin}"))
        .header("Sec-Fetch-Site", "same-origin")
        .form(&[("form", search.as_str()), ("email", EMAIL)])
        .send()
        .await
        .unwrap();
    assert_eq!(found.status().as_u16(), 200);
    assert!(found.text().await.unwrap().contains(EMAIL), "the admin search found the subscriber");
    let log = stopped_log(server).await;

    // Assert: the path ran, through a login, and under trace: signupd's own debug lines are there
    assert!(relay.logins() >= 1, "the mail went through a login");
    assert!(log.contains("signupd is listening"), "{log}");
    assert!(log.contains("honeypot filled"), "RUST_LOG=trace reached signupd's debug lines: {log}");

    // Assert: none of these in any form
    let data = dir.path().join("data");
    let file_secret = |name: &str| std::fs::read_to_string(data.join(name)).unwrap().trim().to_owned();
    let plain_login = format!("\0{RELAY_USER}\0{RELAY_PASSWORD}");
    let mut searched: Vec<(String, String)> = vec![
        ("AUTH PLAIN's base64 of user and password".to_owned(), STANDARD.encode(&plain_login)),
        ("the subscriber's local part".to_owned(), LOCAL_PART.to_owned()),
        ("the admin page's Basic credentials".to_owned(), STANDARD.encode(format!("me:{ADMIN_TOKEN}"))),
    ];
    for (name, value) in [
        ("the SMTP password", RELAY_PASSWORD.to_owned()),
        ("the relay's user name", RELAY_USER.to_owned()),
        ("the subscriber's address", EMAIL.to_owned()),
        ("the confirm token", confirm_token),
        ("the manage (removal) token", manage_token),
        ("the unsubscribe token", unsubscribe_token),
        ("the webhook secret", webhook_secret),
        ("the destination's credential", listmonk.credential()),
        ("the API token", ADMIN_TOKEN.to_owned()),
        ("the token secret", file_secret("token_secret")),
        ("the hash key", file_secret("hash_key")),
    ] {
        searched.extend(forms(name, &value));
    }
    println!("searched the log of `serve` under RUST_LOG=trace ({} lines) for:", log.lines().count());
    for (name, value) in &searched {
        println!("  {name}: {value:?}");
    }
    for (name, value) in &searched {
        let found: Vec<&str> = log.lines().filter(|line| line.contains(value.as_str())).collect();
        assert!(found.is_empty(), "{name} is in the log:\n{}", found.join("\n"));
    }
}

/// SIGTERM, the exit, and every line the server wrote.
async fn stopped_log(mut server: Served) -> String {
    server.sigterm();
    server.exit_within(Duration::from_secs(10)).await.expect("serve exits after SIGTERM");
    let mut log = server.log();
    for line in server.remaining_stderr() {
        log.push('\n');
        log.push_str(&line);
    }
    log
}
