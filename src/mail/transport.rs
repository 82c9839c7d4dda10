//! Where mail goes: an SMTP relay (lettre's pooled async transport over tokio + rustls), or
//! `.eml` files in a folder (the zero-setup default, so a newcomer can open the confirm link
//! from the file). Built once at start and kept: dropping an unused pool logs a warning
//! (DEPENDENCIES trap 3).
//!
//! Failures are classified for the worker: SMTP 5xx is permanent; 4xx, connection errors and
//! timeouts are temporary. Error text carries the SMTP code and the server's reason, never the
//! recipient.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;
use std::sync::Arc;

use lettre::message::dkim::{DkimCanonicalization, DkimConfig, DkimSigningAlgorithm, DkimSigningKey};
use lettre::message::header::HeaderName;
use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{DkimAlgorithm, MailConfig, MailTransportKind, SmtpSecurity};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct SendError {
    pub permanent: bool,
    /// The SMTP reply code, when the server answered.
    pub code: Option<u16>,
    /// Safe to log and store: code and reason, or the kind of connection failure.
    pub detail: String,
}

/// What happened to a sent mail, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    Smtp { code: u16 },
    File { path: PathBuf },
}

/// The configured transport, with the DKIM signer if one is configured. Cheap to clone.
#[derive(Clone)]
pub struct Transport {
    route: Route,
    dkim: Option<Arc<DkimConfig>>,
    /// The longest one SMTP conversation may take.
    send_timeout: std::time::Duration,
}

#[derive(Clone)]
enum Route {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    File(PathBuf),
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let route = match &self.route {
            Route::Smtp(_) => "smtp".to_owned(),
            Route::File(dir) => format!("file {}", dir.display()),
        };
        f.debug_struct("Transport").field("route", &route).field("dkim", &self.dkim.is_some()).finish()
    }
}

/// Headers the DKIM signature covers. RFC 8058 §3.1 requires `List-Unsubscribe` and
/// `List-Unsubscribe-Post` to be signed; lettre's default set does not include them. Signing a
/// header a mail lacks is allowed and stops anyone adding it later.
const DKIM_HEADERS: &[&str] = &[
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "Reply-To",
    "List-Id",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
];

fn dkim_signer(config: &crate::config::DkimConfig) -> anyhow::Result<DkimConfig> {
    let key = std::fs::read_to_string(&config.private_key_file)
        .with_context(|| format!("mail.dkim.private_key_file: cannot read {}", config.private_key_file.display()))?;
    let algorithm = match config.algorithm {
        DkimAlgorithm::Rsa => DkimSigningAlgorithm::Rsa,
        DkimAlgorithm::Ed25519 => DkimSigningAlgorithm::Ed25519,
    };
    let key = DkimSigningKey::new(key.trim(), algorithm).map_err(|error| {
        anyhow::anyhow!(
            "mail.dkim.private_key_file: {} is not a usable key ({error}); RSA keys must be PKCS#1 PEM, Ed25519 keys base64",
            config.private_key_file.display()
        )
    })?;
    let headers = DKIM_HEADERS.iter().map(|name| HeaderName::new_from_ascii_str(name)).collect();
    Ok(DkimConfig::new(config.selector.clone(), config.domain.clone(), key, headers, DkimCanonicalization::default()))
}

impl Transport {
    /// Builds the configured transport. Reads `password_file` and the DKIM key; does not connect.
    pub fn from_config(mail: &MailConfig) -> anyhow::Result<Self> {
        let dkim = mail.dkim.as_ref().map(dkim_signer).transpose()?.map(Arc::new);
        // Greeting, EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA: a few round trips, each bounded.
        let send_timeout = mail.smtp.timeout.saturating_mul(3);
        Ok(Self { route: Self::route(mail)?, dkim, send_timeout })
    }

    fn route(mail: &MailConfig) -> anyhow::Result<Route> {
        match mail.transport {
            MailTransportKind::File => Ok(Route::File(mail.file_dir.clone())),
            MailTransportKind::Smtp => {
                let smtp = &mail.smtp;
                let builder = match smtp.security {
                    SmtpSecurity::StartTls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host)
                        .context("mail.smtp.host: cannot set up STARTTLS")?,
                    SmtpSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&smtp.host)
                        .context("mail.smtp.host: cannot set up TLS")?,
                    // Checked at load time: only to a loopback relay.
                    SmtpSecurity::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host),
                };
                let mut builder = builder
                    .port(smtp.port)
                    .timeout(Some(smtp.timeout))
                    .pool_config(PoolConfig::new().max_size(u32::try_from(super::WORKERS).unwrap_or(16)));
                if let Some(username) = &smtp.username {
                    let password = match (&smtp.password_file, &smtp.password) {
                        (Some(path), _) => std::fs::read_to_string(path)
                            .with_context(|| format!("mail.smtp.password_file: cannot read {}", path.display()))?
                            .trim_end_matches(['\r', '\n'])
                            .to_owned(),
                        (None, Some(password)) => password.clone(),
                        (None, None) => anyhow::bail!(
                            "mail.smtp.username is set but there is no password: set mail.smtp.password_file or SIGNUPD_MAIL__SMTP__PASSWORD"
                        ),
                    };
                    builder = builder.credentials(Credentials::new(username.clone(), password));
                }
                let transport: AsyncSmtpTransport<Tokio1Executor> = builder.build();
                Ok(Route::Smtp(transport))
            }
        }
    }

    pub async fn send(&self, mut message: Message) -> Result<Delivered, SendError> {
        if let Some(dkim) = &self.dkim {
            message.sign(dkim);
        }
        match &self.route {
            // lettre's timeout bounds only the connect; a relay that stalls mid-conversation
            // would hold the worker (and shutdown) forever, so the whole send is bounded too.
            Route::Smtp(transport) => match tokio::time::timeout(self.send_timeout, transport.send(message)).await {
                Ok(Ok(response)) => Ok(Delivered::Smtp { code: u16::from(response.code()) }),
                Ok(Err(error)) => Err(classify(&error)),
                Err(_) => Err(temporary("timed out talking to the SMTP server".into())),
            },
            Route::File(dir) => {
                let dir = dir.clone();
                let bytes = message.formatted();
                tokio::task::spawn_blocking(move || write_eml(&dir, &bytes))
                    .await
                    .map_err(|_| temporary("the file writer was cancelled".into()))?
                    .map(|path| Delivered::File { path })
                    .map_err(|error| temporary(format!("cannot write the mail file: {error:#}")))
            }
        }
    }
}

fn temporary(detail: String) -> SendError {
    SendError { permanent: false, code: None, detail }
}

fn classify(error: &lettre::transport::smtp::Error) -> SendError {
    let code = error.status().map(u16::from);
    let permanent = error.is_permanent();
    let detail = match code {
        Some(code) => format!("SMTP {code}: {}", reason_without_addresses(&error.to_string())),
        None if error.is_timeout() => "timed out talking to the SMTP server".to_owned(),
        None if error.is_tls() => "TLS handshake with the SMTP server failed".to_owned(),
        None => "could not talk to the SMTP server (connection refused or closed)".to_owned(),
    };
    SendError { permanent, code, detail }
}

/// A server's reason may quote the recipient (`550 <ann@example.com>: no such user`). Words with
/// an `@` are masked before the text is logged or stored.
fn reason_without_addresses(reason: &str) -> String {
    reason
        .split_whitespace()
        .map(|word| if word.contains('@') { "[address]" } else { word })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes one `.eml` file, mode 0600 (it holds tokens), and returns its path.
fn write_eml(dir: &std::path::Path, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    crate::secrets::create_private_dir(dir)?;
    let path = dir.join(format!("{}.eml", uuid::Uuid::now_v7()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes).and_then(|()| file.sync_all()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn dkim_signs_the_list_unsubscribe_headers() {
        let dir = tempfile::tempdir().unwrap();
        // A throwaway Ed25519 key (32 bytes, base64), only for this test.
        std::fs::write(dir.path().join("dkim.key"), "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=").unwrap();
        let toml = format!(
            "[mail]\nfile_dir = {:?}\n[mail.dkim]\nselector = \"s1\"\ndomain = \"example.com\"\nalgorithm = \"ed25519\"\nprivate_key_file = {:?}\n[[lists]]\nid = \"news\"",
            dir.path().join("mail").display().to_string(),
            dir.path().join("dkim.key").display().to_string()
        );
        let config = crate::config::Config::from_toml(&toml).unwrap();
        let transport = Transport::from_config(&config.mail).unwrap();
        let mail = crate::mail::message::welcome(&config, &config.lists[0], "ann@example.com", "M", "U").unwrap();
        let Delivered::File { path } = transport.send(mail).await.unwrap() else { panic!("file transport") };
        let written = std::fs::read_to_string(path).unwrap();
        let signature = written.lines().find(|line| line.starts_with("DKIM-Signature")).expect("signed");
        let unfolded: String =
            written.split("DKIM-Signature").nth(1).unwrap().split("\r\n\r\n").next().unwrap().replace("\r\n", "");
        assert!(signature.contains("d=example.com") && signature.contains("s=s1"), "{signature}");
        assert!(
            unfolded.contains("List-Unsubscribe:List-Unsubscribe-Post")
                || unfolded.contains("List-Unsubscribe: List-Unsubscribe-Post"),
            "{unfolded}"
        );
    }

    #[test]
    fn a_dkim_section_needs_all_its_keys() {
        let error = crate::config::Config::from_toml("[mail.dkim]\nselector = \"s1\"\n[[lists]]\nid = \"a\"")
            .unwrap_err()
            .to_string();
        assert!(error.contains("mail.dkim.domain: must be set"), "{error}");
        assert!(error.contains("mail.dkim.private_key_file: must be set"), "{error}");
    }

    #[test]
    fn addresses_are_masked_in_server_reasons() {
        assert_eq!(
            reason_without_addresses("permanent error (550): <ann@example.com> no such user"),
            "permanent error (550): [address] no such user"
        );
    }
}
