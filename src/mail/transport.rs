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
use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{MailConfig, MailTransportKind, SmtpSecurity};

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

#[derive(Clone)]
pub enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    File(PathBuf),
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Smtp(_) => f.write_str("Transport::Smtp"),
            Self::File(dir) => f.debug_tuple("Transport::File").field(dir).finish(),
        }
    }
}

impl Transport {
    /// Builds the configured transport. Reads `password_file`; does not connect.
    pub fn from_config(mail: &MailConfig) -> anyhow::Result<Self> {
        match mail.transport {
            MailTransportKind::File => Ok(Self::File(mail.file_dir.clone())),
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
                    .pool_config(PoolConfig::new().max_size(8));
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
                Ok(Self::Smtp(transport))
            }
        }
    }

    pub async fn send(&self, message: Message) -> Result<Delivered, SendError> {
        match self {
            Self::Smtp(transport) => match transport.send(message).await {
                Ok(response) => Ok(Delivered::Smtp {
                    code: u16::from(response.code()),
                }),
                Err(error) => Err(classify(&error)),
            },
            Self::File(dir) => {
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
    SendError {
        permanent: false,
        code: None,
        detail,
    }
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
    SendError {
        permanent,
        code,
        detail,
    }
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
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_masked_in_server_reasons() {
        assert_eq!(
            reason_without_addresses("permanent error (550): <ann@example.com> no such user"),
            "permanent error (550): [address] no such user"
        );
    }
}
