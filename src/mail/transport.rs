//! Where mail goes: an SMTP relay, or `.eml` files in a folder (the zero-setup default, so a
//! newcomer can open the confirm link from the file). Built once at start and kept.
//!
//! SMTP runs over lettre's async connection (tokio + rustls), with a small pool of our own
//! instead of lettre's: lettre opens its sockets with Nagle's algorithm on, and the last write
//! of each mail then waits for the relay's delayed ACK, about 40 ms a mail. So signupd connects
//! the TCP socket itself with `TCP_NODELAY` and hands it to lettre (`connect_with_transport`),
//! then upgrades it with STARTTLS when configured. Implicit TLS (`security = "tls"`, port 465)
//! needs the TLS handshake before the SMTP greeting, which lettre only does on a socket it
//! opens itself, so that mode keeps lettre's socket (and the stall). A connection is reused
//! while it works; after any error it is dropped, and a reused one that turns out to be dead
//! (the relay closed it while idle) is replaced once by a fresh one.
//!
//! Failures are classified for the worker: SMTP 5xx is permanent; 4xx, connection errors and
//! timeouts are temporary. Error text carries the SMTP code and the server's reason, never the
//! recipient.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};

use anyhow::Context;
use lettre::Message;
use lettre::address::Envelope;
use lettre::message::dkim::{
    DkimCanonicalization, DkimCanonicalizationType, DkimConfig, DkimSigningAlgorithm, DkimSigningKey,
};
use lettre::message::header::HeaderName;
use lettre::transport::smtp::authentication::{Credentials, DEFAULT_MECHANISMS};
use lettre::transport::smtp::client::{AsyncSmtpConnection, TlsParameters};
use lettre::transport::smtp::extension::ClientId;

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

impl SendError {
    /// Whether the server refused the address itself, for good — a hard bounce at send time —
    /// and the enhanced status it gave (empty without one): a permanent reply whose enhanced
    /// status [`refuses_the_address`], or, without an enhanced status, 550, 551 or 553.
    pub fn refused_address(&self) -> Option<String> {
        if !self.permanent || self.code.is_none() {
            return None;
        }
        let enhanced = self.detail.split_whitespace().find_map(|word| {
            let word = word.trim_end_matches([':', ',', ';', ')']).trim_start_matches('(');
            enhanced_status(word).map(|status| (word, status))
        });
        match enhanced {
            Some((word, status)) => refuses_the_address(status).then(|| word.to_owned()),
            None => matches!(self.code, Some(550 | 551 | 553)).then(String::new),
        }
    }
}

/// An RFC 3463 enhanced status code (`5.1.1`) as its class, subject and detail.
pub fn enhanced_status(text: &str) -> Option<(u16, u16, u16)> {
    let mut parts = text.trim().split('.');
    let mut next = || -> Option<u16> {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let status = (next()?, next()?, next()?);
    (parts.next().is_none() && matches!(status.0, 2 | 4 | 5)).then_some(status)
}

/// Whether an enhanced status says the address does not take mail, for good: 5.1.x (a bad
/// mailbox or domain), 5.2.1 (a disabled mailbox), 5.4.4 (no route to the domain).
pub fn refuses_the_address(status: (u16, u16, u16)) -> bool {
    matches!(status, (5, 1, _) | (5, 2, 1) | (5, 4, 4))
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

/// An SMTP relay and the connections to it that are open and idle.
struct Relay {
    host: String,
    port: u16,
    security: SmtpSecurity,
    /// Bounds the connect and each command's answer.
    timeout: std::time::Duration,
    tls: Option<TlsParameters>,
    credentials: Option<Credentials>,
    client_id: ClientId,
    idle: Mutex<Vec<AsyncSmtpConnection>>,
}

impl Relay {
    async fn connect(&self) -> Result<AsyncSmtpConnection, SendError> {
        let mut conn = match (&self.security, &self.tls) {
            (SmtpSecurity::Tls, Some(tls)) => AsyncSmtpConnection::connect_tokio1(
                (self.host.as_str(), self.port),
                Some(self.timeout),
                &self.client_id,
                Some(tls.clone()),
                None,
            )
            .await
            .map_err(|error| classify(&error))?,
            _ => {
                let connect = tokio::net::TcpStream::connect((self.host.as_str(), self.port));
                let stream = tokio::time::timeout(self.timeout, connect)
                    .await
                    .map_err(|_| temporary("timed out connecting to the SMTP server".into()))?
                    .map_err(|_| temporary(CONNECTION_FAILED.into()))?;
                stream.set_nodelay(true).map_err(|_| temporary(CONNECTION_FAILED.into()))?;
                let mut conn = AsyncSmtpConnection::connect_with_transport(Box::new(stream), &self.client_id)
                    .await
                    .map_err(|error| classify(&error))?;
                if let (SmtpSecurity::StartTls, Some(tls)) = (&self.security, &self.tls) {
                    conn.starttls(tls.clone(), &self.client_id).await.map_err(|error| classify(&error))?;
                }
                conn
            }
        };
        if let Some(credentials) = &self.credentials {
            conn.auth(DEFAULT_MECHANISMS, credentials).await.map_err(|error| classify(&error))?;
        }
        Ok(conn)
    }

    fn take_idle(&self) -> Option<AsyncSmtpConnection> {
        self.idle.lock().ok()?.pop()
    }

    fn put_back(&self, conn: AsyncSmtpConnection) {
        if conn.has_broken() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE_CONNECTIONS
        {
            idle.push(conn);
        }
    }

    async fn send(&self, envelope: &Envelope, bytes: &[u8]) -> Result<u16, SendError> {
        if let Some(mut conn) = self.take_idle() {
            match conn.send(envelope, bytes).await {
                Ok(response) => {
                    self.put_back(conn);
                    return Ok(u16::from(response.code()));
                }
                // The relay answered: that is its verdict on this mail.
                Err(error) if error.status().is_some() => return Err(classify(&error)),
                // The idle connection was dead: try once more on a fresh one.
                Err(_) => {}
            }
        }
        let mut conn = self.connect().await?;
        let response = conn.send(envelope, bytes).await.map_err(|error| classify(&error))?;
        self.put_back(conn);
        Ok(u16::from(response.code()))
    }
}

/// Idle connections kept open: one per mail worker, and one for the odd extra sender.
const MAX_IDLE_CONNECTIONS: usize = super::WORKERS + 1;
const CONNECTION_FAILED: &str = "could not talk to the SMTP server (connection refused or closed)";

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
    // relaxed/relaxed, not lettre's default simple/relaxed. Under "simple" header canonicalization
    // every byte of the DKIM-Signature header counts, folding included, and lettre hashes that
    // header folded with an empty `b=` but sends it folded before the long `b=` value, so no
    // receiver could verify a signature (tests/api/dkim.rs checks with dkimpy). Relaxed unfolds
    // before hashing, which also survives relays that refold headers (RFC 6376 §3.4.2).
    let canonicalization =
        DkimCanonicalization { header: DkimCanonicalizationType::Relaxed, body: DkimCanonicalizationType::Relaxed };
    Ok(DkimConfig::new(config.selector.clone(), config.domain.clone(), key, headers, canonicalization))
}

/// The name of the SMTP password credential (`smtp/password` in the credentials directory).
pub const SMTP_PASSWORD_CREDENTIAL: &str = "smtp_password";

/// A password file's contents without the trailing line break `echo` leaves.
fn read_password(path: &Path, source: &str) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("{source}: cannot read {}", path.display()))?
        .trim_end_matches(['\r', '\n'])
        .to_owned())
}

impl Transport {
    /// Builds the configured transport. Reads the SMTP password and the DKIM key; writes
    /// nothing and does not connect (the first send does), so start-up checks may build it
    /// before anything exists. `credentials_dir` is [`crate::secrets::credentials_dir`]'s answer,
    /// passed in so tests need not set the environment.
    pub fn from_config(mail: &MailConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let dkim = mail.dkim.as_ref().map(dkim_signer).transpose()?.map(Arc::new);
        // Greeting, EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA: a few round trips, each bounded.
        let send_timeout = mail.smtp.timeout.saturating_mul(3);
        Ok(Self { route: Self::route(mail, credentials_dir)?, dkim, send_timeout })
    }

    fn route(mail: &MailConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Route> {
        match mail.transport {
            MailTransportKind::File => Ok(Route::File(mail.file_dir.clone())),
            MailTransportKind::Smtp => {
                let smtp = &mail.smtp;
                let tls = match smtp.security {
                    // Checked at load time: only to a loopback relay.
                    SmtpSecurity::None => None,
                    SmtpSecurity::StartTls | SmtpSecurity::Tls => Some(
                        TlsParameters::new(smtp.host.clone()).context("mail.smtp.host: cannot set up TLS for it")?,
                    ),
                };
                let credentials = match &smtp.username {
                    None => None,
                    Some(username) => {
                        // The configured file, then the environment, then the credential
                        // `smtp_password` (the Debian unit loads it from `smtp/password`).
                        let password = match (&smtp.password_file, &smtp.password) {
                            (Some(path), _) => read_password(path, "mail.smtp.password_file")?,
                            (None, Some(password)) => password.clone(),
                            (None, None) => {
                                let found = credentials_dir
                                    .map(|dir| crate::secrets::find_credential(dir, SMTP_PASSWORD_CREDENTIAL))
                                    .transpose()?
                                    .flatten();
                                match found {
                                    Some(path) => {
                                        read_password(&path, &format!("credential {SMTP_PASSWORD_CREDENTIAL}"))?
                                    }
                                    None => anyhow::bail!(
                                        "mail.smtp.username is set but there is no password: set \
                                         mail.smtp.password_file, SIGNUPD_MAIL__SMTP__PASSWORD or the credential \
                                         {SMTP_PASSWORD_CREDENTIAL} (smtp/password); {}",
                                        crate::secrets::missing_credential(credentials_dir, SMTP_PASSWORD_CREDENTIAL)
                                    ),
                                }
                            }
                        };
                        Some(Credentials::new(username.clone(), password))
                    }
                };
                Ok(Route::Smtp(Arc::new(Relay {
                    host: smtp.host.clone(),
                    port: smtp.port,
                    security: smtp.security,
                    timeout: smtp.timeout,
                    tls,
                    credentials,
                    client_id: ClientId::default(),
                    idle: Mutex::new(Vec::new()),
                })))
            }
        }
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
                match tokio::time::timeout(self.send_timeout, relay.send(&outgoing.envelope, &outgoing.bytes)).await {
                    Ok(Ok(code)) => Ok(Delivered::Smtp { code }),
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(temporary("timed out talking to the SMTP server".into())),
                }
            }
            Route::File(dir) => {
                let dir = dir.clone();
                tokio::task::spawn_blocking(move || write_eml(&dir, &outgoing.bytes))
                    .await
                    .map_err(|_| temporary("the file writer was cancelled".into()))?
                    .map(|path| Delivered::File { path })
                    .map_err(|error| temporary(format!("cannot write the mail file: {error:#}")))
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
        None => CONNECTION_FAILED.to_owned(),
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

    #[test]
    fn a_permanent_refusal_of_the_address_is_told_apart_from_other_refusals() {
        let refusal = |permanent, code, detail: &str| SendError { permanent, code, detail: detail.to_owned() };
        let cases = [
            (refusal(true, Some(550), "SMTP 550: permanent error (550): 5.1.1 [address]: User unknown"), Some("5.1.1")),
            (refusal(true, Some(550), "SMTP 550: 5.2.1 mailbox disabled"), Some("5.2.1")),
            (refusal(true, Some(554), "SMTP 554: 5.4.4 unrouteable"), Some("5.4.4")),
            (refusal(true, Some(550), "SMTP 550: no such user here"), Some("")),
            (refusal(true, Some(553), "SMTP 553: mailbox name not allowed"), Some("")),
            (refusal(true, Some(554), "SMTP 554: 5.7.1 relay access denied"), None),
            (refusal(true, Some(550), "SMTP 550: (5.7.1) rejected by policy from 10.1.2.3"), None),
            (refusal(true, Some(552), "SMTP 552: 5.2.2 mailbox full"), None),
            (refusal(true, Some(554), "SMTP 554: transaction failed"), None),
            (refusal(false, Some(450), "SMTP 450: 4.1.1 try later"), None),
            (refusal(true, None, "the message could not be built"), None),
        ];
        for (error, expected) in cases {
            assert_eq!(error.refused_address().as_deref(), expected, "{}", error.detail);
        }
        assert_eq!(enhanced_status("5.1.10"), Some((5, 1, 10)));
        for nonsense in ["10.1.2.3", "5.1", "550", "6.1.1", "5..1", "5.1.1.", "x.1.1"] {
            assert_eq!(enhanced_status(nonsense), None, "{nonsense}");
        }
    }

    fn smtp_credentials(extra: &str, credentials_dir: Option<&Path>) -> anyhow::Result<Option<Credentials>> {
        let toml = format!(
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"localhost\"\nusername = \"relay-user\"\n{extra}\n[[lists]]\nid = \"news\""
        );
        let config = crate::config::Config::from_toml(&toml).unwrap();
        match Transport::from_config(&config.mail, credentials_dir)?.route {
            Route::Smtp(relay) => Ok(relay.credentials.clone()),
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
        let transport = Transport::from_config(&config.mail, None).unwrap();
        let to = crate::mail::message::Recipient { address: "ann@example.com", reference: "v1.REF" };
        let mail = crate::mail::message::welcome(&config, &config.lists[0], to, "M", "U").unwrap();
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

    #[test]
    fn addresses_are_masked_in_server_reasons() {
        assert_eq!(
            reason_without_addresses("permanent error (550): <ann@example.com> no such user"),
            "permanent error (550): [address] no such user"
        );
    }
}
