//! The relay's certificate, as operators' relays present it: from a private CA (trusted through
//! `mail.smtp.ca_file` or the system's store, `SSL_CERT_FILE`), self-signed (trusted by its
//! pin), and the ways it goes wrong — an unknown issuer, another name, an expired certificate, a
//! pin that no longer matches, a relay without STARTTLS — each refused in its own words, with
//! the certificate's fingerprint, through the real `send-test-mail` against a real STARTTLS
//! server on loopback. (A real Postfix with SASL and implicit TLS: tests/postfix/relay.py.)
//! What the operator fixes — `ca_file`, the password file — is read again at the next try of
//! the transport `serve` keeps; and the common mistakes (a CA certificate as the relay's own, `tls` on a
//! STARTTLS port, `starttls` on a port of implicit TLS, a HELO name the relay refuses) are each
//! named in words with their fix.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

use signupd::outbound::mail::{Delivered, SendError, Transport};

use crate::helpers::{signupd, write_config};
use crate::smtp_server::SmtpServer;

/// A CA of the test's own, and certificates it or nobody signed, written as PEM into `dir`.
pub struct Pki {
    dir: tempfile::TempDir,
    ca: CertifiedIssuer<'static, KeyPair>,
}

/// A relay's certificate on disk, with its SHA-256 as openssl prints it.
pub struct Leaf {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub fingerprint: String,
}

impl Pki {
    pub fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "Homelab Test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        Self { dir, ca }
    }

    fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A certificate for `names`, signed by the CA (or by itself), valid now unless `expired`.
    pub fn leaf(&self, file: &str, names: &[&str], signed_by_ca: bool, expired: bool) -> Leaf {
        self.certificate(file, names, |params, key| {
            if expired {
                params.not_before = rcgen::date_time_ymd(2020, 1, 1);
                params.not_after = rcgen::date_time_ymd(2021, 1, 1);
            }
            if signed_by_ca { params.signed_by(key, &self.ca).unwrap() } else { params.self_signed(key).unwrap() }
        })
    }

    /// A self-signed certificate for `names` that says it is a CA (`CA:TRUE`), as a default
    /// `openssl req -x509` makes one.
    fn ca_as_leaf(&self, file: &str, names: &[&str]) -> Leaf {
        self.certificate(file, names, |params, key| {
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.self_signed(key).unwrap()
        })
    }

    /// A certificate for `names` as `make` finishes and signs it, written into the directory.
    fn certificate(
        &self,
        file: &str,
        names: &[&str],
        make: impl FnOnce(&mut CertificateParams, &KeyPair) -> rcgen::Certificate,
    ) -> Leaf {
        let mut params =
            CertificateParams::new(names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "relay.homelab.test");
        let key = KeyPair::generate().unwrap();
        let cert = make(&mut params, &key);
        let digest = ring::digest::digest(&ring::digest::SHA256, cert.der());
        let fingerprint = digest.as_ref().iter().map(|byte| format!("{byte:02X}")).collect::<Vec<_>>().join(":");
        let (cert_path, key_path) =
            (self.dir.path().join(format!("{file}.pem")), self.dir.path().join(format!("{file}.key")));
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        Leaf { cert: cert_path, key: key_path, fingerprint }
    }

    /// A STARTTLS relay on loopback presenting `leaf`.
    fn relay(&self, leaf: &Leaf) -> SmtpServer {
        SmtpServer::start_tls(&leaf.cert, &leaf.key, &self.empty_chain())
    }

    /// [`Self::relay`] that takes mail only after `AUTH` with `username` and `password`.
    pub fn relay_with_login(&self, leaf: &Leaf, username: &str, password: &str) -> SmtpServer {
        SmtpServer::start_tls_with_login(&leaf.cert, &leaf.key, &self.empty_chain(), Some((username, password)))
    }

    fn empty_chain(&self) -> PathBuf {
        let chain = self.dir.path().join("empty-chain.pem");
        std::fs::write(&chain, "").unwrap();
        chain
    }
}

/// `[mail]` for a STARTTLS relay on 127.0.0.1:`port`, with `extra` lines under `[mail.smtp]`.
fn starttls_config(port: u16, extra: &str) -> String {
    format!(
        "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"127.0.0.1\"\nport = {port}\nsecurity = \"starttls\"\ntimeout = \"5s\"\n{extra}\n"
    )
}

/// Runs `send-test-mail` with `config`, and `env` set; the exit code and what it printed.
fn send_test_mail(config: &str, env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), config);
    let mut command = signupd();
    command.args(["send-test-mail", "--to", "ops@example.com", "--config"]).arg(&path);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), printed)
}

fn path_line(key: &str, path: &Path) -> String {
    format!("{key} = {:?}", path.display().to_string())
}

#[test]
fn a_private_ca_is_trusted_through_ca_file_or_the_system_store_and_refused_without_either() {
    // Arrange: a relay whose certificate the test's own CA issued for 127.0.0.1
    let pki = Pki::new();
    let leaf = pki.leaf("relay", &["127.0.0.1"], true, false);
    let relay = pki.relay(&leaf);

    // Act + Assert: trusted through ca_file
    let (code, printed) = send_test_mail(&starttls_config(relay.port, &path_line("ca_file", &pki.ca_file())), &[]);
    assert_eq!(code, Some(0), "{printed}");
    assert!(printed.contains("accepted"), "{printed}");

    // Act + Assert: trusted through the system's store, as SSL_CERT_FILE names it
    let (code, printed) = send_test_mail(&starttls_config(relay.port, ""), &[("SSL_CERT_FILE", &pki.ca_file())]);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(relay.received().len(), 2, "both mails went through the relay");

    // Act + Assert: neither, so the issuer is unknown; the error names the certificate
    let (code, printed) = send_test_mail(&starttls_config(relay.port, ""), &[]);
    assert_eq!(code, Some(1), "{printed}");
    let expected = format!("TLS with 127.0.0.1:{} failed: the certificate's issuer is not trusted", relay.port);
    assert!(printed.contains(&expected), "{printed}");
    assert!(printed.contains(&format!("SHA-256 {}", leaf.fingerprint)), "{printed}");
    assert!(printed.contains("Homelab Test CA") && printed.contains("relay.homelab.test"), "{printed}");
    assert!(printed.contains(&format!("mail.smtp.certificate_sha256 = \"{}\"", leaf.fingerprint)), "{printed}");
    assert!(!printed.contains("connection refused"), "a handshake is not a closed port: {printed}");
    assert_eq!(relay.received().len(), 2, "nothing was sent to an untrusted relay");
}

#[test]
fn a_self_signed_relay_is_trusted_by_its_pin_and_refused_by_any_other() {
    // Arrange
    let pki = Pki::new();
    let leaf = pki.leaf("self-signed", &["relay.homelab.test"], false, false);
    let relay = pki.relay(&leaf);

    // Act + Assert: pinned as openssl prints it, whatever its name
    let pinned = format!("certificate_sha256 = \"sha256 Fingerprint={}\"", leaf.fingerprint);
    let (code, printed) = send_test_mail(&starttls_config(relay.port, &pinned), &[]);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(relay.received().len(), 1);

    // Act + Assert: a pin of another certificate
    let other = pki.leaf("other", &["relay.homelab.test"], false, false);
    let (code, printed) =
        send_test_mail(&starttls_config(relay.port, &format!("certificate_sha256 = \"{}\"", other.fingerprint)), &[]);
    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("failed: the certificate does not match mail.smtp.certificate_sha256"), "{printed}");
    assert!(printed.contains(&format!("SHA-256 {}", leaf.fingerprint)), "the certificate shown: {printed}");
    assert_eq!(relay.received().len(), 1, "nothing sent past a wrong pin");
}

#[test]
fn a_certificate_for_another_name_or_out_of_date_is_refused_in_its_own_words() {
    let pki = Pki::new();
    let ca_file = path_line("ca_file", &pki.ca_file());
    let cases = [
        ("wrong-name", &["localhost"][..], false, "failed: the certificate is not valid for the name 127.0.0.1"),
        ("expired", &["127.0.0.1"][..], true, "failed: the certificate has expired"),
    ];
    for (name, names, expired, expected) in cases {
        // Arrange
        let leaf = pki.leaf(name, names, true, expired);
        let relay = pki.relay(&leaf);

        // Act
        let (code, printed) = send_test_mail(&starttls_config(relay.port, &ca_file), &[]);

        // Assert
        assert_eq!(code, Some(1), "{name}: {printed}");
        assert!(printed.contains(expected), "{name}: {printed}");
        assert!(printed.contains(&leaf.fingerprint), "{name}: {printed}");
        assert!(relay.received().is_empty(), "{name}");
    }
}

#[test]
fn a_relay_without_starttls_is_named_as_such() {
    let relay = SmtpServer::start();

    let (code, printed) = send_test_mail(&starttls_config(relay.port, ""), &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("failed: the relay does not offer STARTTLS"), "{printed}");
    assert!(relay.received().is_empty());
}

#[test]
fn a_relay_name_that_does_not_resolve_is_named_as_such() {
    let config = starttls_config(587, "").replace("host = \"127.0.0.1\"", "host = \"relay.signupd-test.invalid\"")
        + "[[lists]]\nid = \"news\"\nfrom = \"news@bakery.test\"\n";

    let (code, printed) = send_test_mail(&config.replace("timeout = \"5s\"", "timeout = \"2s\""), &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("the name relay.signupd-test.invalid (mail.smtp.host) does not resolve"), "{printed}");
}

#[test]
fn a_ca_file_that_is_not_pem_stops_the_start_with_the_key_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("not-a-ca.pem");
    std::fs::write(&bogus, "hello").unwrap();

    let (code, printed) = send_test_mail(&starttls_config(2525, &path_line("ca_file", &bogus)), &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("mail.smtp.ca_file") && printed.contains("not-a-ca.pem"), "{printed}");
}

#[test]
fn a_ca_certificate_used_as_the_relays_own_is_named_as_such_with_its_fix() {
    // Regression: a default `openssl req -x509` certificate (CA:TRUE), trusted through ca_file,
    // was refused as `Other(OtherError(CaUsedAsEndEntity))`.
    let pki = Pki::new();
    let leaf = pki.ca_as_leaf("openssl-default", &["127.0.0.1"]);
    let relay = pki.relay(&leaf);

    let (code, printed) = send_test_mail(&starttls_config(relay.port, &path_line("ca_file", &leaf.cert)), &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("the certificate is a CA certificate used as the server's own"), "{printed}");
    assert!(printed.contains("Pin it, or issue the relay a server certificate"), "{printed}");
    assert!(printed.contains(&format!("mail.smtp.certificate_sha256 = \"{}\"", leaf.fingerprint)), "{printed}");
    assert!(
        !printed.contains("CaUsedAsEndEntity") && !printed.contains("OtherError"),
        "words, not a Rust value: {printed}"
    );
    assert!(relay.received().is_empty());
}

#[test]
fn implicit_tls_against_a_starttls_port_says_to_use_starttls() {
    // Regression: `security = "tls"` on a port that speaks SMTP first said "received corrupt
    // message of type InvalidContentType" with no hint.
    let relay = SmtpServer::start();
    let config = starttls_config(relay.port, "").replace("security = \"starttls\"", "security = \"tls\"");

    let (code, printed) = send_test_mail(&config, &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("the relay answered in plain text, not TLS"), "{printed}");
    assert!(printed.contains("set security = \"starttls\""), "{printed}");
    assert!(!printed.contains("InvalidContentType") && !printed.contains("connection refused"), "{printed}");
}

#[test]
fn starttls_against_a_port_of_implicit_tls_says_to_use_tls() {
    // A port of implicit TLS waits, silent, for the client's handshake: this one accepts and
    // waits as such a relay does, whatever its number.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let config = starttls_config(port, "").replace("timeout = \"5s\"", "timeout = \"2s\"");

    let (code, printed) = send_test_mail(&config, &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("the relay never greeted signupd"), "{printed}");
    assert!(printed.contains("wants security = \"tls\""), "{printed}");
}

#[test]
fn a_helo_name_the_relay_refuses_is_named_as_the_helo_name_not_the_login() {
    // Regression: Postfix refusing the HELO name was explained as a login problem.
    let relay = SmtpServer::start();
    relay.refuse_helo_with(504);
    let config = format!("{}helo_name = \"mta\"\n", relay.config());

    let (code, printed) = send_test_mail(&config, &[]);

    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("refused signupd's EHLO name: SMTP 504"), "{printed}");
    assert!(printed.contains("signupd said EHLO mta; set mail.smtp.helo_name"), "{printed}");
    assert!(!printed.contains("login") && !printed.contains("username"), "not a login problem: {printed}");
}

#[tokio::test]
async fn a_ca_file_and_a_password_fixed_while_the_transport_runs_are_read_at_the_next_try() {
    // Regression: a fixed password file or CA was not read until `serve` restarted. The
    // transport `serve` builds once, driven directly: the worker's hold and its gauge are the
    // process's and belong to tests/api/relay_refusals.rs.
    // Arrange: a relay with the test CA's certificate that takes one login; signupd trusts
    // another CA and has the wrong password
    let pki = Pki::new();
    let leaf = pki.leaf("relay", &["127.0.0.1"], true, false);
    let chain = pki.dir.path().join("empty-chain.pem");
    std::fs::write(&chain, "").unwrap();
    let relay = SmtpServer::start_tls_with_login(&leaf.cert, &leaf.key, &chain, Some(("relay-user", "right")));
    let ca_file = pki.dir.path().join("trusted.pem");
    std::fs::copy(Pki::new().ca_file(), &ca_file).unwrap();
    let password_file = pki.dir.path().join("smtp-password");
    std::fs::write(&password_file, "wrong\n").unwrap();
    let smtp = starttls_config(
        relay.port,
        &format!(
            "{}\nusername = \"relay-user\"\n{}\n",
            path_line("ca_file", &ca_file),
            path_line("password_file", &password_file)
        ),
    );
    let config = signupd::config::Config::from_toml(&format!("{smtp}[[lists]]\nid = \"news\"\n")).unwrap();
    let transport = Transport::from_config(&config, None).unwrap();
    let send = || {
        let message = lettre::Message::builder()
            .from("news@bakery.test".parse().unwrap())
            .to("ann@example.com".parse().unwrap())
            .subject("a fix without a restart")
            .body(String::from("Hello.\r\n"))
            .unwrap();
        transport.send(message)
    };
    let refused = |sent: Result<Delivered, SendError>, expected: &str| {
        let detail = sent.expect_err(expected).detail;
        assert!(detail.contains(expected), "{expected}: {detail}");
    };

    // Act + Assert: the certificate is refused (ca_file holds another CA of the same name)
    refused(send().await, "the certificate's signature does not verify against its issuer");

    // Act + Assert: the operator puts the right CA in ca_file; at the next try the relay is
    // trusted, and the login refused
    std::fs::copy(pki.ca_file(), &ca_file).unwrap();
    refused(send().await, "refused the login (AUTH)");
    assert_eq!(relay.login_attempts(), ["wrong"]);

    // Act + Assert: the operator fixes the password file; the mail goes at the next try
    std::fs::write(&password_file, "right\n").unwrap();
    assert!(matches!(send().await, Ok(Delivered::Smtp { code: 250 })));
    assert_eq!(relay.login_attempts(), ["wrong", "right"]);
    assert_eq!(relay.received().len(), 1);

    // Act + Assert: while the relay accepts, its connection is kept and nothing is read again: a
    // file broken meanwhile is not noticed
    std::fs::write(&password_file, "").unwrap();
    assert!(send().await.is_ok());
    assert_eq!(relay.received().len(), 2);
}
