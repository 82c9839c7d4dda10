//! Whether signupd believes the relay is the relay: its certificate, checked against the
//! system's trust store, `mail.smtp.ca_file`, or the operator's pin (`mail.smtp.certificate_sha256`).
//!
//! Where the roots come from: the system's store as `rustls-native-certs` reads it (honouring
//! `SSL_CERT_FILE` and `SSL_CERT_DIR`, else Debian's `/etc/ssl/certs` that
//! `update-ca-certificates` keeps), Mozilla's roots compiled in only where the system has none
//! (a scratch container), and every certificate of `ca_file` besides. There is no switch that
//! turns the check off: a pin is how a self-signed relay is trusted.
//!
//! Why the check runs after the handshake rather than inside it: lettre takes root
//! certificates but no verifier of our own, and a failed handshake would throw away the one
//! thing the operator needs to fix it — which certificate the relay showed. So the handshake
//! runs with lettre's "accept any certificate" verifier, which still checks the handshake's
//! signature against the certificate shown (the relay holds its key), and [`RelayTrust::check`]
//! then judges the chain before anything but `EHLO` was said: no `AUTH`, no `MAIL FROM` goes
//! to a relay that failed it. The refusal names the cause, the host, and the certificate's
//! subject, issuer and SHA-256 fingerprint (as `openssl x509 -fingerprint -sha256` prints it),
//! with the key that would fix it.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use rustls::CertificateError;
use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;

use crate::config::SmtpConfig;

/// What the relay's certificate is checked against. Built once at start.
#[derive(Clone)]
pub struct RelayTrust {
    roots: Arc<RootCertStore>,
    pin: Option<[u8; 32]>,
    provider: Arc<CryptoProvider>,
    host: String,
    port: u16,
}

impl std::fmt::Debug for RelayTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayTrust").field("roots", &self.roots.len()).field("pinned", &self.pin.is_some()).finish()
    }
}

/// Where the roots came from, for the start-up log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    System,
    /// The system had none: Mozilla's, compiled in.
    BuiltIn,
}

impl RelayTrust {
    /// The system's roots (or the built-in ones where it has none) and `ca_file`'s.
    pub fn load(smtp: &SmtpConfig) -> anyhow::Result<(Self, RootSource)> {
        let mut roots = RootCertStore::empty();
        let native = rustls_native_certs::load_native_certs();
        let (added, _ignored) = roots.add_parsable_certificates(native.certs);
        let source = if added == 0 {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            RootSource::BuiltIn
        } else {
            RootSource::System
        };
        if let Some(path) = &smtp.ca_file {
            for certificate in ca_file(path)? {
                roots.add(certificate).with_context(|| {
                    format!("mail.smtp.ca_file: {} holds a certificate that is not a usable CA", path.display())
                })?;
            }
        }
        let provider = CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
        let trust = Self {
            roots: Arc::new(roots),
            pin: smtp.certificate_sha256,
            provider,
            host: smtp.host.clone(),
            port: smtp.port,
        };
        Ok((trust, source))
    }

    /// Judges the chain the relay showed (its own certificate first). `Err` is the whole text
    /// for the operator.
    pub fn check(&self, chain: &[Vec<u8>]) -> Result<(), String> {
        let Some((shown, intermediates)) = chain.split_first() else {
            return Err(self.refusal("the relay showed no certificate", None));
        };
        let seen = Shown::read(shown);
        if let Some(pin) = self.pin {
            if seen.sha256 == pin {
                return Ok(());
            }
            return Err(self.refusal(
                "the certificate does not match mail.smtp.certificate_sha256",
                Some((&seen, "If the relay's certificate was replaced on purpose, set mail.smtp.certificate_sha256")),
            ));
        }
        let der = CertificateDer::from(shown.as_slice());
        let parsed = ParsedCertificate::try_from(&der).map_err(|error| {
            self.refusal(&format!("the relay's certificate cannot be read ({error})"), Some((&seen, PIN_HINT)))
        })?;
        let intermediates: Vec<CertificateDer<'_>> =
            intermediates.iter().map(|der| CertificateDer::from(der.as_slice())).collect();
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &parsed,
            &self.roots,
            &intermediates,
            UnixTime::now(),
            self.provider.signature_verification_algorithms.all,
        )
        .map_err(|error| self.refusal(&why(&error, &self.host), Some((&seen, hint(&error)))))?;
        let name = ServerName::try_from(self.host.as_str())
            .map_err(|_| self.refusal("mail.smtp.host is not a name a certificate can be checked against", None))?;
        rustls::client::verify_server_name(&parsed, &name)
            .map_err(|error| self.refusal(&why(&error, &self.host), Some((&seen, hint(&error)))))
    }

    fn refusal(&self, why: &str, seen: Option<(&Shown, &str)>) -> String {
        let (host, port) = (&self.host, self.port);
        match seen {
            None => format!("TLS with {host}:{port} failed: {why}"),
            Some((seen, hint)) => {
                let fingerprint = &seen.fingerprint;
                let shown = match (&seen.subject, &seen.issuer) {
                    (Some(subject), Some(issuer)) => format!("subject \"{subject}\", issuer \"{issuer}\", "),
                    _ => String::new(),
                };
                format!(
                    "TLS with {host}:{port} failed: {why}; the relay showed {shown}SHA-256 {fingerprint}. {hint} = \"{fingerprint}\""
                )
            }
        }
    }
}

const PIN_HINT: &str = "If you trust this certificate, pin it with mail.smtp.certificate_sha256";

/// The cause of a failed check, in words: never a Rust value, which tells the operator nothing.
fn why(error: &rustls::Error, host: &str) -> String {
    match error {
        rustls::Error::InvalidCertificate(certificate) => match certificate {
            CertificateError::UnknownIssuer => {
                "the certificate's issuer is not trusted (not in the system's trust store or mail.smtp.ca_file)".into()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!("the certificate is not valid for the name {host}")
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => "the certificate has expired".into(),
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the certificate is not valid yet (is this machine's clock right?)".into()
            }
            CertificateError::Revoked => "the certificate was revoked".into(),
            CertificateError::BadEncoding => "the certificate cannot be read (it is not valid DER)".into(),
            CertificateError::BadSignature => "the certificate's signature does not verify against its issuer".into(),
            CertificateError::UnsupportedSignatureAlgorithmContext { .. }
            | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
                "the certificate is signed with an algorithm signupd does not accept (use RSA with SHA-256 or \
                 better, ECDSA or Ed25519)"
                    .into()
            }
            CertificateError::UnhandledCriticalExtension => {
                "the certificate has a critical extension signupd cannot check".into()
            }
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                "the certificate is not for a TLS server (its extended key usage lacks serverAuth)".into()
            }
            CertificateError::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
                Some(webpki::Error::CaUsedAsEndEntity) => {
                    "the certificate is a CA certificate used as the server's own (CA:TRUE, as a default \
                     `openssl req -x509` makes it)"
                        .into()
                }
                Some(webpki::Error::EndEntityUsedAsCa) => {
                    "the chain has a server certificate where a CA certificate belongs".into()
                }
                Some(webpki::Error::PathLenConstraintViolated | webpki::Error::MaximumPathDepthExceeded) => {
                    "the chain is longer than its CA allows".into()
                }
                Some(webpki::Error::NameConstraintViolation) => {
                    format!("the certificate's CA may not issue certificates for the name {host}")
                }
                _ => "the certificate cannot be used as a TLS server's certificate".into(),
            },
            _ => "the certificate cannot be used as a TLS server's certificate".into(),
        },
        _ => "the certificate could not be checked".into(),
    }
}

/// What would fix it.
fn hint(error: &rustls::Error) -> &'static str {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "Put the relay's CA certificate in mail.smtp.ca_file, or pin this certificate with mail.smtp.certificate_sha256"
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => {
            "Set mail.smtp.host to a name the certificate covers, or pin this certificate with mail.smtp.certificate_sha256"
        }
        rustls::Error::InvalidCertificate(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => {
            "Renew the relay's certificate; to accept this one meanwhile, pin it with mail.smtp.certificate_sha256"
        }
        rustls::Error::InvalidCertificate(CertificateError::Other(other))
            if matches!(other.0.downcast_ref::<webpki::Error>(), Some(webpki::Error::CaUsedAsEndEntity)) =>
        {
            "Pin it, or issue the relay a server certificate (CA:FALSE) from a CA in mail.smtp.ca_file; to pin it, set \
             mail.smtp.certificate_sha256"
        }
        _ => PIN_HINT,
    }
}

/// The certificate a relay showed, as the operator would compare it.
#[derive(Debug)]
pub struct Shown {
    pub sha256: [u8; 32],
    /// `AB:CD:…`, as `openssl x509 -noout -fingerprint -sha256` prints it.
    pub fingerprint: String,
    pub subject: Option<String>,
    pub issuer: Option<String>,
}

impl Shown {
    pub fn read(der: &[u8]) -> Self {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(digest.as_ref());
        let fingerprint = sha256.iter().map(|byte| format!("{byte:02X}")).collect::<Vec<_>>().join(":");
        let parsed = x509_parser::parse_x509_certificate(der).ok().map(|(_, certificate)| certificate);
        Self {
            sha256,
            fingerprint,
            subject: parsed.as_ref().map(|certificate| certificate.subject().to_string()),
            issuer: parsed.as_ref().map(|certificate| certificate.issuer().to_string()),
        }
    }
}

/// Every certificate of a PEM file; an error names the key and the file.
fn ca_file(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let pem = std::fs::read(path).with_context(|| format!("mail.smtp.ca_file: cannot read {}", path.display()))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| anyhow::anyhow!("mail.smtp.ca_file: {} is not PEM ({error})", path.display()))?;
    if certificates.is_empty() {
        anyhow::bail!("mail.smtp.ca_file: {} holds no certificate (-----BEGIN CERTIFICATE-----)", path.display());
    }
    Ok(certificates)
}
