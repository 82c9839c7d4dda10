//! A real SMTP server on 127.0.0.1 for the mail tests (`mailin-embedded`): it records every
//! message it accepts and can be scripted to refuse senders or recipients, or to answer the end of `DATA`
//! with a queue of reply codes (`[451, 451, 250]`).
//!
//! The server binds before it serves, so a test never waits for it to start. It cannot be
//! stopped (mailin has no shutdown); its threads end with the test binary. "Server down" is a
//! port that nobody listens on: [`free_port`] learns one, and [`SmtpServer::start_on`] starts
//! the server there later.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex, MutexGuard};

use mailin_embedded::response::OK;
use mailin_embedded::response::{AUTH_OK, INVALID_CREDENTIALS};
use mailin_embedded::{AuthMechanism, Handler, Response, Server, SslConfig};

/// What the server has seen and what it is told to answer; shared by every connection.
#[derive(Debug, Default)]
struct Script {
    /// Raw bytes of every accepted message (dot-unstuffed, CRLF line ends).
    received: Vec<Vec<u8>>,
    /// Every message whose data arrived, accepted or not.
    data_attempts: usize,
    /// Reply codes for the end of `DATA`, consumed one per message; 250 when empty.
    data_answers: VecDeque<u16>,
    /// A code with which every `RCPT TO` is refused (a permanent 550, say).
    rcpt_answer: Option<u16>,
    /// Replies to `RCPT TO` as a real relay words them: (the recipients it is for, `None`
    /// for everyone; code; text), the first that fits answers.
    rcpt_replies: Vec<(Option<String>, u16, String)>,
    /// Every recipient given in `RCPT TO`, refused or not.
    rcpt_attempts: Vec<String>,
    /// A reply, code and text, to the end of every `DATA` from now on (before `data_answers`).
    data_reply: Option<(u16, String)>,
    /// A code with which every `MAIL FROM` is refused (a sender the relay will not carry).
    mail_answer: Option<u16>,
    /// Every `MAIL FROM` the server was sent, accepted or not.
    mail_attempts: usize,
    /// The name each client gave in `HELO`/`EHLO`.
    helo_names: Vec<String>,
    /// A code with which every `EHLO` is refused, as Postfix's `smtpd_helo_restrictions` do.
    helo_answer: Option<u16>,
    /// The user name and password `AUTH` must give, when the server asks for a login.
    login: Option<(String, String)>,
    /// Every login tried: the password given.
    login_attempts: Vec<String>,
    /// How many `AUTH` exchanges gave them.
    logins: usize,
}

/// A running test SMTP server.
#[derive(Debug, Clone)]
pub struct SmtpServer {
    pub port: u16,
    script: Arc<Mutex<Script>>,
}

impl SmtpServer {
    /// A server on a fresh port that accepts everything.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test SMTP server");
        Self::serve(listener)
    }

    /// A server on `port`, which a test learned from [`free_port`] and kept closed until now.
    pub fn start_on(port: u16) -> Self {
        let mut last_error = None;
        // The port was free a moment ago; another socket could have taken it in between, which
        // a few more attempts cannot fix, but a slow release of the old listener can.
        for _ in 0..20 {
            match TcpListener::bind(("127.0.0.1", port)) {
                Ok(listener) => return Self::serve(listener),
                Err(error) => {
                    last_error = Some(error);
                    std::thread::yield_now();
                }
            }
        }
        panic!("cannot bind the test SMTP server to port {port}: {last_error:?}");
    }

    /// A server on a fresh port that offers STARTTLS with the certificate in `cert_path` (PEM,
    /// followed by the certificates of `chain_path`) and its key.
    pub fn start_tls(cert_path: &std::path::Path, key_path: &std::path::Path, chain_path: &std::path::Path) -> Self {
        // Both of rustls's crypto backends are compiled in (lettre's and ring), so the server
        // side needs one named for the process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self::start_tls_with_login(cert_path, key_path, chain_path, None)
    }

    /// [`Self::start_tls`] with a login: after STARTTLS the server offers `AUTH PLAIN` and
    /// `AUTH LOGIN` and takes no mail before `username` and `password` were given (mailin offers
    /// `AUTH` only over TLS).
    pub fn start_tls_with_login(
        cert_path: &std::path::Path,
        key_path: &std::path::Path,
        chain_path: &std::path::Path,
        login: Option<(&str, &str)>,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test SMTP server");
        let path = |path: &std::path::Path| path.display().to_string();
        let ssl =
            SslConfig::Trusted { cert_path: path(cert_path), key_path: path(key_path), chain_path: path(chain_path) };
        let login = login.map(|(user, password)| (user.to_owned(), password.to_owned()));
        Self::serve_with_login(listener, ssl, login)
    }

    fn serve(listener: TcpListener) -> Self {
        Self::serve_with(listener, SslConfig::None)
    }

    fn serve_with(listener: TcpListener, ssl: SslConfig) -> Self {
        Self::serve_with_login(listener, ssl, None)
    }

    fn serve_with_login(listener: TcpListener, ssl: SslConfig, login: Option<(String, String)>) -> Self {
        let port = listener.local_addr().expect("a bound address").port();
        let asks_for_login = login.is_some();
        let script = Arc::new(Mutex::new(Script { login, ..Script::default() }));
        let handler =
            Recorder { script: script.clone(), message: Vec::new(), recipients: Vec::new(), refused_data: false };
        let mut server = Server::new(handler);
        server
            .with_name("smtp.test")
            .with_num_threads(16)
            .with_ssl(ssl)
            .expect("the test certificate loads")
            .with_tcp_listener(listener);
        if asks_for_login {
            server.with_auth(AuthMechanism::Plain).with_auth(AuthMechanism::Login);
        }
        std::thread::Builder::new()
            .name(format!("test-smtp-{port}"))
            .spawn(move || {
                let _ = server.serve();
            })
            .expect("spawn the test SMTP server");
        Self { port, script }
    }

    /// The `[mail]` configuration that sends to this server.
    pub fn config(&self) -> String {
        smtp_config(self.port)
    }

    /// Answers the end of the next messages' `DATA` with `codes`, in order (then 250).
    pub fn answer_data_with(&self, codes: &[u16]) {
        self.script().data_answers.extend(codes);
    }

    /// Refuses every recipient with `code` from now on.
    pub fn refuse_recipients_with(&self, code: u16) {
        self.script().rcpt_answer = Some(code);
    }

    /// Answers `RCPT TO` of every recipient whose address contains `recipient` (`None`:
    /// everyone) with `code` and `text`, as a real relay words it, from now on.
    pub fn refuse_recipients_saying(&self, recipient: Option<&str>, code: u16, text: &str) {
        self.script().rcpt_replies.push((recipient.map(str::to_owned), code, text.to_owned()));
    }

    /// Answers the end of every `DATA` with `code` and `text` from now on.
    pub fn refuse_data_saying(&self, code: u16, text: &str) {
        self.script().data_reply = Some((code, text.to_owned()));
    }

    /// Takes every recipient and message again: the relay was fixed.
    pub fn accept_everything(&self) {
        let mut script = self.script();
        script.rcpt_replies.clear();
        script.rcpt_answer = None;
        script.data_reply = None;
        script.mail_answer = None;
    }

    /// How many times a recipient whose address contains `recipient` was given in `RCPT TO`.
    pub fn rcpt_attempts_for(&self, recipient: &str) -> usize {
        self.script().rcpt_attempts.iter().filter(|to| to.contains(recipient)).count()
    }

    /// Refuses every sender with `code` from now on, as a relay refuses an address the login
    /// does not own; `None`: accepts them again.
    pub fn refuse_senders_with(&self, code: Option<u16>) {
        self.script().mail_answer = code;
    }

    /// The names clients gave in `EHLO`, in order.
    pub fn helo_names(&self) -> Vec<String> {
        self.script().helo_names.clone()
    }

    /// Refuses every `EHLO` with `code` from now on, as Postfix refuses a name that is not
    /// fully qualified.
    pub fn refuse_helo_with(&self, code: u16) {
        self.script().helo_answer = Some(code);
    }

    /// The password of each login tried, in order.
    pub fn login_attempts(&self) -> Vec<String> {
        self.script().login_attempts.clone()
    }

    /// How many `AUTH` exchanges gave the login the server asks for.
    pub fn logins(&self) -> usize {
        self.script().logins
    }

    /// How many transactions began (`MAIL FROM`), refused or not.
    pub fn mail_attempts(&self) -> usize {
        self.script().mail_attempts
    }

    /// Every message the server accepted, as raw bytes.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.script().received.clone()
    }

    /// How many messages reached the end of `DATA`, accepted or refused.
    pub fn data_attempts(&self) -> usize {
        self.script().data_attempts
    }

    fn script(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `[mail]` for an SMTP relay on 127.0.0.1:`port` without TLS (allowed for loopback only).
pub fn smtp_config(port: u16) -> String {
    format!(
        "[mail]\ntransport = \"smtp\"\nretry_base = \"30s\"\n\
         [mail.smtp]\nhost = \"127.0.0.1\"\nport = {port}\nsecurity = \"none\"\ntimeout = \"5s\"\n"
    )
}

/// A port on 127.0.0.1 that nothing listens on (connections are refused) until a test starts
/// a server there.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind to learn a free port");
    listener.local_addr().expect("a bound address").port()
}

/// One per connection (mailin clones the handler for each); the script is shared.
#[derive(Debug, Clone)]
struct Recorder {
    script: Arc<Mutex<Script>>,
    message: Vec<u8>,
    recipients: Vec<String>,
    /// mailin stays in its DATA state after a refused end of data (a mailin quirk: RFC 5321
    /// says the transaction ends), so the client's next command would be read as message text
    /// and never answered; lettre would wait for its `QUIT` reply until its timeout.
    refused_data: bool,
}

impl Recorder {
    fn script(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Handler for Recorder {
    fn helo(&mut self, _ip: std::net::IpAddr, domain: &str) -> Response {
        let mut script = self.script();
        script.helo_names.push(domain.to_owned());
        match script.helo_answer {
            Some(code) => Response::custom(
                code,
                format!("5.5.2 <{domain}>: Helo command rejected: need fully-qualified hostname"),
            ),
            None => OK,
        }
    }

    fn auth_plain(&mut self, _authorization_id: &str, authentication_id: &str, password: &str) -> Response {
        self.auth_login(authentication_id, password)
    }

    fn auth_login(&mut self, username: &str, password: &str) -> Response {
        let mut script = self.script();
        script.login_attempts.push(password.to_owned());
        let given = script.login.as_ref().is_some_and(|(user, secret)| user == username && secret == password);
        if given {
            script.logins += 1;
            AUTH_OK
        } else {
            INVALID_CREDENTIALS
        }
    }

    fn mail(&mut self, _ip: std::net::IpAddr, _domain: &str, from: &str) -> Response {
        let mut script = self.script();
        script.mail_attempts += 1;
        match script.mail_answer {
            Some(code) => {
                Response::custom(code, format!("5.7.1 <{from}>: Sender address rejected: not owned by user relay-user"))
            }
            None => OK,
        }
    }

    fn rcpt(&mut self, to: &str) -> Response {
        let mut script = self.script();
        script.rcpt_attempts.push(to.to_owned());
        let scripted = script
            .rcpt_replies
            .iter()
            .find(|(recipient, _, _)| recipient.as_deref().is_none_or(|recipient| to.contains(recipient)));
        if let Some((_, code, text)) = scripted {
            return Response::custom(*code, text.replace("{to}", to));
        }
        match script.rcpt_answer {
            // Real servers quote the recipient; signupd must not store or forward it.
            Some(code) => Response::custom(code, format!("5.1.1 <{to}>: Recipient address rejected: no such user")),
            None => OK,
        }
    }

    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.message.clear();
        self.recipients = to.to_vec();
        self.refused_data = false;
        OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.refused_data {
            // The client's next command after a refused message (see `refused_data`): answer it
            // with an error reply (mailin turns this into 554) so the client is not left waiting.
            return Err(std::io::Error::other("command after a refused message"));
        }
        self.message.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let mut script = self.script.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        script.data_attempts += 1;
        if let Some((code, text)) = script.data_reply.clone() {
            self.refused_data = true;
            return Response::custom(code, text);
        }
        let code = script.data_answers.pop_front().unwrap_or(250);
        if (200..300).contains(&code) {
            script.received.push(std::mem::take(&mut self.message));
            return OK;
        }
        self.refused_data = true;
        let to = self.recipients.join(", ");
        Response::custom(code, format!("4.2.0 mailbox of {to} is busy, try again later"))
    }
}
