//! Talking to the SMTP relay: the connection, step by step, and what each failure means.
//!
//! SMTP runs over lettre's async connection (tokio + rustls), with a small pool of our own
//! instead of lettre's: lettre opens its sockets with Nagle's algorithm on, and the last write
//! of each mail then waits for the relay's delayed ACK, about 40 ms a mail. So signupd connects
//! the TCP socket itself with `TCP_NODELAY` and hands it to lettre (`connect_with_transport`),
//! then upgrades it with STARTTLS when configured. Implicit TLS (`security = "tls"`, port 465)
//! needs the TLS handshake before the SMTP greeting, which lettre only does on a socket it
//! opens itself, so that mode keeps lettre's socket (and the stall). A connection is reused
//! while it works; after a refused recipient it is reset (`RSET`) and kept, so the next mail
//! can settle whose refusal it was; after any other error it is dropped, and a reused one that
//! turns out to be dead (the relay closed it while idle) is replaced once by a fresh one. When
//! the relay refuses signupd, the idle connections are closed ([`Relay::close_idle`]).
//!
//! Each step is named ([`Stage`]), because whose fault a refusal is depends on where it came:
//! `RCPT TO` refused with 5.1.x is the recipient's, the same code to `AUTH` is the operator's.
//! `MAIL`, `RCPT` and `DATA` are sent here rather than by lettre's `send`, which would not say
//! which of them failed. Every failure is put in words that name the cause and what to change
//! (a closed port, a name that does not resolve, a certificate, a login, a sender), never the
//! recipient's address: words with an `@` in a server's reason are masked.
//!
//! What the operator fixes while signupd runs — the password (file or credential),
//! `mail.smtp.ca_file`, the system's trust store — is read again for the first connection after
//! any failure ([`Fixable`]), so held mail goes at the next try once the file is right, without
//! a restart. A connection that works reads nothing.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, DEFAULT_MECHANISMS};
use lettre::transport::smtp::client::{AsyncSmtpConnection, TlsParameters};
use lettre::transport::smtp::commands::{Data, Mail, Rcpt, Rset};
use lettre::transport::smtp::extension::{ClientId, Extension, MailBodyParameter, MailParameter};

use super::failure::{SendError, Stage, reason_without_addresses};
use super::relay_trust::RelayTrust;
use crate::config::{SmtpConfig, SmtpSecurity};

/// What the operator may fix at the relay's side of signupd without a restart, as last read.
#[derive(Debug, Clone)]
pub struct Fixable {
    pub trust: RelayTrust,
    pub credentials: Option<Credentials>,
}

impl Fixable {
    /// Reads the trust store, `ca_file` and the password as `smtp` names them. An error names
    /// the key and the file, and the stage it stops.
    pub fn read(smtp: &SmtpConfig, credentials_dir: Option<&std::path::Path>) -> Result<Self, (Stage, String)> {
        let (trust, _) = RelayTrust::load(smtp).map_err(|error| (Stage::Tls, format!("{error:#}")))?;
        let credentials = super::relay_login::smtp_credentials(smtp, credentials_dir)
            .map_err(|error| (Stage::Auth, format!("{error:#}")))?;
        Ok(Self { trust, credentials })
    }
}

/// Where [`Fixable`] is read from again.
#[derive(Debug, Clone)]
pub struct FixableSource {
    pub smtp: SmtpConfig,
    pub credentials_dir: Option<PathBuf>,
}

/// An SMTP relay and the connections to it that are open and idle.
pub struct Relay {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    /// Bounds the connect and each command's answer.
    pub timeout: Duration,
    /// The handshake's parameters: any certificate, its signature checked; `trust` judges it.
    pub tls: Option<TlsParameters>,
    pub client_id: ClientId,
    pub idle: Mutex<Vec<AsyncSmtpConnection>>,
    /// The trust and the login, as last read.
    fixable: Mutex<Arc<Fixable>>,
    /// Set by a failure: the next connection reads [`Fixable`] again first.
    stale: AtomicBool,
    source: FixableSource,
}
impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").field("at", &self.at()).field("security", &self.security).finish_non_exhaustive()
    }
}

/// Idle connections kept open: one per mail worker, and one for the odd extra sender.
const MAX_IDLE_CONNECTIONS: usize = super::WORKERS + 1;

impl Relay {
    /// A relay with no connection yet, `fixable` read from `source` already.
    pub fn new(
        (host, port, security, timeout): (String, u16, SmtpSecurity, Duration),
        tls: Option<TlsParameters>,
        client_id: ClientId,
        fixable: Fixable,
        source: FixableSource,
    ) -> Self {
        Self {
            host,
            port,
            security,
            timeout,
            tls,
            client_id,
            idle: Mutex::new(Vec::new()),
            fixable: Mutex::new(Arc::new(fixable)),
            stale: AtomicBool::new(false),
            source,
        }
    }

    /// The login as last read.
    pub fn credentials(&self) -> Option<Credentials> {
        self.fixable.lock().unwrap_or_else(PoisonError::into_inner).credentials.clone()
    }

    /// After a failure: the next connection reads the password, `ca_file` and the trust store
    /// again, since the operator may be fixing one of them.
    pub fn read_again(&self) {
        self.stale.store(true, Ordering::Release);
    }

    /// [`Fixable`], read again first when a failure asked for it.
    async fn fixable(&self) -> Result<Arc<Fixable>, SendError> {
        if self.stale.swap(false, Ordering::AcqRel) {
            let source = self.source.clone();
            let read =
                tokio::task::spawn_blocking(move || Fixable::read(&source.smtp, source.credentials_dir.as_deref()))
                    .await
                    .unwrap_or_else(|_| Err((Stage::Connect, "reading the relay's settings was cancelled".into())));
            match read {
                Ok(fresh) => *self.fixable.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(fresh),
                Err((stage, detail)) => {
                    self.read_again();
                    return Err(self.failure(stage, None, detail));
                }
            }
        }
        Ok(self.fixable.lock().unwrap_or_else(PoisonError::into_inner).clone())
    }

    /// Sends one mail; `stage` tracks how far it got, so a caller that gives up waiting can
    /// say where the relay went silent.
    pub async fn send(&self, envelope: &Envelope, bytes: &[u8], stage: &mut Stage) -> Result<u16, SendError> {
        let sent = self.send_once(envelope, bytes, stage).await;
        if sent.is_err() {
            self.read_again();
        }
        sent
    }

    async fn send_once(&self, envelope: &Envelope, bytes: &[u8], stage: &mut Stage) -> Result<u16, SendError> {
        if let Some(mut conn) = self.take_idle() {
            match self.transact(&mut conn, envelope, bytes, stage).await {
                Ok(code) => {
                    self.put_back(conn);
                    return Ok(code);
                }
                // The relay answered: that is its verdict on this mail. A session that
                // survived it (a refused recipient, reset) stays for the next mail.
                Err(error) if error.code.is_some() => {
                    self.put_back(conn);
                    return Err(error);
                }
                // The idle connection was dead: try once more on a fresh one.
                Err(_) => *stage = Stage::Connect,
            }
        }
        let mut conn = self.connect(stage).await?;
        let sent = self.transact(&mut conn, envelope, bytes, stage).await;
        self.put_back(conn);
        sent
    }

    /// A connection ready for `MAIL FROM`: connected, greeted, encrypted and checked as
    /// configured, logged in.
    pub async fn connect(&self, stage: &mut Stage) -> Result<AsyncSmtpConnection, SendError> {
        let connected = self.connect_once(stage).await;
        if connected.is_err() {
            self.read_again();
        }
        connected
    }

    async fn connect_once(&self, stage: &mut Stage) -> Result<AsyncSmtpConnection, SendError> {
        *stage = Stage::Connect;
        let fixable = self.fixable().await?;
        let addresses = self.resolve().await?;
        let mut conn = match (&self.security, &self.tls) {
            (SmtpSecurity::Tls, Some(tls)) => AsyncSmtpConnection::connect_tokio1(
                &addresses[..],
                Some(self.timeout),
                &self.client_id,
                Some(tls.clone()),
                None,
            )
            .await
            .map_err(|error| self.implicit_tls_failure(&error))?,
            _ => {
                let connect = tokio::net::TcpStream::connect(&addresses[..]);
                let stream = tokio::time::timeout(self.timeout, connect)
                    .await
                    .map_err(|_| self.failure(Stage::Connect, None, format!("timed out connecting to {}", self.at())))?
                    .map_err(|error| self.connect_failure(&error))?;
                stream.set_nodelay(true).map_err(|error| self.connect_failure(&error))?;
                *stage = Stage::Ehlo;
                let greeted = AsyncSmtpConnection::connect_with_transport(Box::new(stream), &self.client_id);
                let mut conn = tokio::time::timeout(self.timeout, greeted)
                    .await
                    .map_err(|_| self.timed_out(Stage::Ehlo))?
                    .map_err(|error| self.greeting_refused(&error))?;
                if let (SmtpSecurity::StartTls, Some(tls)) = (&self.security, &self.tls) {
                    *stage = Stage::Tls;
                    if !conn.can_starttls() {
                        conn.abort().await;
                        return Err(self.failure(
                            Stage::Tls,
                            None,
                            format!(
                                "TLS with {} failed: the relay does not offer STARTTLS. Use the relay's submission \
                                 port (587) with security = \"starttls\", or its implicit-TLS port (465) with \
                                 security = \"tls\"",
                                self.at()
                            ),
                        ));
                    }
                    conn.starttls(tls.clone(), &self.client_id).await.map_err(|error| {
                        if error.status().is_some() {
                            self.refused_or_closed(Stage::Tls, &error)
                        } else {
                            self.handshake_failure(&error, "security = \"tls\" (implicit TLS, port 465)")
                        }
                    })?;
                }
                conn
            }
        };
        if self.tls.is_some() {
            *stage = Stage::Tls;
            let chain = conn.certificate_chain().unwrap_or_default();
            if let Err(refusal) = fixable.trust.check(&chain) {
                conn.abort().await;
                return Err(self.failure(Stage::Tls, None, refusal));
            }
        }
        if let Some(credentials) = &fixable.credentials {
            *stage = Stage::Auth;
            if let Err(error) = conn.auth(DEFAULT_MECHANISMS, credentials).await {
                conn.abort().await;
                return Err(match error.status() {
                    Some(_) => self.refused(
                        Stage::Auth,
                        &error,
                        "refused the login (AUTH)",
                        "check mail.smtp.username and the password",
                    ),
                    None if error.is_client() => self.failure(
                        Stage::Auth,
                        None,
                        format!(
                            "the relay {} offers no login (AUTH) signupd can use (PLAIN or LOGIN); on port 25 \
                             relays often offer none: use the submission port (587) or 465",
                            self.host
                        ),
                    ),
                    None => self.refused_or_closed(Stage::Auth, &error),
                });
            }
        }
        Ok(conn)
    }

    /// `MAIL FROM`, `RCPT TO`, `DATA`, each named when it fails. A refused recipient ends only
    /// its transaction: `RSET`, and the session stays for the next mail, whose answer settles
    /// whose refusal it was (`super::worker`). lettre's own `send` quits on any refusal, which
    /// is why signupd sends these steps itself. Any other failure drops the connection.
    async fn transact(
        &self,
        conn: &mut AsyncSmtpConnection,
        envelope: &Envelope,
        bytes: &[u8],
        stage: &mut Stage,
    ) -> Result<u16, SendError> {
        let result = self.transact_steps(conn, envelope, bytes, stage).await;
        match &result {
            Ok(_) => {}
            Err(error) if error.refused_at_rcpt() => {
                if conn.command(Rset).await.is_err() {
                    conn.abort().await;
                }
            }
            Err(_) => conn.abort().await,
        }
        result
    }

    async fn transact_steps(
        &self,
        conn: &mut AsyncSmtpConnection,
        envelope: &Envelope,
        bytes: &[u8],
        stage: &mut Stage,
    ) -> Result<u16, SendError> {
        *stage = Stage::MailFrom;
        let mut parameters = Vec::new();
        let non_ascii = envelope
            .from()
            .into_iter()
            .chain(envelope.to())
            .any(|address: &lettre::Address| !AsRef::<str>::as_ref(address).is_ascii());
        if non_ascii {
            if !conn.server_info().supports_feature(Extension::SmtpUtfEight) {
                return Err(self.failure(
                    Stage::MailFrom,
                    None,
                    format!("the relay {} does not take international addresses (no SMTPUTF8)", self.host),
                ));
            }
            parameters.push(MailParameter::SmtpUtfEight);
        }
        if !bytes.is_ascii() && conn.server_info().supports_feature(Extension::EightBitMime) {
            parameters.push(MailParameter::Body(MailBodyParameter::EightBitMime));
        }
        conn.command(Mail::new(envelope.from().cloned(), parameters)).await.map_err(|error| {
            self.refused(
                Stage::MailFrom,
                &error,
                "refused the sender (MAIL FROM)",
                "the relay does not let this login send as the list's from address: use an address it allows \
                 (lists[].from), or allow it at the relay",
            )
        })?;
        *stage = Stage::Rcpt;
        for to in envelope.to() {
            conn.command(Rcpt::new(to.clone(), vec![])).await.map_err(|error| self.recipient_refusal(&error))?;
        }
        *stage = Stage::Data;
        conn.command(Data).await.map_err(|error| self.data_refusal(&error))?;
        let response = conn.message(bytes).await.map_err(|error| self.data_refusal(&error))?;
        Ok(u16::from(response.code()))
    }

    /// A refusal at `RCPT TO`: the recipient's (as the server put it, for the hard-bounce
    /// reading), or the relay's policy ("relaying denied").
    fn recipient_refusal(&self, error: &lettre::transport::smtp::Error) -> SendError {
        let plain = self.plain(Stage::Rcpt, error);
        if plain.code.is_none() || plain.refused_address().is_some() || !plain.permanent {
            return plain;
        }
        self.refused(
            Stage::Rcpt,
            error,
            "refused to relay (RCPT TO)",
            "it does not take this login's mail for other domains: check mail.smtp.username, and that signupd logs in",
        )
    }

    fn data_refusal(&self, error: &lettre::transport::smtp::Error) -> SendError {
        let plain = self.plain(Stage::Data, error);
        if plain.code.is_none() || plain.refused_address().is_some() {
            return plain;
        }
        self.refused(Stage::Data, error, "refused the mail (DATA)", "the relay's log says why")
    }

    /// The server's answer as it gave it: `SMTP 550: 5.1.1 [address]: User unknown`.
    fn plain(&self, stage: Stage, error: &lettre::transport::smtp::Error) -> SendError {
        match error.status() {
            Some(code) => SendError {
                permanent: error.is_permanent(),
                code: Some(u16::from(code)),
                stage: Some(stage),
                detail: format!("SMTP {}: {}", u16::from(code), server_reason(error)),
            },
            None => self.refused_or_closed(stage, error),
        }
    }

    /// The relay answered `what` with a refusal: its code and reason, and what to do. A reason
    /// that names the HELO is about signupd's EHLO name, wherever it came (Postfix gives its
    /// `smtpd_helo_restrictions` refusal at `RCPT TO`), not about the login or the sender.
    fn refused(&self, stage: Stage, error: &lettre::transport::smtp::Error, what: &str, todo: &str) -> SendError {
        match error.status() {
            Some(code) => {
                let code = u16::from(code);
                let reason = server_reason(error);
                let detail = if names_the_helo(&reason) {
                    format!(
                        "the relay {} refused signupd's EHLO name: SMTP {code}: {reason}: {}",
                        self.host,
                        self.helo_todo()
                    )
                } else {
                    format!("the relay {} {what}: SMTP {code}: {reason}: {todo}", self.host)
                };
                SendError { permanent: error.is_permanent(), code: Some(code), stage: Some(stage), detail }
            }
            None => self.refused_or_closed(stage, error),
        }
    }

    /// A failure without an SMTP answer at `stage`: a timeout, or the connection closing.
    fn refused_or_closed(&self, stage: Stage, error: &lettre::transport::smtp::Error) -> SendError {
        if error.status().is_some() {
            return self.refused(stage, error, &format!("refused {}", stage_words(stage)), "the relay's log says why");
        }
        let detail = if error.is_timeout() {
            format!("timed out waiting for {} ({}){}", self.host, stage_words(stage), self.port_hint())
        } else {
            format!("{} closed the connection at {} ({error}){}", self.at(), stage_words(stage), self.port_hint())
        };
        self.failure(stage, None, detail)
    }

    /// The greeting or the answer to `EHLO` was a refusal, or the connection closed before.
    fn greeting_refused(&self, error: &lettre::transport::smtp::Error) -> SendError {
        match error.status() {
            Some(code) if matches!(u16::from(code), 501 | 504) || names_the_helo(&server_reason(error)) => {
                let detail = format!(
                    "the relay {} refused signupd's EHLO name: SMTP {}: {}: {}",
                    self.host,
                    u16::from(code),
                    server_reason(error),
                    self.helo_todo()
                );
                SendError {
                    permanent: error.is_permanent(),
                    code: Some(u16::from(code)),
                    stage: Some(Stage::Ehlo),
                    detail,
                }
            }
            _ => self.refused_or_closed(Stage::Ehlo, error),
        }
    }

    /// What fixes a refused EHLO name.
    fn helo_todo(&self) -> String {
        format!(
            "signupd said EHLO {}; set mail.smtp.helo_name to a fully-qualified name of this machine that the relay \
             accepts (one that resolves to it)",
            self.client_id
        )
    }

    fn implicit_tls_failure(&self, error: &lettre::transport::smtp::Error) -> SendError {
        if let Some(rustls) = rustls_error(error) {
            return self.failure(
                Stage::Tls,
                None,
                format!("TLS with {} failed: {}", self.at(), implicit_tls_words(rustls)),
            );
        }
        if error.is_tls() {
            return self.handshake_failure(error, "security = \"starttls\" (port 587)");
        }
        if error.status().is_some() || error.is_response() {
            return self.refused_or_closed(Stage::Ehlo, error);
        }
        if error.is_timeout() {
            return self.failure(Stage::Connect, None, format!("timed out connecting to {}", self.at()));
        }
        let io = std::iter::successors(std::error::Error::source(error), |source| source.source())
            .find_map(|source| source.downcast_ref::<std::io::Error>());
        match io {
            Some(io) => self.connect_failure(io),
            None => self.refused_or_closed(Stage::Connect, error),
        }
    }

    /// The TLS handshake itself failed (not the certificate, which is judged after it).
    fn handshake_failure(&self, error: &lettre::transport::smtp::Error, other_mode: &str) -> SendError {
        let cause = rustls_error(error).map_or_else(|| "the connection broke off".to_owned(), handshake_words);
        self.failure(
            Stage::Tls,
            None,
            format!("TLS with {} failed: the handshake failed ({cause}). Does this port want {other_mode}?", self.at()),
        )
    }

    fn connect_failure(&self, error: &std::io::Error) -> SendError {
        let detail = match error.kind() {
            std::io::ErrorKind::ConnectionRefused => format!(
                "connection refused by {}: nothing listens there; check mail.smtp.host and mail.smtp.port",
                self.at()
            ),
            std::io::ErrorKind::TimedOut => format!("timed out connecting to {}", self.at()),
            _ => format!("cannot connect to {} ({error})", self.at()),
        };
        self.failure(Stage::Connect, None, detail)
    }

    async fn resolve(&self) -> Result<Vec<SocketAddr>, SendError> {
        let lookup = tokio::net::lookup_host((self.host.as_str(), self.port));
        let not_found = |why: String| {
            self.failure(
                Stage::Connect,
                None,
                format!("the name {} (mail.smtp.host) does not resolve: {why}", self.host),
            )
        };
        match tokio::time::timeout(self.timeout, lookup).await {
            Err(_) => Err(not_found("no answer in time".into())),
            Ok(Err(error)) => Err(not_found(error.to_string())),
            Ok(Ok(addresses)) => {
                let addresses: Vec<SocketAddr> = addresses.collect();
                if addresses.is_empty() { Err(not_found("no address".into())) } else { Ok(addresses) }
            }
        }
    }

    /// Said after a silence or a closed connection: the usual mix-up of port and mode.
    fn port_hint(&self) -> String {
        match (self.port, self.security) {
            (465, SmtpSecurity::StartTls | SmtpSecurity::None) => "; port 465 usually wants security = \"tls\"".into(),
            (587 | 25, SmtpSecurity::Tls) => format!("; port {} usually wants security = \"starttls\"", self.port),
            _ => String::new(),
        }
    }

    /// Said after silence where the relay should greet: a port of implicit TLS waits, silent,
    /// for the client's TLS handshake, whatever its number.
    fn silence_hint(&self, stage: Stage) -> String {
        match (stage, self.security, self.port) {
            (Stage::Ehlo, SmtpSecurity::StartTls | SmtpSecurity::None, port) if port != 465 => format!(
                "; the relay never greeted signupd: a port of implicit TLS (usually 465) waits silently for a TLS \
                 handshake, and then wants security = \"tls\" (port {port} is configured, with security = \"{}\")",
                if self.security == SmtpSecurity::StartTls { "starttls" } else { "none" }
            ),
            _ => self.port_hint(),
        }
    }

    pub fn at(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn failure(&self, stage: Stage, code: Option<u16>, detail: String) -> SendError {
        SendError { permanent: false, code, stage: Some(stage), detail }
    }

    /// A timeout of the whole conversation, which stopped at `stage`.
    pub fn timed_out(&self, stage: Stage) -> SendError {
        self.read_again();
        let detail =
            format!("timed out waiting for {} ({}){}", self.host, stage_words(stage), self.silence_hint(stage));
        self.failure(stage, None, detail)
    }

    /// Closes the idle connections: after the relay refused signupd, the next try logs in
    /// afresh, so it meets the relay's configuration and the password as they are then (a
    /// session kept open would go on hearing the old ones).
    pub fn close_idle(&self) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.clear();
        }
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
}

fn stage_words(stage: Stage) -> &'static str {
    match stage {
        Stage::Connect => "connecting",
        Stage::Tls => "TLS",
        Stage::Ehlo => "the greeting and EHLO",
        Stage::Auth => "AUTH",
        Stage::MailFrom => "MAIL FROM",
        Stage::Rcpt => "RCPT TO",
        Stage::Data => "DATA",
    }
}

/// What the server said, without lettre's "permanent error (535): " before it (the code is
/// given once, by the caller) and with addresses masked.
fn server_reason(error: &lettre::transport::smtp::Error) -> String {
    let text = error.to_string();
    let said = ["permanent error (", "transient error ("]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
        .and_then(|rest| rest.split_once("): ").map(|(_, said)| said))
        .unwrap_or(&text);
    reason_without_addresses(said)
}

/// Whether a relay's reason is about the name given in `HELO`/`EHLO` (Postfix: "Helo command
/// rejected: need fully-qualified hostname"; Exim and others: "HELO/EHLO …", "invalid HELO").
fn names_the_helo(reason: &str) -> bool {
    let reason = reason.to_ascii_lowercase();
    ["helo", "ehlo"].iter().any(|word| reason.contains(word))
}

/// The rustls error under a TLS failure, however lettre and tokio wrapped it (an `io::Error`
/// hides its inner error from `source()`).
fn rustls_error(error: &lettre::transport::smtp::Error) -> Option<&rustls::Error> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(current) = next {
        if let Some(rustls) = current.downcast_ref::<rustls::Error>() {
            return Some(rustls);
        }
        if let Some(inner) = current.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref)
            && let Some(rustls) = inner.downcast_ref::<rustls::Error>()
        {
            return Some(rustls);
        }
        next = current.source();
    }
    None
}

/// A failed handshake with `security = "tls"`: a relay answering in plain text speaks SMTP
/// first, and wants STARTTLS.
fn implicit_tls_words(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidMessage(_) => {
            "the relay answered in plain text, not TLS: this port speaks SMTP first and \
             upgrades with STARTTLS (usually port 587 or 25); set security = \"starttls\""
                .into()
        }
        other => format!(
            "{}; if this port wants STARTTLS (usually 587), set security = \"starttls\"",
            handshake_words(other)
        ),
    }
}

/// A failed TLS handshake, in words.
fn handshake_words(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidMessage(_) => "the relay sent something that is not TLS".into(),
        rustls::Error::PeerIncompatible(_) => {
            "the relay offers no TLS version or cipher suite signupd accepts (TLS 1.2 or 1.3 with a current suite)"
                .into()
        }
        rustls::Error::AlertReceived(_) => "the relay broke off the handshake with an alert (its log says why)".into(),
        rustls::Error::PeerMisbehaved(_) => "the relay broke the TLS protocol during the handshake".into(),
        _ => "the TLS handshake failed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_naming_the_helo_is_told_from_a_login_or_sender_refusal() {
        for (reason, helo) in [
            ("5.5.2 <mta>: Helo command rejected: need fully-qualified hostname", true),
            ("5.7.1 <localhost>: Helo command rejected: Host not found", true),
            ("invalid EHLO name", true),
            ("5.7.8 Authentication credentials invalid", false),
            ("5.7.1 [address]: Sender address rejected: not owned by user relay-user", false),
        ] {
            assert_eq!(names_the_helo(reason), helo, "{reason}");
        }
    }
}
