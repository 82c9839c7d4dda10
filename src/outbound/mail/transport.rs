//! Where mail goes: an SMTP relay ([`super::relay`]), or `.eml` files in a folder (the
//! zero-setup default, so a newcomer can open the confirm link from the file). Built once at
//! start and kept; the relay reads what the operator fixes again after a failure
//! ([`super::relay`]).
//!
//! A failed send is a [`SendError`] ([`super::failure`]).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::Context;
use lettre::Message;
use lettre::message::dkim::{
    DkimCanonicalization, DkimCanonicalizationType, DkimConfig, DkimSigningAlgorithm, DkimSigningKey,
};
use lettre::message::header::HeaderName;
use lettre::transport::smtp::client::TlsParameters;
use lettre::transport::smtp::extension::ClientId;

use super::failure::{SendError, Stage};
use super::relay::{Fixable, FixableSource, Relay};
use super::relay_hold::RelayHold;
use super::relay_login::smtp_credentials;
use super::relay_trust::{RelayTrust, RootSource};
use crate::config::{Config, DkimAlgorithm, MailTransportKind, SmtpSecurity};

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
    /// Whether the relay refuses signupd and the queue waits; shared by every worker.
    hold: Arc<RelayHold>,
}

#[derive(Clone)]
enum Route {
    Smtp(Arc<Relay>),
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

/// The signer of `[mail.dkim]`: its key read, the headers and canonicalization signupd signs
/// with (`signupd doctor` signs its DKIM probe with it too).
pub fn dkim_signer(config: &crate::config::DkimConfig) -> anyhow::Result<DkimConfig> {
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
    // relaxed/relaxed, not lettre's default simple/relaxed. Under "simple" header canonicalization
    // every byte of the DKIM-Signature header counts, folding included, and lettre hashes that
    // header folded with an empty `b=` but sends it folded before the long `b=` value, so no
    // receiver could verify a signature (tests/api/dkim.rs checks with dkimpy). Relaxed unfolds
    // before hashing, which also survives relays that refold headers (RFC 6376 §3.4.2).
    let canonicalization =
        DkimCanonicalization { header: DkimCanonicalizationType::Relaxed, body: DkimCanonicalizationType::Relaxed };
    Ok(DkimConfig::new(config.selector.clone(), config.domain.clone(), key, headers, canonicalization))
}

impl Transport {
    /// Builds the configured transport. Reads the SMTP password and the DKIM key; writes
    /// nothing and does not connect (the first send does), so start-up checks may build it
    /// before anything exists. `credentials_dir` is [`crate::config::secrets::credentials_dir`]'s answer,
    /// passed in so tests need not set the environment.
    pub fn from_config(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let mail = &config.mail;
        let dkim = mail.dkim.as_ref().map(dkim_signer).transpose()?.map(Arc::new);
        // Greeting, EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA: a few round trips, each bounded.
        let send_timeout = mail.smtp.timeout.saturating_mul(3);
        Ok(Self { route: Self::route(config, credentials_dir)?, dkim, send_timeout, hold: Arc::default() })
    }

    fn route(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Route> {
        let mail = &config.mail;
        match mail.transport {
            MailTransportKind::File => Ok(Route::File(mail.file_dir.clone())),
            MailTransportKind::Smtp => {
                let smtp = &mail.smtp;
                let (trust, roots) = RelayTrust::load(smtp)?;
                let tls = match smtp.security {
                    // Checked at load time: only to a loopback relay.
                    SmtpSecurity::None => None,
                    // Any certificate, its handshake signature checked: `trust` judges the
                    // certificate itself after the handshake, so a refusal can name it
                    // (relay_trust's module doc says why).
                    SmtpSecurity::StartTls | SmtpSecurity::Tls => Some(
                        TlsParameters::builder(smtp.host.clone())
                            .dangerous_accept_invalid_certs(true)
                            .dangerous_accept_invalid_hostnames(true)
                            .build_rustls()
                            .context("mail.smtp.host: cannot set up TLS for it")?,
                    ),
                };
                if roots == RootSource::BuiltIn && smtp.security != SmtpSecurity::None {
                    tracing::info!(
                        "the system has no trusted certificates; the relay is checked against built-in roots"
                    );
                }
                let source =
                    FixableSource { smtp: smtp.clone(), credentials_dir: credentials_dir.map(Path::to_path_buf) };
                let credentials = smtp_credentials(smtp, credentials_dir)?;
                Ok(Route::Smtp(Arc::new(Relay::new(
                    (smtp.host.clone(), smtp.port, smtp.security, smtp.timeout),
                    tls,
                    client_id(config.helo_name()),
                    Fixable { trust, credentials },
                    source,
                ))))
            }
        }
    }

    /// The SMTP relay, when mail goes to one (`signupd doctor` talks to it without sending).
    pub fn relay(&self) -> Option<&Relay> {
        match &self.route {
            Route::Smtp(relay) => Some(relay),
            Route::File(_) => None,
        }
    }

    /// Whether the relay refuses signupd, shared by every clone of this transport.
    pub fn hold(&self) -> &RelayHold {
        &self.hold
    }

    /// The longest one send may take before it counts as a temporary failure.
    pub fn send_bound(&self) -> std::time::Duration {
        self.send_timeout
    }

    pub async fn send(&self, message: Message) -> Result<Delivered, SendError> {
        self.deliver(self.prepare(message)).await
    }

    /// The CPU half of a send, which needs no connection: the DKIM signature and the bytes on
    /// the wire. The mail workers do it for a whole batch on a blocking thread, so the runtime's
    /// threads only move bytes.
    pub fn prepare(&self, mut message: Message) -> Outgoing {
        if let Some(dkim) = &self.dkim {
            message.sign(dkim);
        }
        Outgoing { envelope: message.envelope().clone(), bytes: message.formatted() }
    }

    /// The I/O half of a send: `outgoing` to the relay, or into a file.
    pub async fn deliver(&self, outgoing: Outgoing) -> Result<Delivered, SendError> {
        match &self.route {
            // lettre's timeout bounds only the connect; a relay that stalls mid-conversation
            // would hold the worker (and shutdown) forever, so the whole send is bounded too.
            Route::Smtp(relay) => {
                let mut stage = Stage::Connect;
                let send = relay.send(&outgoing.envelope, &outgoing.bytes, &mut stage);
                match tokio::time::timeout(self.send_timeout, send).await {
                    Ok(Ok(code)) => Ok(Delivered::Smtp { code }),
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(relay.timed_out(stage)),
                }
            }
            Route::File(dir) => {
                let dir = dir.clone();
                tokio::task::spawn_blocking(move || write_eml(&dir, &outgoing.bytes))
                    .await
                    .map_err(|_| SendError::temporary("the file writer was cancelled".into()))?
                    .map(|path| Delivered::File { path })
                    .map_err(|error| SendError::temporary(format!("cannot write the mail file: {error:#}")))
            }
        }
    }
}

/// A mail signed and formatted, ready for the wire ([`Transport::prepare`]). No `Debug`: it
/// holds the address.
#[allow(missing_debug_implementations)]
pub struct Outgoing {
    envelope: lettre::address::Envelope,
    bytes: Vec<u8>,
}

/// The EHLO name ([`Config::helo_name`]): a domain, an address literal, or the host name.
fn client_id(name: Option<String>) -> ClientId {
    let Some(name) = name else { return ClientId::default() };
    let literal = name.strip_prefix('[').and_then(|rest| rest.strip_suffix(']'));
    match literal.map(str::parse::<std::net::IpAddr>) {
        Some(Ok(std::net::IpAddr::V4(address))) => ClientId::Ipv4(address),
        Some(Ok(std::net::IpAddr::V6(address))) => ClientId::Ipv6(address),
        _ => ClientId::Domain(name),
    }
}

/// Writes one `.eml` file, mode 0600 (it holds tokens), and returns its path.
fn write_eml(dir: &std::path::Path, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    crate::config::secrets::create_private_dir(dir)?;
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
    use lettre::transport::smtp::authentication::Credentials;

    use super::*;
    use crate::outbound::mail::relay_login::SMTP_PASSWORD_CREDENTIAL;

    fn smtp_credentials(extra: &str, credentials_dir: Option<&Path>) -> anyhow::Result<Option<Credentials>> {
        let toml = format!(
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"localhost\"\nusername = \"relay-user\"\n{extra}\n[[lists]]\nid = \"news\""
        );
        let config = crate::config::Config::from_toml(&toml).unwrap();
        match Transport::from_config(&config, credentials_dir)?.route {
            Route::Smtp(relay) => Ok(relay.credentials()),
            Route::File(_) => panic!("smtp transport expected"),
        }
    }

    #[test]
    fn the_smtp_password_comes_from_the_systemd_credential_when_nothing_else_is_set() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SMTP_PASSWORD_CREDENTIAL), "from-credential\n").unwrap();
        let expected = |password: &str| Some(Credentials::new("relay-user".into(), password.into()));

        assert_eq!(smtp_credentials("", Some(dir.path())).unwrap(), expected("from-credential"));

        let file = dir.path().join("password-file");
        std::fs::write(&file, "from-file").unwrap();
        let configured = format!("password_file = {:?}", file.display().to_string());
        assert_eq!(smtp_credentials(&configured, Some(dir.path())).unwrap(), expected("from-file"), "the file wins");
    }

    #[test]
    fn the_smtp_password_is_found_as_the_operator_keeps_it_in_smtp_password() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("smtp")).unwrap();
        std::fs::write(dir.path().join("smtp/password"), "on-disk\n").unwrap();
        let expected = Some(Credentials::new("relay-user".into(), "on-disk".into()));
        assert_eq!(smtp_credentials("", Some(dir.path())).unwrap(), expected);
    }

    #[test]
    fn a_user_name_without_any_password_names_every_place_to_put_one() {
        let empty = tempfile::tempdir().unwrap();
        for credentials_dir in [None, Some(empty.path())] {
            let error = smtp_credentials("", credentials_dir).unwrap_err().to_string();
            assert!(error.contains("mail.smtp.password_file") && error.contains(SMTP_PASSWORD_CREDENTIAL), "{error}");
        }
    }

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
        let transport = Transport::from_config(&config, None).unwrap();
        let to = crate::outbound::mail::message::Recipient {
            address: "ann@example.com",
            reference: "v1.REF",
            language: None,
        };
        let mail = crate::outbound::mail::message::welcome(&config, &config.lists[0], to, "M", "U").unwrap();
        let Delivered::File { path } = transport.send(mail).await.unwrap() else { panic!("file transport") };
        let written = std::fs::read_to_string(path).unwrap();
        let signature = written.lines().find(|line| line.starts_with("DKIM-Signature")).expect("signed");
        let unfolded: String =
            written.split("DKIM-Signature").nth(1).unwrap().split("\r\n\r\n").next().unwrap().replace("\r\n ", " ");
        assert!(signature.contains("d=example.com") && signature.contains("s=s1"), "{signature}");
        // Relaxed canonicalization lists the signed header names in lower case.
        let signed =
            unfolded.lines().find_map(|line| line.split("; h=").nth(1)).expect("an h= tag").to_ascii_lowercase();
        let signed: Vec<&str> = signed.split(';').next().unwrap().split(':').map(str::trim).collect();
        assert!(signed.contains(&"list-unsubscribe") && signed.contains(&"list-unsubscribe-post"), "{unfolded}");
    }

    #[test]
    fn a_dkim_section_needs_all_its_keys() {
        let error = crate::config::Config::from_toml("[mail.dkim]\nselector = \"s1\"\n[[lists]]\nid = \"a\"")
            .unwrap_err()
            .to_string();
        assert!(error.contains("mail.dkim.domain: must be set"), "{error}");
        assert!(error.contains("mail.dkim.private_key_file: must be set"), "{error}");
    }
}
