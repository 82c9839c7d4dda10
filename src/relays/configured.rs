//! The configured relays with their credentials, read once at start ([`Relays::load`]), and
//! the cache of SNS signing certificates.
//!
//! **How a certificate is fetched.** Only from a URL `signature::sns_certificate_url` approved
//! (`https://sns.<region>.amazonaws.com/….pem`), over HTTPS with the system's roots and no
//! redirects — the TLS connection to Amazon's host is what makes the certificate Amazon's —
//! at most 16 KiB, one fetch at a time, and only for a message of a configured topic (the caller
//! checks the topic first); a certificate is kept for the life of the process (SNS changes them
//! rarely, and a new one comes with a new URL) only once it verified a message
//! ([`SnsCertificates::keep`]), at most [`MAX_CERTIFICATES`] of them; a failed fetch or a
//! certificate that verified nothing is not kept. So a flood of forged messages naming made-up
//! certificate URLs on Amazon's hosts costs one outbound request at a time and cannot fill the
//! cache; with a topic nobody configured, not even that. Tests never fetch: they put their own
//! certificate into the cache first ([`SnsCertificates::preload`]), and read how many fetches
//! were tried ([`SnsCertificates::fetches`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use url::Url;

use super::signature::{MailgunKey, PostmarkCredentials, ResendKey, SendgridKey};
use crate::config::{Config, RelayConfig, RelayKind};

/// A relay's credential, parsed.
#[derive(Debug)]
pub enum Credential {
    /// SES: SNS signs with Amazon's certificate.
    None,
    Resend(ResendKey),
    Postmark(PostmarkCredentials),
    Sendgrid(SendgridKey),
    Mailgun(MailgunKey),
}

/// A configured relay with its credential.
#[derive(Debug)]
pub struct Relay {
    pub config: RelayConfig,
    pub credential: Credential,
}

/// Every configured relay, and the SNS certificates fetched so far.
#[derive(Debug, Default)]
pub struct Relays {
    relays: Vec<Arc<Relay>>,
    pub certificates: SnsCertificates,
}

impl Relays {
    /// Reads every relay's credential; an error names the key (`relays[0].credential_file`).
    pub fn load(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let relays = config
            .relays
            .iter()
            .enumerate()
            .map(|(i, relay)| {
                let credential =
                    read_credential(relay, credentials_dir).with_context(|| format!("relays[{i}].credential_file"))?;
                Ok(Arc::new(Relay { config: relay.clone(), credential }))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { relays, certificates: SnsCertificates::default() })
    }

    /// The relay at `/api/relay/<name>`.
    pub fn get(&self, name: &str) -> Option<&Arc<Relay>> {
        self.relays.iter().find(|relay| relay.config.name == name)
    }

    pub fn all(&self) -> &[Arc<Relay>] {
        &self.relays
    }
}

fn read_credential(relay: &RelayConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Credential> {
    let Some(form) = relay.kind.credential_form() else {
        return Ok(Credential::None);
    };
    let name = &relay.name;
    let path: PathBuf = match &relay.credential_file {
        Some(path) => path.clone(),
        None => {
            let credential = format!("relay_{name}");
            let found = credentials_dir
                .map(|dir| crate::config::secrets::find_credential(dir, &credential))
                .transpose()?
                .flatten();
            found.ok_or_else(|| {
                anyhow::anyhow!(
                    "not set, and {}: set it to a file holding {form}, or put that file at relay/{name} in the \
                     credentials directory",
                    crate::config::secrets::missing_credential(credentials_dir, &credential),
                )
            })?
        }
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = text.trim_end_matches(['\r', '\n']);
    // The parsers' errors name the kind and what is wrong, never the text.
    let parsed = match relay.kind {
        RelayKind::Ses => Ok(Credential::None),
        RelayKind::Resend => ResendKey::parse(text).map(Credential::Resend),
        RelayKind::Postmark => PostmarkCredentials::parse(text).map(Credential::Postmark),
        RelayKind::Sendgrid => SendgridKey::parse(text).map(Credential::Sendgrid),
        RelayKind::Mailgun => MailgunKey::new(text).map(Credential::Mailgun),
    };
    parsed.map_err(|why| anyhow::anyhow!("{} does not hold {form}: {why}", path.display()))
}

/// The most certificates kept.
pub const MAX_CERTIFICATES: usize = 32;
/// The largest certificate fetched (Amazon's are about 2 KiB).
const MAX_CERTIFICATE_BYTES: usize = 16 * 1024;
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// SNS signing certificates by URL.
#[derive(Debug, Default)]
pub struct SnsCertificates {
    cached: Mutex<HashMap<Url, Arc<Vec<u8>>>>,
    /// One fetch at a time.
    fetching: tokio::sync::Mutex<()>,
    /// Fetches tried since start.
    fetches: AtomicU64,
}

impl SnsCertificates {
    /// Puts `certificate` (PEM or DER) in the cache for `url`, as if it had been fetched: what
    /// tests use, and never a fetch.
    pub fn preload(&self, url: Url, certificate: Vec<u8>) {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner).insert(url, Arc::new(certificate));
    }

    /// How many fetches were tried since start, whatever they came to.
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// How many certificates are cached.
    pub fn len(&self) -> usize {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no certificate is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn cached(&self, url: &Url) -> Option<Arc<Vec<u8>>> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner).get(url).cloned()
    }

    /// The certificate at `url` (approved by `signature::sns_certificate_url`), from the cache
    /// or fetched; a fetched one is not cached until it verified a message ([`Self::keep`]).
    /// The error says why in words without the URL.
    pub async fn get(&self, url: &Url, client: &reqwest::Client) -> anyhow::Result<Arc<Vec<u8>>> {
        if let Some(certificate) = self.cached(url) {
            return Ok(certificate);
        }
        let _one_at_a_time = self.fetching.lock().await;
        if let Some(certificate) = self.cached(url) {
            return Ok(certificate);
        }
        self.fetches.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(fetch(url, client).await?))
    }

    /// Keeps `certificate`, fetched from `url`, once it verified a message: while fewer than
    /// [`MAX_CERTIFICATES`] are kept.
    pub fn keep(&self, url: Url, certificate: Arc<Vec<u8>>) {
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.len() < MAX_CERTIFICATES {
            cached.entry(url).or_insert(certificate);
        }
    }
}

async fn fetch(url: &Url, client: &reqwest::Client) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(url.scheme() == "https", "the certificate URL is not https");
    let mut response = client
        .get(url.clone())
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|error| anyhow::anyhow!("cannot fetch the SNS signing certificate: {}", error.without_url()))?;
    anyhow::ensure!(
        response.status().is_success(),
        "fetching the SNS signing certificate answered {}",
        response.status().as_u16()
    );
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| anyhow::anyhow!("cannot read the SNS signing certificate: {}", error.without_url()))?
    {
        anyhow::ensure!(body.len() + chunk.len() <= MAX_CERTIFICATE_BYTES, "the SNS signing certificate is too large");
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
