//! The relay's login: where its password comes from, and reading it. Read when the transport is
//! built and again by [`super::relay`] after a refusal, so a password the operator fixed is used
//! at the next try without a restart.

use std::path::{Path, PathBuf};

use anyhow::Context;
use lettre::transport::smtp::authentication::Credentials;

use crate::config::SmtpConfig;

/// The name of the SMTP password credential (`smtp/password` in the credentials directory).
pub const SMTP_PASSWORD_CREDENTIAL: &str = "smtp_password";

/// Where the relay's password comes from, in the order it is looked for: the configured file,
/// then the environment, then the credential `smtp_password` (the Debian unit loads it from
/// `smtp/password`). The configuration file never holds it (`crate::config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordSource {
    /// `mail.smtp.password_file`.
    File(PathBuf),
    /// `SIGNUPD_MAIL__SMTP__PASSWORD`.
    Environment,
    /// The credential `smtp_password`, found at this path.
    Credential(PathBuf),
}

impl PasswordSource {
    /// Where the password would be read from; `None` when nowhere. Reads no password.
    pub fn find(smtp: &SmtpConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Option<Self>> {
        if let Some(path) = &smtp.password_file {
            return Ok(Some(Self::File(path.clone())));
        }
        if smtp.password.is_some() {
            return Ok(Some(Self::Environment));
        }
        let found = credentials_dir
            .map(|dir| crate::config::secrets::find_credential(dir, SMTP_PASSWORD_CREDENTIAL))
            .transpose()?
            .flatten();
        Ok(found.map(Self::Credential))
    }
}

impl std::fmt::Display for PasswordSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "the file {} (mail.smtp.password_file)", path.display()),
            Self::Environment => f.write_str(crate::config::SMTP_PASSWORD_ENVIRONMENT),
            Self::Credential(path) => write!(f, "the credential {SMTP_PASSWORD_CREDENTIAL} ({})", path.display()),
        }
    }
}

/// A password file's contents without the trailing line break `echo` leaves.
fn read_password(path: &Path, source: &str) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("{source}: cannot read {}", path.display()))?
        .trim_end_matches(['\r', '\n'])
        .to_owned())
}

/// The login `smtp` configures, its password read from where [`PasswordSource::find`] finds it;
/// `None` without `mail.smtp.username`.
pub fn smtp_credentials(smtp: &SmtpConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Option<Credentials>> {
    let Some(username) = &smtp.username else { return Ok(None) };
    let password = match PasswordSource::find(smtp, credentials_dir)? {
        Some(PasswordSource::File(path)) => read_password(&path, "mail.smtp.password_file")?,
        Some(PasswordSource::Environment) => smtp.password.clone().unwrap_or_default(),
        Some(PasswordSource::Credential(path)) => {
            read_password(&path, &format!("credential {SMTP_PASSWORD_CREDENTIAL}"))?
        }
        None => anyhow::bail!(
            "mail.smtp.username is set but there is no password: set mail.smtp.password_file, \
             SIGNUPD_MAIL__SMTP__PASSWORD or the credential {SMTP_PASSWORD_CREDENTIAL} (smtp/password); {}",
            crate::config::secrets::missing_credential(credentials_dir, SMTP_PASSWORD_CREDENTIAL)
        ),
    };
    Ok(Some(Credentials::new(username.clone(), password)))
}
