//! The relay, as the mail workers will meet it: connected, encrypted and its certificate
//! judged as configured, the EHLO name it hears, the login accepted — then `QUIT`, before any
//! `MAIL FROM`, so nothing is sent. A failure is told in the words the log and
//! `send-test-mail` use for it.

use std::path::Path;

use super::Check;
use crate::config::{Config, MailTransportKind, SmtpSecurity};
use crate::outbound::mail::Transport;
use crate::outbound::mail::failure::Stage;
use crate::outbound::mail::relay_trust::Shown;

const AREA: &str = "relay";

/// Days before its end from which a certificate is a warning.
const EXPIRES_SOON_DAYS: i64 = 14;

pub async fn checks(config: &Config, credentials_dir: Option<&Path>) -> Vec<Check> {
    if config.mail.transport == MailTransportKind::File {
        return vec![Check::warning(
            AREA,
            "transport",
            format!(
                "mail.transport = \"file\": mail is written to {}, nobody receives it",
                config.mail.file_dir.display()
            ),
            "set mail.transport = \"smtp\" and [mail.smtp] for a real relay (docs/operations.md, connecting to your relay)",
        )];
    }
    let transport = match Transport::from_config(config, credentials_dir) {
        Ok(transport) => transport,
        Err(error) => {
            return vec![Check::problem(
                AREA,
                "configuration",
                format!("{error:#}"),
                "fix [mail.smtp] as the error says",
            )];
        }
    };
    let Some(relay) = transport.relay() else { return Vec::new() };
    let mut checks = vec![ehlo_name(config)];
    let mut stage = Stage::Connect;
    let connected = tokio::time::timeout(transport.send_bound(), relay.connect(&mut stage)).await;
    let mut conn = match connected {
        Err(_) => {
            let error = relay.timed_out(stage);
            checks.push(Check::problem(
                AREA,
                relay.at(),
                error.detail,
                "see the table in docs/operations.md, troubleshooting",
            ));
            return checks;
        }
        Ok(Err(error)) => {
            let stage = error.stage.map_or("connect", Stage::as_str);
            checks.push(Check::problem(
                AREA,
                format!("{} ({stage})", relay.at()),
                error.detail,
                "see the table in docs/operations.md, troubleshooting; no mail goes out until this is fixed",
            ));
            return checks;
        }
        Ok(Ok(conn)) => conn,
    };
    let security = match config.mail.smtp.security {
        SmtpSecurity::StartTls => "STARTTLS",
        SmtpSecurity::Tls => "implicit TLS",
        SmtpSecurity::None => "no TLS (loopback)",
    };
    checks.push(Check::ok(AREA, relay.at(), format!("answered, {security}")));
    if config.mail.smtp.security != SmtpSecurity::None {
        checks.push(certificate(conn.peer_certificate().ok().as_deref()));
    }
    checks.push(match &config.mail.smtp.username {
        // At some relays (Postmark) the user name is the API token itself.
        Some(username) => Check::ok(AREA, "login", format!("AUTH accepted for {}", username_shown(username))),
        None => Check::warning(
            AREA,
            "login",
            "no mail.smtp.username: signupd does not log in",
            "a relay that takes mail without a login is usually one on this machine or network; a provider wants a login",
        ),
    });
    let _ = conn.quit().await;
    checks
}

/// The user name as the report shows it: its first four characters, since at some relays it is
/// a secret (Postmark's server API token).
fn username_shown(username: &str) -> String {
    let start: String = username.chars().take(4).collect();
    format!("{start}…")
}

/// The certificate the relay showed: whose, by whom, its fingerprint and how long it lasts.
fn certificate(der: Option<&[u8]>) -> Check {
    let Some(der) = der else {
        return Check::warning(
            AREA,
            "certificate",
            "the relay showed none that could be read",
            "check the relay's TLS setup",
        );
    };
    let shown = Shown::read(der);
    let days_left = x509_parser::parse_x509_certificate(der).ok().map(|(_, certificate)| {
        (certificate.validity().not_after.timestamp() - chrono::Utc::now().timestamp()) / 86_400
    });
    let saw = format!(
        "subject \"{}\", issuer \"{}\", SHA-256 {}{}",
        shown.subject.as_deref().unwrap_or("?"),
        shown.issuer.as_deref().unwrap_or("?"),
        shown.fingerprint,
        days_left.map(|days| format!(", expires in {days} days")).unwrap_or_default()
    );
    match days_left {
        Some(days) if days < EXPIRES_SOON_DAYS => Check::warning(
            AREA,
            "certificate",
            saw,
            "renew the relay's certificate (and, if it is pinned, pin the new one's fingerprint)",
        ),
        _ => Check::ok(AREA, "certificate", saw),
    }
}

/// The name the relay will hear in `EHLO`; relays and receivers distrust one that is not a
/// fully qualified domain name.
fn ehlo_name(config: &Config) -> Check {
    let (name, from) = match config.helo_name() {
        Some(name) if config.mail.smtp.helo_name.is_some() => (name, "mail.smtp.helo_name"),
        Some(name) => (name, "server.public_url's host"),
        // What lettre sends without a name given: the machine's host name.
        None => (lettre::transport::smtp::extension::ClientId::default().to_string(), "this machine's host name"),
    };
    let saw = format!("{name} ({from})");
    if name.contains('.') || name.starts_with('[') {
        Check::ok(AREA, "EHLO name", saw)
    } else {
        Check::warning(
            AREA,
            "EHLO name",
            saw,
            "set mail.smtp.helo_name to this machine's fully qualified name; relays that reject_non_fqdn_helo_hostname refuse a bare one",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_four_characters_of_the_username_are_shown() {
        // At Postmark the user name is the server API token.
        assert_eq!(username_shown("5f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7"), "5f1e…");
        assert_eq!(username_shown("ann"), "ann…");
        assert_eq!(username_shown("ünïcödé"), "ünïc…");
    }
}
