//! Whether a webhook request really comes from the relay that carries signupd's mail.
//!
//! Each relay proves its requests its own way, and each kind has one function here:
//!
//! - **Resend** ([`verify_resend`]) signs through Svix, which is Standard Webhooks: an
//!   HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the `whsec_` secret. The signature header
//!   may list several signatures, any one of which is enough, so that a secret can be rotated
//!   without a gap. The window is Svix's own: five minutes either way of now.
//! - **Postmark** ([`verify_postmark`]) signs nothing: its webhook URL carries HTTP Basic
//!   credentials the operator chose, and they must match exactly. Nothing in the request says
//!   when it was sent, so there is no window, and the proof is only as good as HTTPS.
//! - **SendGrid** ([`verify_sendgrid`]) signs `timestamp ‖ body` with ECDSA P-256 and SHA-256, and
//!   shows the verification key as a base64 SubjectPublicKeyInfo. The window is a day back and five
//!   minutes ahead: SendGrid retries a failed delivery for about a day, and a retry may carry the
//!   time the event was first signed, so a shorter window would refuse SendGrid's own retries.
//! - **Mailgun** ([`verify_mailgun`]) puts its signature inside the JSON body: an HMAC-SHA256 of
//!   `timestamp ‖ token` keyed with the signing key, as lowercase hex. The signature covers
//!   neither the event nor anything else of the body; a recorded request could be replayed as it
//!   is, so the token is handed back and the caller refuses one it has already seen. Fifteen
//!   minutes either way absorb clock skew and Mailgun's queueing, and bound how long the caller
//!   has to remember tokens ([`MAILGUN_TOLERANCE`]).
//! - **Amazon SES** ([`verify_sns`]) reports through SNS, which signs a canonical string of the
//!   message's fields with RSA (SHA-1 for `SignatureVersion` 1, SHA-256 for 2) under a certificate
//!   it publishes at the message's `SigningCertURL`. The window is an hour back and five minutes
//!   ahead: an SNS retry keeps the message's `Timestamp`, and a delivery policy can spread its
//!   retries over at most an hour.
//!
//! The raw body bytes are what is verified, before anything of them is parsed or believed; the
//! one exception is Mailgun, whose signature is inside the body, so its `signature` object is read
//! first (and only it) to find what to check. SNS also needs its JSON envelope read to rebuild
//! the string Amazon signed, but nothing of it is returned before the signature verified.
//!
//! This module does no I/O and reads no clock: the caller passes `now` in Unix seconds, and for SNS
//! it fetches the signing certificate itself. It asks [`sns_certificate_url`] first, which
//! refuses a topic not configured before anything else, and approves only
//! `https://sns.<region>.amazonaws.com/….pem` (or `.amazonaws.com.cn`), without a port or user
//! info; it fetches the certificate from that URL alone, over HTTPS — the TLS connection to
//! Amazon's host is what makes the certificate Amazon's — hands it to [`verify_sns`], and caches
//! it only once it verified.
//!
//! The signature is checked before the window, the topic and the subscribe URL, so a [`Refusal`]
//! other than a missing or malformed part, [`Refusal::BadSignature`] or
//! [`Refusal::BadCredentials`] names a request the relay really sent and that is turned away all
//! the same. A [`Refusal`] says what was wrong in words fit for a log: it never holds a secret, a
//! header value, an address or a URL, and the credential types print `[redacted]` as Debug.

use std::borrow::Cow;
use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::hmac;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1, RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256,
    UnparsedPublicKey, VerificationAlgorithm,
};
use serde::Deserialize;
use url::{Host, Url};
use x509_parser::oid_registry::{OID_EC_P256, OID_KEY_TYPE_EC_PUBLIC_KEY, OID_PKCS1_RSAENCRYPTION};
use x509_parser::pem::parse_x509_pem;
use x509_parser::prelude::FromDer;
use x509_parser::x509::SubjectPublicKeyInfo;

use crate::clock::UnixSeconds;

/// Why a relay's request was refused, without any secret, header value, address or URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A header the scheme needs is absent (its lowercase name).
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    /// A header, field or the body is not what the scheme says it is (its name).
    #[error("{0} is malformed")]
    Malformed(&'static str),
    /// The signed timestamp is older than the kind's window.
    #[error("the signed timestamp is too old")]
    Stale,
    /// The signed timestamp is further ahead of now than the kind's window allows.
    #[error("the signed timestamp is too far in the future")]
    FromTheFuture,
    /// No signature verifies over the request.
    #[error("the signature does not verify")]
    BadSignature,
    /// The Basic credentials are not the configured ones.
    #[error("the credentials do not match")]
    BadCredentials,
    /// The SNS message is from a topic that is not configured.
    #[error("the SNS topic is not one of the configured topics")]
    UnknownTopic,
    /// The SNS `SigningCertURL` is not an https `.pem` on an SNS host.
    #[error("the SNS signing certificate URL is not an https .pem on an SNS host")]
    BadCertificateUrl,
    /// The SNS `SubscribeURL` is not https on an SNS host.
    #[error("the SNS subscribe URL is not https on an SNS host")]
    BadSubscribeUrl,
    /// The SNS signing certificate cannot be read, or its key is not RSA.
    #[error("the SNS signing certificate is unreadable or not RSA")]
    BadCertificate,
}

/// Refuses `timestamp` when it is more than `max_age` seconds before `now` or more than
/// `max_ahead` after it.
fn within_window(timestamp: UnixSeconds, now: UnixSeconds, max_age: i64, max_ahead: i64) -> Result<(), Refusal> {
    // Saturating: a timestamp near i64::MIN or MAX is the sender's choice and must not overflow.
    if now.saturating_sub(timestamp) > max_age {
        Err(Refusal::Stale)
    } else if timestamp.saturating_sub(now) > max_ahead {
        Err(Refusal::FromTheFuture)
    } else {
        Ok(())
    }
}

/// The body of a Debug impl for a credential type.
fn redacted(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    f.debug_tuple(name).field(&format_args!("[redacted]")).finish()
}

// Resend (Svix, Standard Webhooks)

/// How far either way of now a Svix timestamp may be, in seconds (Svix's own tolerance).
pub const SVIX_TOLERANCE: i64 = 5 * 60;

/// Resend's webhook signing secret (`whsec_` and the standard base64 of the key).
pub struct ResendKey {
    key: hmac::Key,
}

impl ResendKey {
    /// Parses the secret as Resend shows it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let encoded = text.strip_prefix("whsec_").ok_or("resend signing secret: must start with \"whsec_\"")?;
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| "resend signing secret: the part after \"whsec_\" is not standard base64")?;
        if bytes.is_empty() {
            return Err("resend signing secret: the part after \"whsec_\" is empty".to_owned());
        }
        Ok(Self { key: hmac::Key::new(hmac::HMAC_SHA256, &bytes) })
    }
}

impl fmt::Debug for ResendKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "ResendKey")
    }
}

/// Verifies a Resend (Svix) webhook request and returns its event id (`svix-id`), by which the
/// caller can recognise a redelivery.
///
/// `headers` looks a header up by name, case-insensitively; each `svix-*` header may also come as
/// its Standard Webhooks `webhook-*` name.
pub fn verify_resend<'h>(
    headers: impl Fn(&str) -> Option<&'h str>,
    body: &[u8],
    key: &ResendKey,
    now: UnixSeconds,
) -> Result<String, Refusal> {
    let header = |svix: &'static str, standard: &str| {
        headers(svix).or_else(|| headers(standard)).ok_or(Refusal::MissingHeader(svix))
    };
    let id = header("svix-id", "webhook-id")?;
    let timestamp = header("svix-timestamp", "webhook-timestamp")?;
    let signatures = header("svix-signature", "webhook-signature")?;
    if id.is_empty() {
        return Err(Refusal::Malformed("svix-id"));
    }
    let sent: UnixSeconds = timestamp.parse().map_err(|_| Refusal::Malformed("svix-timestamp"))?;

    // The timestamp is signed as the header's text, not as the number it parses to.
    let mut signed = Vec::with_capacity(id.len() + timestamp.len() + body.len() + 2);
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    // During a rotation Svix signs with the old and the new secret; a scheme version other than
    // v1 is one this module does not know, so it cannot count.
    let verified = signatures
        .split(' ')
        .filter_map(|entry| entry.strip_prefix("v1,"))
        .filter_map(|encoded| STANDARD.decode(encoded).ok())
        .any(|tag| hmac::verify(&key.key, &signed, &tag).is_ok());
    if !verified {
        return Err(Refusal::BadSignature);
    }
    within_window(sent, now, SVIX_TOLERANCE, SVIX_TOLERANCE)?;
    Ok(id.to_owned())
}

// Postmark (HTTP Basic)

/// Postmark's webhook credentials, `user:password`.
pub struct PostmarkCredentials {
    /// The HMAC of `user:password` under [`postmark_comparison_key`], so that the comparison is
    /// in constant time whatever the presented length, and the credential itself is not kept.
    expected: hmac::Tag,
}

/// A fixed key: the HMAC here only makes the comparison constant-time, it is no secret.
fn postmark_comparison_key() -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, b"signupd relays: postmark basic credentials")
}

impl PostmarkCredentials {
    /// Parses `user:password` (the user cannot hold a colon, the password can: RFC 7617).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some((user, password)) if !user.is_empty() && !password.is_empty() => {
                Ok(Self { expected: hmac::sign(&postmark_comparison_key(), text.as_bytes()) })
            }
            _ => Err("postmark webhook credentials: must be \"user:password\", both non-empty".to_owned()),
        }
    }
}

impl fmt::Debug for PostmarkCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "PostmarkCredentials")
    }
}

/// Verifies that a Postmark webhook request carries the configured Basic credentials.
pub fn verify_postmark<'h>(
    headers: impl Fn(&str) -> Option<&'h str>,
    credentials: &PostmarkCredentials,
) -> Result<(), Refusal> {
    let value = headers("authorization").ok_or(Refusal::MissingHeader("authorization"))?;
    let (scheme, encoded) = value.split_once(' ').ok_or(Refusal::Malformed("authorization"))?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(Refusal::Malformed("authorization"));
    }
    let presented =
        STANDARD.decode(encoded.trim_start_matches(' ')).map_err(|_| Refusal::Malformed("authorization"))?;
    hmac::verify(&postmark_comparison_key(), &presented, credentials.expected.as_ref())
        .map_err(|_| Refusal::BadCredentials)
}

// SendGrid (ECDSA P-256)

/// How old a SendGrid timestamp may be, in seconds: SendGrid retries for about a day.
pub const SENDGRID_MAX_AGE: i64 = 24 * 60 * 60;
/// How far ahead of now a SendGrid timestamp may be, in seconds (clock skew).
pub const SENDGRID_MAX_AHEAD: i64 = 5 * 60;

const SENDGRID_SIGNATURE: &str = "x-twilio-email-event-webhook-signature";
const SENDGRID_TIMESTAMP: &str = "x-twilio-email-event-webhook-timestamp";

/// SendGrid's verification key: the uncompressed P-256 point out of its SubjectPublicKeyInfo.
pub struct SendgridKey {
    point: Vec<u8>,
}

impl SendgridKey {
    /// Parses the key as SendGrid shows it: the standard base64 of a DER SubjectPublicKeyInfo
    /// whose algorithm is id-ecPublicKey on the P-256 curve.
    pub fn parse(base64_spki: &str) -> Result<Self, String> {
        let fail = |why: &str| format!("sendgrid verification key: {why}");
        let der = STANDARD.decode(base64_spki).map_err(|_| fail("not standard base64"))?;
        let (rest, spki) = SubjectPublicKeyInfo::from_der(&der).map_err(|_| fail("not a DER SubjectPublicKeyInfo"))?;
        if !rest.is_empty() {
            return Err(fail("bytes follow the SubjectPublicKeyInfo"));
        }
        if spki.algorithm.algorithm != OID_KEY_TYPE_EC_PUBLIC_KEY {
            return Err(fail("not an elliptic-curve key"));
        }
        let curve = spki.algorithm.parameters.as_ref().and_then(|parameters| parameters.as_oid().ok());
        if curve != Some(OID_EC_P256) {
            return Err(fail("not on the P-256 curve"));
        }
        let bits = &spki.subject_public_key;
        // ring wants the uncompressed point (0x04, x, y), which is what SendGrid publishes.
        if bits.unused_bits != 0 || bits.data.len() != 65 || bits.data.first() != Some(&0x04) {
            return Err(fail("not an uncompressed P-256 point"));
        }
        Ok(Self { point: bits.data.to_vec() })
    }
}

impl fmt::Debug for SendgridKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "SendgridKey")
    }
}

/// Verifies a SendGrid event webhook request.
///
/// `headers` looks a header up by name, case-insensitively.
pub fn verify_sendgrid<'h>(
    headers: impl Fn(&str) -> Option<&'h str>,
    body: &[u8],
    key: &SendgridKey,
    now: UnixSeconds,
) -> Result<(), Refusal> {
    let signature = headers(SENDGRID_SIGNATURE).ok_or(Refusal::MissingHeader(SENDGRID_SIGNATURE))?;
    let timestamp = headers(SENDGRID_TIMESTAMP).ok_or(Refusal::MissingHeader(SENDGRID_TIMESTAMP))?;
    let sent: UnixSeconds = timestamp.parse().map_err(|_| Refusal::Malformed(SENDGRID_TIMESTAMP))?;
    let signature = STANDARD.decode(signature).map_err(|_| Refusal::Malformed(SENDGRID_SIGNATURE))?;

    let mut signed = Vec::with_capacity(timestamp.len() + body.len());
    signed.extend_from_slice(timestamp.as_bytes());
    signed.extend_from_slice(body);
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &key.point)
        .verify(&signed, &signature)
        .map_err(|_| Refusal::BadSignature)?;
    within_window(sent, now, SENDGRID_MAX_AGE, SENDGRID_MAX_AHEAD)
}

// Mailgun (HMAC inside the body)

/// How far either way of now a Mailgun timestamp may be, in seconds; a token seen within it must
/// be remembered at least this long (twice over, for one from the future) to refuse its replay.
pub const MAILGUN_TOLERANCE: i64 = 15 * 60;

/// Mailgun's HTTP webhook signing key.
pub struct MailgunKey {
    key: hmac::Key,
}

impl MailgunKey {
    /// Takes the key as Mailgun shows it; its text is the HMAC key.
    pub fn new(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("mailgun webhook signing key: empty".to_owned());
        }
        Ok(Self { key: hmac::Key::new(hmac::HMAC_SHA256, text.as_bytes()) })
    }
}

impl fmt::Debug for MailgunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "MailgunKey")
    }
}

/// The body as far as the check needs it; `event-data` is skipped unread.
#[derive(Deserialize)]
struct MailgunBody {
    signature: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct MailgunSignature {
    timestamp: String,
    token: String,
    signature: String,
}

/// Verifies a Mailgun webhook request and returns its token, which the caller must refuse if it
/// has seen it within [`MAILGUN_TOLERANCE`]: Mailgun's signature does not cover the event.
pub fn verify_mailgun(body: &[u8], key: &MailgunKey, now: UnixSeconds) -> Result<String, Refusal> {
    let envelope: MailgunBody = serde_json::from_slice(body).map_err(|_| Refusal::Malformed("body"))?;
    let fields: MailgunSignature = envelope
        .signature
        .and_then(|value| serde_json::from_value(value).ok())
        .ok_or(Refusal::Malformed("signature"))?;
    let sent: UnixSeconds = fields.timestamp.parse().map_err(|_| Refusal::Malformed("signature.timestamp"))?;
    // An empty token would make every request the same to the caller's replay cache.
    if fields.token.is_empty() {
        return Err(Refusal::Malformed("signature.token"));
    }
    let tag = hex::decode(&fields.signature).map_err(|_| Refusal::Malformed("signature.signature"))?;

    let signed = [fields.timestamp.as_bytes(), fields.token.as_bytes()].concat();
    hmac::verify(&key.key, &signed, &tag).map_err(|_| Refusal::BadSignature)?;
    within_window(sent, now, MAILGUN_TOLERANCE, MAILGUN_TOLERANCE)?;
    Ok(fields.token)
}

// Amazon SES (SNS message signatures)

/// How old an SNS `Timestamp` may be, in seconds: a delivery policy retries for at most an hour.
pub const SNS_MAX_AGE: i64 = 60 * 60;
/// How far ahead of now an SNS `Timestamp` may be, in seconds (clock skew).
pub const SNS_MAX_AHEAD: i64 = 5 * 60;

/// The kind of an SNS message (its `Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnsType {
    /// A message published to the topic: for SES, a bounce, complaint or delivery.
    Notification,
    /// The topic asks the endpoint to confirm a subscription by fetching `SubscribeURL`.
    SubscriptionConfirmation,
    /// The subscription was removed; `SubscribeURL` would subscribe again.
    UnsubscribeConfirmation,
}

/// What a verified SNS message tells the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsEnvelope {
    /// The message's `Type`.
    pub kind: SnsType,
    /// `MessageId`: the same across SNS's retries of one message.
    pub message_id: String,
    /// `TopicArn`, one of the allowed topics.
    pub topic_arn: String,
    /// `Message`: for a notification from SES, the JSON of the event.
    pub message: String,
    /// `SubscribeURL` of a confirmation, checked to be https on an SNS host; `None` for a
    /// notification.
    pub subscribe_url: Option<Url>,
}

/// The envelope's fields as SNS sends them; unknown ones (such as `UnsubscribeURL`) are not
/// signed and are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SnsFields {
    #[serde(rename = "Type")]
    kind: String,
    message_id: String,
    topic_arn: String,
    message: String,
    timestamp: String,
    signature_version: String,
    signature: String,
    #[serde(rename = "SigningCertURL")]
    signing_cert_url: String,
    #[serde(rename = "SubscribeURL")]
    subscribe_url: Option<String>,
    token: Option<String>,
    subject: Option<String>,
}

fn sns_fields(body: &[u8]) -> Result<(SnsType, SnsFields), Refusal> {
    let fields: SnsFields = serde_json::from_slice(body).map_err(|_| Refusal::Malformed("body"))?;
    let kind = match fields.kind.as_str() {
        "Notification" => SnsType::Notification,
        "SubscriptionConfirmation" => SnsType::SubscriptionConfirmation,
        "UnsubscribeConfirmation" => SnsType::UnsubscribeConfirmation,
        _ => return Err(Refusal::Malformed("Type")),
    };
    Ok((kind, fields))
}

/// The `SigningCertURL` of an SNS message, if it is one the caller may fetch the signing
/// certificate from: the message names one of `allowed_topics` (checked first, so that nothing
/// is fetched for a topic nobody configured: the body is not authenticated yet, and
/// [`verify_sns`] checks the topic again once it is), and the URL is
/// `https://sns.<region>.amazonaws.com/….pem` (or `.amazonaws.com.cn`), with no port, user
/// info, query or fragment.
pub fn sns_certificate_url(body: &[u8], allowed_topics: &[String]) -> Result<Url, Refusal> {
    let (_, fields) = sns_fields(body)?;
    if !allowed_topics.contains(&fields.topic_arn) {
        return Err(Refusal::UnknownTopic);
    }
    certificate_url(&fields.signing_cert_url)
}

fn certificate_url(text: &str) -> Result<Url, Refusal> {
    let url = Url::parse(text).map_err(|_| Refusal::BadCertificateUrl)?;
    if on_sns_host(&url) && url.path().ends_with(".pem") && url.query().is_none() && url.fragment().is_none() {
        Ok(url)
    } else {
        Err(Refusal::BadCertificateUrl)
    }
}

/// Whether `url` is https on an SNS host, with nothing that could send the request elsewhere.
fn on_sns_host(url: &Url) -> bool {
    url.scheme() == "https"
        && url.username().is_empty()
        && url.password().is_none()
        && url.port().is_none()
        && matches!(url.host(), Some(Host::Domain(host)) if is_sns_host(host))
}

/// `sns.<region>.amazonaws.com` or `sns.<region>.amazonaws.com.cn`, exactly.
fn is_sns_host(host: &str) -> bool {
    let Some(rest) = host.strip_prefix("sns.") else {
        return false;
    };
    rest.strip_suffix(".amazonaws.com").or_else(|| rest.strip_suffix(".amazonaws.com.cn")).is_some_and(is_region)
}

/// An AWS region name: two letters, one or more words, a number (`us-east-1`, `us-gov-west-1`,
/// `cn-north-1`). The host is then one label per region, so no other domain can pose as one.
fn is_region(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    let lowercase = |part: &&str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase());
    match parts.as_slice() {
        [area, words @ .., number] => {
            area.len() == 2
                && lowercase(area)
                && !words.is_empty()
                && words.iter().all(lowercase)
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// The string SNS signed: `name\nvalue\n` for each signed field, in the fixed (alphabetical)
/// order of the message's type.
fn string_to_sign(kind: SnsType, fields: &SnsFields) -> Result<String, Refusal> {
    let (subject, subscribe_url, token) = match kind {
        SnsType::Notification => (fields.subject.as_deref(), None, None),
        SnsType::SubscriptionConfirmation | SnsType::UnsubscribeConfirmation => (
            None,
            Some(fields.subscribe_url.as_deref().ok_or(Refusal::Malformed("SubscribeURL"))?),
            Some(fields.token.as_deref().ok_or(Refusal::Malformed("Token"))?),
        ),
    };
    let pairs = [
        ("Message", Some(fields.message.as_str())),
        ("MessageId", Some(fields.message_id.as_str())),
        ("Subject", subject),
        ("SubscribeURL", subscribe_url),
        ("Timestamp", Some(fields.timestamp.as_str())),
        ("Token", token),
        ("TopicArn", Some(fields.topic_arn.as_str())),
        ("Type", Some(fields.kind.as_str())),
    ];
    let mut text = String::new();
    for (name, value) in pairs {
        if let Some(value) = value {
            text.push_str(name);
            text.push('\n');
            text.push_str(value);
            text.push('\n');
        }
    }
    Ok(text)
}

/// The PKCS#1 RSAPublicKey of a PEM or DER certificate: the BIT STRING contents of its RSA
/// SubjectPublicKeyInfo, which is what ring verifies with.
fn rsa_public_key(certificate: &[u8]) -> Result<Vec<u8>, Refusal> {
    let der: Cow<'_, [u8]> = if certificate.trim_ascii_start().starts_with(b"-----BEGIN") {
        let (_, pem) = parse_x509_pem(certificate).map_err(|_| Refusal::BadCertificate)?;
        if pem.label != "CERTIFICATE" {
            return Err(Refusal::BadCertificate);
        }
        Cow::Owned(pem.contents)
    } else {
        Cow::Borrowed(certificate)
    };
    let (_, parsed) = x509_parser::parse_x509_certificate(&der).map_err(|_| Refusal::BadCertificate)?;
    let spki = parsed.public_key();
    if spki.algorithm.algorithm != OID_PKCS1_RSAENCRYPTION || spki.subject_public_key.unused_bits != 0 {
        return Err(Refusal::BadCertificate);
    }
    Ok(spki.subject_public_key.data.to_vec())
}

/// Verifies an SNS message (SES's events and the subscription's confirmations) with the
/// certificate the caller fetched, PEM or DER, from the URL [`sns_certificate_url`] approved;
/// then refuses a topic not in `allowed_topics`, a `Timestamp` outside the window, and a
/// confirmation whose `SubscribeURL` is not https on an SNS host.
pub fn verify_sns(
    body: &[u8],
    certificate: &[u8],
    allowed_topics: &[String],
    now: UnixSeconds,
) -> Result<SnsEnvelope, Refusal> {
    let (kind, fields) = sns_fields(body)?;
    // Checked again so that a message is never verified with a certificate from a URL that was
    // not approved, whatever the caller did between the two calls.
    certificate_url(&fields.signing_cert_url)?;
    let algorithm: &'static dyn VerificationAlgorithm = match fields.signature_version.as_str() {
        "1" => &RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
        "2" => &RSA_PKCS1_2048_8192_SHA256,
        _ => return Err(Refusal::Malformed("SignatureVersion")),
    };
    let signature = STANDARD.decode(&fields.signature).map_err(|_| Refusal::Malformed("Signature"))?;
    let published = chrono::DateTime::parse_from_rfc3339(&fields.timestamp)
        .map_err(|_| Refusal::Malformed("Timestamp"))?
        .timestamp();
    let signed = string_to_sign(kind, &fields)?;
    let key = rsa_public_key(certificate)?;

    UnparsedPublicKey::new(algorithm, &key).verify(signed.as_bytes(), &signature).map_err(|_| Refusal::BadSignature)?;
    within_window(published, now, SNS_MAX_AGE, SNS_MAX_AHEAD)?;
    if !allowed_topics.contains(&fields.topic_arn) {
        return Err(Refusal::UnknownTopic);
    }
    let subscribe_url = match kind {
        SnsType::Notification => None,
        SnsType::SubscriptionConfirmation | SnsType::UnsubscribeConfirmation => {
            let text = fields.subscribe_url.as_deref().ok_or(Refusal::Malformed("SubscribeURL"))?;
            let url = Url::parse(text).map_err(|_| Refusal::BadSubscribeUrl)?;
            // The caller fetches it to confirm; anywhere but SNS it would be a request on a
            // stranger's behalf.
            if !on_sns_host(&url) {
                return Err(Refusal::BadSubscribeUrl);
            }
            Some(url)
        }
    };
    Ok(SnsEnvelope {
        kind,
        message_id: fields.message_id,
        topic_arn: fields.topic_arn,
        message: fields.message,
        subscribe_url,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::sync::OnceLock;

    use ring::rand::{SecureRandom, SystemRandom};
    use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, ECDSA_P384_SHA384_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
    use serde_json::{Value, json};

    use super::*;

    const NOW: UnixSeconds = 1_780_000_000;

    /// A case-insensitive header lookup over `pairs`, as the caller's closure over a header map.
    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> + 'a {
        move |name| pairs.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| *value)
    }

    fn random_bytes(len: usize) -> Vec<u8> {
        let mut bytes = vec![0; len];
        SystemRandom::new().fill(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn credential_types_print_redacted_as_debug() {
        let secret = format!("whsec_{}", STANDARD.encode(b"a very secret resend key"));
        let printed = [
            format!("{:?}", ResendKey::parse(&secret).unwrap()),
            format!("{:?}", PostmarkCredentials::parse("hook:hunter2").unwrap()),
            format!("{:?}", SendgridKey::parse(SENDGRID_VECTOR_KEY).unwrap()),
            format!("{:?}", MailgunKey::new("key-hunter2").unwrap()),
        ];
        assert_eq!(
            printed,
            [
                "ResendKey([redacted])",
                "PostmarkCredentials([redacted])",
                "SendgridKey([redacted])",
                "MailgunKey([redacted])"
            ]
        );
    }

    #[test]
    fn refusals_read_as_words() {
        assert_eq!(Refusal::MissingHeader("svix-id").to_string(), "the svix-id header is missing");
        assert_eq!(Refusal::Malformed("Timestamp").to_string(), "Timestamp is malformed");
        assert_eq!(Refusal::Stale.to_string(), "the signed timestamp is too old");
    }

    // Resend (Svix)

    struct Svix {
        secret: String,
        raw: Vec<u8>,
    }

    impl Svix {
        fn new() -> Self {
            let raw = random_bytes(24);
            Self { secret: format!("whsec_{}", STANDARD.encode(&raw)), raw }
        }

        fn key(&self) -> ResendKey {
            ResendKey::parse(&self.secret).unwrap()
        }

        fn sign(&self, id: &str, timestamp: &str, body: &str) -> String {
            let key = hmac::Key::new(hmac::HMAC_SHA256, &self.raw);
            let tag = hmac::sign(&key, format!("{id}.{timestamp}.{body}").as_bytes());
            format!("v1,{}", STANDARD.encode(tag.as_ref()))
        }
    }

    const SVIX_BODY: &str = r#"{"type":"email.bounced","data":{"email_id":"4ef9a417"}}"#;

    fn verify_svix(svix: &Svix, timestamp: UnixSeconds, body: &str) -> Result<String, Refusal> {
        let sent = timestamp.to_string();
        let signature = svix.sign("msg_1", &sent, SVIX_BODY);
        let headers = [("svix-id", "msg_1"), ("svix-timestamp", sent.as_str()), ("svix-signature", signature.as_str())];
        verify_resend(lookup(&headers), body.as_bytes(), &svix.key(), NOW)
    }

    #[test]
    fn a_svix_signed_event_verifies_and_yields_its_id() {
        assert_eq!(verify_svix(&Svix::new(), NOW, SVIX_BODY), Ok("msg_1".to_owned()));
    }

    #[test]
    fn header_names_are_looked_up_whatever_their_case() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let signature = svix.sign("msg_1", &sent, SVIX_BODY);
        let headers = [("Svix-Id", "msg_1"), ("SVIX-TIMESTAMP", sent.as_str()), ("svix-Signature", signature.as_str())];
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW), Ok("msg_1".to_owned()));
    }

    #[test]
    fn the_standard_webhooks_header_names_are_accepted_too() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let signature = svix.sign("msg_1", &sent, SVIX_BODY);
        let headers =
            [("webhook-id", "msg_1"), ("webhook-timestamp", sent.as_str()), ("webhook-signature", signature.as_str())];
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW), Ok("msg_1".to_owned()));
    }

    #[test]
    fn a_svix_signature_of_a_rotated_secret_still_verifies() {
        let (old, new) = (Svix::new(), Svix::new());
        let sent = NOW.to_string();
        let signatures = format!(
            "{} v2,c29tZXRoaW5nIGVsc2U= {}",
            old.sign("msg_1", &sent, SVIX_BODY),
            new.sign("msg_1", &sent, SVIX_BODY)
        );
        let headers =
            [("svix-id", "msg_1"), ("svix-timestamp", sent.as_str()), ("svix-signature", signatures.as_str())];
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &old.key(), NOW), Ok("msg_1".to_owned()));
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &new.key(), NOW), Ok("msg_1".to_owned()));
    }

    #[test]
    fn a_svix_signature_over_another_body_is_refused() {
        let tampered = SVIX_BODY.replace("bounced", "delivered");
        assert_eq!(verify_svix(&Svix::new(), NOW, &tampered), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_svix_signature_with_a_changed_timestamp_is_refused() {
        let svix = Svix::new();
        let signature = svix.sign("msg_1", &NOW.to_string(), SVIX_BODY);
        let later = (NOW + 1).to_string();
        let headers =
            [("svix-id", "msg_1"), ("svix-timestamp", later.as_str()), ("svix-signature", signature.as_str())];
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_svix_signature_with_a_changed_id_is_refused() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let signature = svix.sign("msg_1", &sent, SVIX_BODY);
        let headers = [("svix-id", "msg_2"), ("svix-timestamp", sent.as_str()), ("svix-signature", signature.as_str())];
        assert_eq!(verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_svix_signature_made_with_another_secret_is_refused() {
        let (signer, other) = (Svix::new(), Svix::new());
        let sent = NOW.to_string();
        let signature = signer.sign("msg_1", &sent, SVIX_BODY);
        let headers = [("svix-id", "msg_1"), ("svix-timestamp", sent.as_str()), ("svix-signature", signature.as_str())];
        assert_eq!(
            verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &other.key(), NOW),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn a_svix_event_older_than_five_minutes_is_stale() {
        let svix = Svix::new();
        assert_eq!(verify_svix(&svix, NOW - SVIX_TOLERANCE, SVIX_BODY), Ok("msg_1".to_owned()));
        assert_eq!(verify_svix(&svix, NOW - SVIX_TOLERANCE - 1, SVIX_BODY), Err(Refusal::Stale));
    }

    #[test]
    fn a_svix_event_more_than_five_minutes_ahead_is_from_the_future() {
        let svix = Svix::new();
        assert_eq!(verify_svix(&svix, NOW + SVIX_TOLERANCE, SVIX_BODY), Ok("msg_1".to_owned()));
        assert_eq!(verify_svix(&svix, NOW + SVIX_TOLERANCE + 1, SVIX_BODY), Err(Refusal::FromTheFuture));
    }

    #[test]
    fn a_svix_request_without_one_of_its_headers_is_refused() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let signature = svix.sign("msg_1", &sent, SVIX_BODY);
        let all = [("svix-id", "msg_1"), ("svix-timestamp", sent.as_str()), ("svix-signature", signature.as_str())];
        for (missing, name) in all.iter().enumerate().map(|(index, (name, _))| (index, *name)) {
            let headers: Vec<_> =
                all.iter().enumerate().filter(|(index, _)| *index != missing).map(|(_, pair)| *pair).collect();
            assert_eq!(
                verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW),
                Err(Refusal::MissingHeader(name))
            );
        }
    }

    #[test]
    fn a_svix_timestamp_that_is_not_a_number_is_malformed() {
        let svix = Svix::new();
        let signature = svix.sign("msg_1", "yesterday", SVIX_BODY);
        let headers = [("svix-id", "msg_1"), ("svix-timestamp", "yesterday"), ("svix-signature", signature.as_str())];
        assert_eq!(
            verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW),
            Err(Refusal::Malformed("svix-timestamp"))
        );
    }

    #[test]
    fn an_empty_svix_id_is_malformed() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let signature = svix.sign("", &sent, SVIX_BODY);
        let headers = [("svix-id", ""), ("svix-timestamp", sent.as_str()), ("svix-signature", signature.as_str())];
        assert_eq!(
            verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW),
            Err(Refusal::Malformed("svix-id"))
        );
    }

    #[test]
    fn a_svix_signature_header_without_a_v1_signature_is_refused() {
        let svix = Svix::new();
        let sent = NOW.to_string();
        let right = svix.sign("msg_1", &sent, SVIX_BODY);
        let other_version = right.replacen("v1,", "v2,", 1);
        for signatures in ["", "garbage", "v1,not base64!", other_version.as_str()] {
            let headers = [("svix-id", "msg_1"), ("svix-timestamp", sent.as_str()), ("svix-signature", signatures)];
            assert_eq!(
                verify_resend(lookup(&headers), SVIX_BODY.as_bytes(), &svix.key(), NOW),
                Err(Refusal::BadSignature)
            );
        }
    }

    #[test]
    fn a_resend_secret_must_be_whsec_and_base64() {
        let secret = STANDARD.encode(b"a very secret resend key");
        for text in [secret.clone(), format!("whsec_{secret}!"), "whsec_".to_owned()] {
            let error = ResendKey::parse(&text).unwrap_err();
            assert!(error.starts_with("resend signing secret: "), "{error}");
            assert!(!error.contains(&secret), "{error}");
        }
    }

    // Postmark (HTTP Basic)

    fn basic(credentials: &str) -> String {
        format!("Basic {}", STANDARD.encode(credentials))
    }

    fn verify_basic(authorization: &str) -> Result<(), Refusal> {
        let credentials = PostmarkCredentials::parse("postmark:s3cret:with-colon").unwrap();
        verify_postmark(lookup(&[("Authorization", authorization)]), &credentials)
    }

    #[test]
    fn the_configured_basic_credentials_are_accepted() {
        assert_eq!(verify_basic(&basic("postmark:s3cret:with-colon")), Ok(()));
    }

    #[test]
    fn the_basic_scheme_name_is_case_insensitive() {
        let value = basic("postmark:s3cret:with-colon").replacen("Basic", "bASIC", 1);
        assert_eq!(verify_basic(&value), Ok(()));
    }

    #[test]
    fn other_basic_credentials_are_refused() {
        for presented in [
            "postmark:s3cret:with-colo",
            "postmark:s3cret:with-colon ",
            "postmark:wrong",
            "other:s3cret:with-colon",
            "postmark",
            "",
        ] {
            assert_eq!(verify_basic(&basic(presented)), Err(Refusal::BadCredentials), "{presented:?}");
        }
    }

    #[test]
    fn a_postmark_request_without_authorization_is_refused() {
        let credentials = PostmarkCredentials::parse("postmark:s3cret").unwrap();
        assert_eq!(
            verify_postmark(lookup(&[("Content-Type", "application/json")]), &credentials),
            Err(Refusal::MissingHeader("authorization"))
        );
    }

    #[test]
    fn an_authorization_that_is_not_basic_base64_is_malformed() {
        let bearer = format!("Bearer {}", STANDARD.encode("postmark:s3cret:with-colon"));
        for value in ["Basic", "Basic not-base64!", bearer.as_str(), ""] {
            assert_eq!(verify_basic(value), Err(Refusal::Malformed("authorization")), "{value:?}");
        }
    }

    #[test]
    fn postmark_credentials_must_be_user_colon_password() {
        for text in ["", "postmark", ":s3cret", "postmark:"] {
            let error = PostmarkCredentials::parse(text).unwrap_err();
            assert_eq!(error, "postmark webhook credentials: must be \"user:password\", both non-empty");
        }
    }

    // SendGrid (ECDSA P-256)

    // SendGrid's own test vector (sendgrid-go, helpers/eventwebhook).
    const SENDGRID_VECTOR_KEY: &str = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==";
    const SENDGRID_VECTOR_TIMESTAMP: &str = "1588788367";
    const SENDGRID_VECTOR_PAYLOAD: &str =
        r#"{"category":"example_payload","event":"test_event","message_id":"message_id"}"#;
    const SENDGRID_VECTOR_SIGNATURE: &str =
        "MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=";
    const SENDGRID_VECTOR_NOW: UnixSeconds = 1_588_788_367;

    /// The DER of a SubjectPublicKeyInfo for id-ecPublicKey on P-256, up to the point.
    const P256_SPKI_PREFIX: [u8; 26] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
        0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];

    fn sendgrid_vector(timestamp: &str, payload: &str, key: &str) -> Result<(), Refusal> {
        let headers = [
            ("X-Twilio-Email-Event-Webhook-Signature", SENDGRID_VECTOR_SIGNATURE),
            ("X-Twilio-Email-Event-Webhook-Timestamp", timestamp),
        ];
        verify_sendgrid(lookup(&headers), payload.as_bytes(), &SendgridKey::parse(key).unwrap(), SENDGRID_VECTOR_NOW)
    }

    struct SendgridSigner {
        pair: EcdsaKeyPair,
    }

    impl SendgridSigner {
        fn new() -> Self {
            let rng = SystemRandom::new();
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
            Self { pair: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap() }
        }

        fn key(&self) -> SendgridKey {
            let spki = [&P256_SPKI_PREFIX[..], self.pair.public_key().as_ref()].concat();
            SendgridKey::parse(&STANDARD.encode(spki)).unwrap()
        }

        fn sign(&self, timestamp: &str, body: &str) -> String {
            let signed = [timestamp.as_bytes(), body.as_bytes()].concat();
            STANDARD.encode(self.pair.sign(&SystemRandom::new(), &signed).unwrap().as_ref())
        }
    }

    const SENDGRID_BODY: &str = r#"[{"email":"a@example.org","event":"bounce","sg_event_id":"e1"}]"#;

    fn verify_signed_sendgrid(signer: &SendgridSigner, timestamp: UnixSeconds) -> Result<(), Refusal> {
        let sent = timestamp.to_string();
        let signature = signer.sign(&sent, SENDGRID_BODY);
        let headers = [(SENDGRID_SIGNATURE, signature.as_str()), (SENDGRID_TIMESTAMP, sent.as_str())];
        verify_sendgrid(lookup(&headers), SENDGRID_BODY.as_bytes(), &signer.key(), NOW)
    }

    #[test]
    fn sendgrids_own_test_vector_verifies() {
        assert_eq!(sendgrid_vector(SENDGRID_VECTOR_TIMESTAMP, SENDGRID_VECTOR_PAYLOAD, SENDGRID_VECTOR_KEY), Ok(()));
    }

    #[test]
    fn sendgrids_test_vector_with_a_changed_payload_is_refused() {
        let payload = SENDGRID_VECTOR_PAYLOAD.replace("test_event", "test_evenT");
        assert_eq!(
            sendgrid_vector(SENDGRID_VECTOR_TIMESTAMP, &payload, SENDGRID_VECTOR_KEY),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn sendgrids_test_vector_with_a_changed_timestamp_is_refused() {
        assert_eq!(
            sendgrid_vector("1588788366", SENDGRID_VECTOR_PAYLOAD, SENDGRID_VECTOR_KEY),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn sendgrids_test_vector_under_another_key_is_refused() {
        let other = STANDARD.encode([&P256_SPKI_PREFIX[..], SendgridSigner::new().pair.public_key().as_ref()].concat());
        assert_eq!(
            sendgrid_vector(SENDGRID_VECTOR_TIMESTAMP, SENDGRID_VECTOR_PAYLOAD, &other),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn a_sendgrid_event_signed_with_the_configured_key_verifies() {
        assert_eq!(verify_signed_sendgrid(&SendgridSigner::new(), NOW), Ok(()));
    }

    #[test]
    fn a_sendgrid_event_signed_with_another_key_is_refused() {
        let (signer, other) = (SendgridSigner::new(), SendgridSigner::new());
        let sent = NOW.to_string();
        let signature = signer.sign(&sent, SENDGRID_BODY);
        let headers = [(SENDGRID_SIGNATURE, signature.as_str()), (SENDGRID_TIMESTAMP, sent.as_str())];
        assert_eq!(
            verify_sendgrid(lookup(&headers), SENDGRID_BODY.as_bytes(), &other.key(), NOW),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn a_sendgrid_event_up_to_a_day_old_verifies_and_an_older_one_is_stale() {
        let signer = SendgridSigner::new();
        assert_eq!(verify_signed_sendgrid(&signer, NOW - SENDGRID_MAX_AGE), Ok(()));
        assert_eq!(verify_signed_sendgrid(&signer, NOW - SENDGRID_MAX_AGE - 1), Err(Refusal::Stale));
    }

    #[test]
    fn a_sendgrid_event_more_than_five_minutes_ahead_is_from_the_future() {
        let signer = SendgridSigner::new();
        assert_eq!(verify_signed_sendgrid(&signer, NOW + SENDGRID_MAX_AHEAD), Ok(()));
        assert_eq!(verify_signed_sendgrid(&signer, NOW + SENDGRID_MAX_AHEAD + 1), Err(Refusal::FromTheFuture));
    }

    #[test]
    fn a_sendgrid_request_without_one_of_its_headers_is_refused() {
        let key = SendgridKey::parse(SENDGRID_VECTOR_KEY).unwrap();
        let body = SENDGRID_VECTOR_PAYLOAD.as_bytes();
        let only_timestamp = [(SENDGRID_TIMESTAMP, SENDGRID_VECTOR_TIMESTAMP)];
        let only_signature = [(SENDGRID_SIGNATURE, SENDGRID_VECTOR_SIGNATURE)];
        assert_eq!(
            verify_sendgrid(lookup(&only_timestamp), body, &key, SENDGRID_VECTOR_NOW),
            Err(Refusal::MissingHeader(SENDGRID_SIGNATURE))
        );
        assert_eq!(
            verify_sendgrid(lookup(&only_signature), body, &key, SENDGRID_VECTOR_NOW),
            Err(Refusal::MissingHeader(SENDGRID_TIMESTAMP))
        );
    }

    #[test]
    fn a_sendgrid_header_that_cannot_be_read_is_malformed() {
        let key = SendgridKey::parse(SENDGRID_VECTOR_KEY).unwrap();
        let body = SENDGRID_VECTOR_PAYLOAD.as_bytes();
        let bad_timestamp = [(SENDGRID_SIGNATURE, SENDGRID_VECTOR_SIGNATURE), (SENDGRID_TIMESTAMP, "soon")];
        let bad_signature = [(SENDGRID_SIGNATURE, "not base64!"), (SENDGRID_TIMESTAMP, SENDGRID_VECTOR_TIMESTAMP)];
        assert_eq!(
            verify_sendgrid(lookup(&bad_timestamp), body, &key, SENDGRID_VECTOR_NOW),
            Err(Refusal::Malformed(SENDGRID_TIMESTAMP))
        );
        assert_eq!(
            verify_sendgrid(lookup(&bad_signature), body, &key, SENDGRID_VECTOR_NOW),
            Err(Refusal::Malformed(SENDGRID_SIGNATURE))
        );
    }

    #[test]
    fn a_sendgrid_key_must_be_a_base64_p256_subject_public_key_info() {
        let rng = SystemRandom::new();
        let p384 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P384_SHA384_ASN1_SIGNING, &rng).unwrap();
        let p384 = EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_ASN1_SIGNING, p384.as_ref(), &rng).unwrap();
        // id-ecPublicKey on secp384r1, then the 97-byte point.
        let p384_prefix = [
            0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04,
            0x00, 0x22, 0x03, 0x62, 0x00,
        ];
        let p384_spki = [&p384_prefix[..], p384.public_key().as_ref()].concat();
        let vector = STANDARD.decode(SENDGRID_VECTOR_KEY).unwrap();
        // P-256's layout with the last arc of one OID changed (id-ecPublicKey's 1 to 2, P-256's
        // 7 to 8): the check reads the OIDs, so a prefix of the right length is not enough.
        let mut other_algorithm = vector.clone();
        other_algorithm[12] = 0x02;
        let mut other_curve = vector.clone();
        other_curve[22] = 0x08;
        let cases = [
            ("not base64!".to_owned(), "sendgrid verification key: not standard base64"),
            (STANDARD.encode(b"not DER at all"), "sendgrid verification key: not a DER SubjectPublicKeyInfo"),
            (
                STANDARD.encode([&vector[..], b"x"].concat()),
                "sendgrid verification key: bytes follow the SubjectPublicKeyInfo",
            ),
            (STANDARD.encode(&other_algorithm), "sendgrid verification key: not an elliptic-curve key"),
            (STANDARD.encode(&other_curve), "sendgrid verification key: not on the P-256 curve"),
            (STANDARD.encode(&p384_spki), "sendgrid verification key: not on the P-256 curve"),
        ];
        for (text, expected) in cases {
            assert_eq!(SendgridKey::parse(&text).unwrap_err(), expected);
        }
    }

    // Mailgun (HMAC inside the body)

    const MAILGUN_KEY: &str = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0";
    const MAILGUN_TOKEN: &str = "c9ae7e6ef8b94f0ed4b9b4a9e4c4d1c0a1f8a5c0b4d0a3e5f1";

    fn mailgun_hex(key: &str, timestamp: &str, token: &str) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
        hex::encode(hmac::sign(&key, format!("{timestamp}{token}").as_bytes()).as_ref())
    }

    fn mailgun_body(timestamp: &str, token: &str, signature: &str) -> Vec<u8> {
        let body = json!({
            "signature": {"timestamp": timestamp, "token": token, "signature": signature},
            "event-data": {"event": "failed", "severity": "permanent", "recipient": "a@example.org"},
        });
        serde_json::to_vec(&body).unwrap()
    }

    fn verify_signed_mailgun(timestamp: UnixSeconds) -> Result<String, Refusal> {
        let sent = timestamp.to_string();
        let body = mailgun_body(&sent, MAILGUN_TOKEN, &mailgun_hex(MAILGUN_KEY, &sent, MAILGUN_TOKEN));
        verify_mailgun(&body, &MailgunKey::new(MAILGUN_KEY).unwrap(), NOW)
    }

    #[test]
    fn a_mailgun_signed_event_verifies_and_yields_its_token() {
        assert_eq!(verify_signed_mailgun(NOW), Ok(MAILGUN_TOKEN.to_owned()));
    }

    #[test]
    fn mailguns_signature_does_not_cover_the_event_so_the_token_is_left_to_refuse_replays() {
        let sent = NOW.to_string();
        let signature = mailgun_hex(MAILGUN_KEY, &sent, MAILGUN_TOKEN);
        let body = String::from_utf8(mailgun_body(&sent, MAILGUN_TOKEN, &signature)).unwrap();
        let other_event = body.replace("permanent", "temporary");
        assert_ne!(body, other_event);
        assert_eq!(
            verify_mailgun(other_event.as_bytes(), &MailgunKey::new(MAILGUN_KEY).unwrap(), NOW),
            Ok(MAILGUN_TOKEN.to_owned())
        );
    }

    #[test]
    fn a_mailgun_signature_with_a_changed_token_is_refused() {
        let sent = NOW.to_string();
        let body = mailgun_body(&sent, "another-token", &mailgun_hex(MAILGUN_KEY, &sent, MAILGUN_TOKEN));
        assert_eq!(verify_mailgun(&body, &MailgunKey::new(MAILGUN_KEY).unwrap(), NOW), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_mailgun_signature_with_a_changed_timestamp_is_refused() {
        let signature = mailgun_hex(MAILGUN_KEY, &NOW.to_string(), MAILGUN_TOKEN);
        let body = mailgun_body(&(NOW + 1).to_string(), MAILGUN_TOKEN, &signature);
        assert_eq!(verify_mailgun(&body, &MailgunKey::new(MAILGUN_KEY).unwrap(), NOW), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_mailgun_signature_made_with_another_key_is_refused() {
        let sent = NOW.to_string();
        let body = mailgun_body(&sent, MAILGUN_TOKEN, &mailgun_hex("key-another", &sent, MAILGUN_TOKEN));
        assert_eq!(verify_mailgun(&body, &MailgunKey::new(MAILGUN_KEY).unwrap(), NOW), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_mailgun_event_older_than_fifteen_minutes_is_stale() {
        assert_eq!(verify_signed_mailgun(NOW - MAILGUN_TOLERANCE), Ok(MAILGUN_TOKEN.to_owned()));
        assert_eq!(verify_signed_mailgun(NOW - MAILGUN_TOLERANCE - 1), Err(Refusal::Stale));
    }

    #[test]
    fn a_mailgun_event_more_than_fifteen_minutes_ahead_is_from_the_future() {
        assert_eq!(verify_signed_mailgun(NOW + MAILGUN_TOLERANCE), Ok(MAILGUN_TOKEN.to_owned()));
        assert_eq!(verify_signed_mailgun(NOW + MAILGUN_TOLERANCE + 1), Err(Refusal::FromTheFuture));
    }

    #[test]
    fn a_mailgun_body_without_a_readable_signature_is_malformed() {
        let key = MailgunKey::new(MAILGUN_KEY).unwrap();
        let sent = NOW.to_string();
        let signature = mailgun_hex(MAILGUN_KEY, &sent, MAILGUN_TOKEN);
        let cases = [
            (b"not json".to_vec(), "body"),
            (br#"{"event-data":{"event":"failed"}}"#.to_vec(), "signature"),
            (br#"{"signature":null}"#.to_vec(), "signature"),
            (
                serde_json::to_vec(&json!({"signature": {"timestamp": sent, "token": MAILGUN_TOKEN}})).unwrap(),
                "signature",
            ),
            (
                serde_json::to_vec(
                    &json!({"signature": {"timestamp": NOW, "token": MAILGUN_TOKEN, "signature": signature}}),
                )
                .unwrap(),
                "signature",
            ),
            (mailgun_body("now", MAILGUN_TOKEN, &signature), "signature.timestamp"),
            (mailgun_body(&sent, "", &mailgun_hex(MAILGUN_KEY, &sent, "")), "signature.token"),
            (mailgun_body(&sent, MAILGUN_TOKEN, "not hex"), "signature.signature"),
        ];
        for (body, part) in cases {
            assert_eq!(verify_mailgun(&body, &key, NOW), Err(Refusal::Malformed(part)), "{part}");
        }
    }

    #[test]
    fn a_mailgun_key_must_not_be_empty() {
        assert_eq!(MailgunKey::new("").unwrap_err(), "mailgun webhook signing key: empty");
    }

    // Amazon SES (SNS)

    /// A key and its self-signed certificate, made by the openssl tool.
    struct Identity {
        key_pem: Vec<u8>,
        certificate_pem: Vec<u8>,
    }

    fn openssl(arguments: &[&str], directory: &Path) {
        let status = Command::new("openssl")
            .args(arguments)
            .current_dir(directory)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "openssl {arguments:?}");
    }

    fn make_identity(key_arguments: &[&str]) -> Identity {
        let directory = tempfile::tempdir().unwrap();
        let mut arguments = vec!["req", "-x509", "-nodes", "-keyout", "key.pem", "-out", "cert.pem"];
        arguments.extend_from_slice(key_arguments);
        arguments.extend_from_slice(&["-subj", "/CN=sns.amazonaws.com", "-days", "1"]);
        openssl(&arguments, directory.path());
        Identity {
            key_pem: std::fs::read(directory.path().join("key.pem")).unwrap(),
            certificate_pem: std::fs::read(directory.path().join("cert.pem")).unwrap(),
        }
    }

    fn rsa_identity() -> &'static Identity {
        static IDENTITY: OnceLock<Identity> = OnceLock::new();
        IDENTITY.get_or_init(|| make_identity(&["-newkey", "rsa:2048"]))
    }

    fn other_rsa_identity() -> &'static Identity {
        static IDENTITY: OnceLock<Identity> = OnceLock::new();
        IDENTITY.get_or_init(|| make_identity(&["-newkey", "rsa:2048"]))
    }

    impl Identity {
        /// The base64 of the RSA signature of `text`, SHA-1 for version 1 and SHA-256 for 2.
        fn sign(&self, version: &str, text: &str) -> String {
            let digest = if version == "1" { "-sha1" } else { "-sha256" };
            let directory = tempfile::tempdir().unwrap();
            std::fs::write(directory.path().join("key.pem"), &self.key_pem).unwrap();
            let mut child = Command::new("openssl")
                .args(["dgst", digest, "-sign", "key.pem"])
                .current_dir(directory.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "openssl dgst");
            STANDARD.encode(output.stdout)
        }
    }

    const TOPIC: &str = "arn:aws:sns:eu-central-1:123456789012:ses-events";
    const CERT_URL: &str =
        "https://sns.eu-central-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem";
    const SUBSCRIBE_URL: &str = "https://sns.eu-central-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:eu-central-1:123456789012:ses-events&Token=2336412f37";

    fn rfc3339(seconds: UnixSeconds) -> String {
        chrono::DateTime::from_timestamp(seconds, 0).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    fn topics() -> Vec<String> {
        vec!["arn:aws:sns:eu-central-1:123456789012:other".to_owned(), TOPIC.to_owned()]
    }

    /// An SNS message before it is signed.
    struct Sns {
        kind: &'static str,
        version: &'static str,
        subject: Option<&'static str>,
        timestamp: UnixSeconds,
        topic: &'static str,
        cert_url: &'static str,
        subscribe_url: &'static str,
    }

    impl Sns {
        fn notification() -> Self {
            Self {
                kind: "Notification",
                version: "1",
                subject: None,
                timestamp: NOW,
                topic: TOPIC,
                cert_url: CERT_URL,
                subscribe_url: SUBSCRIBE_URL,
            }
        }

        fn confirmation(kind: &'static str) -> Self {
            Self { kind, ..Self::notification() }
        }

        /// The fields and values, in the order Amazon documents for the message's type.
        fn fields(&self) -> Vec<(&'static str, String)> {
            let message = if self.kind == "Notification" {
                r#"{"notificationType":"Bounce","bounce":{"bounceType":"Permanent"}}"#
            } else {
                "You have chosen to subscribe to the topic."
            };
            let mut fields =
                vec![("Message", message.to_owned()), ("MessageId", "165545c9-2a5c-472c-8df2-7ff2be2b3b1b".to_owned())];
            if self.kind == "Notification" {
                fields.extend(self.subject.map(|subject| ("Subject", subject.to_owned())));
                fields.extend([
                    ("Timestamp", rfc3339(self.timestamp)),
                    ("TopicArn", self.topic.to_owned()),
                    ("Type", self.kind.to_owned()),
                ]);
            } else {
                fields.extend([
                    ("SubscribeURL", self.subscribe_url.to_owned()),
                    ("Timestamp", rfc3339(self.timestamp)),
                    ("Token", "2336412f37".to_owned()),
                    ("TopicArn", self.topic.to_owned()),
                    ("Type", self.kind.to_owned()),
                ]);
            }
            fields
        }

        /// The message as SNS posts it, signed by `identity`.
        fn signed_by(&self, identity: &Identity) -> Value {
            let fields = self.fields();
            let text: String = fields.iter().map(|(name, value)| format!("{name}\n{value}\n")).collect();
            let mut body: serde_json::Map<String, Value> =
                fields.into_iter().map(|(name, value)| (name.to_owned(), Value::String(value))).collect();
            body.insert("SignatureVersion".to_owned(), json!(self.version));
            body.insert("Signature".to_owned(), json!(identity.sign(self.version, &text)));
            body.insert("SigningCertURL".to_owned(), json!(self.cert_url));
            if self.kind == "Notification" {
                body.insert(
                    "UnsubscribeURL".to_owned(),
                    json!("https://sns.eu-central-1.amazonaws.com/?Action=Unsubscribe"),
                );
            }
            Value::Object(body)
        }
    }

    fn verify_value(value: &Value) -> Result<SnsEnvelope, Refusal> {
        verify_sns(&serde_json::to_vec(value).unwrap(), &rsa_identity().certificate_pem, &topics(), NOW)
    }

    fn notification_envelope() -> SnsEnvelope {
        SnsEnvelope {
            kind: SnsType::Notification,
            message_id: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b".to_owned(),
            topic_arn: TOPIC.to_owned(),
            message: r#"{"notificationType":"Bounce","bounce":{"bounceType":"Permanent"}}"#.to_owned(),
            subscribe_url: None,
        }
    }

    #[test]
    fn the_string_to_sign_follows_amazons_order() {
        let body = br#"{"Type":"SubscriptionConfirmation","MessageId":"m","Token":"t","TopicArn":"a",
            "Message":"hi","SubscribeURL":"https://sns.us-east-1.amazonaws.com/?x","Timestamp":"2026-01-01T00:00:00.000Z",
            "SignatureVersion":"1","Signature":"","SigningCertURL":"https://sns.us-east-1.amazonaws.com/c.pem",
            "Subject":"ignored for confirmations"}"#;
        let (kind, fields) = sns_fields(body).unwrap();
        assert_eq!(
            string_to_sign(kind, &fields),
            Ok("Message\nhi\nMessageId\nm\nSubscribeURL\nhttps://sns.us-east-1.amazonaws.com/?x\n\
                Timestamp\n2026-01-01T00:00:00.000Z\nToken\nt\nTopicArn\na\nType\nSubscriptionConfirmation\n"
                .to_owned())
        );
    }

    #[test]
    fn a_signature_version_1_notification_verifies() {
        let value = Sns::notification().signed_by(rsa_identity());
        assert_eq!(verify_value(&value), Ok(notification_envelope()));
    }

    #[test]
    fn a_signature_version_2_notification_verifies() {
        let value = Sns { version: "2", ..Sns::notification() }.signed_by(rsa_identity());
        assert_eq!(verify_value(&value), Ok(notification_envelope()));
    }

    #[test]
    fn a_sha1_signature_does_not_pass_as_version_2_nor_the_other_way_round() {
        let mut version_1 = Sns::notification().signed_by(rsa_identity());
        version_1["SignatureVersion"] = json!("2");
        let mut version_2 = Sns { version: "2", ..Sns::notification() }.signed_by(rsa_identity());
        version_2["SignatureVersion"] = json!("1");
        assert_eq!(verify_value(&version_1), Err(Refusal::BadSignature));
        assert_eq!(verify_value(&version_2), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_notification_with_a_subject_verifies_with_the_subject_signed() {
        let value = Sns { subject: Some("Amazon SES Email Event Notification"), ..Sns::notification() }
            .signed_by(rsa_identity());
        assert_eq!(verify_value(&value), Ok(notification_envelope()));
    }

    #[test]
    fn a_subject_removed_or_added_after_signing_is_refused() {
        let mut removed = Sns { subject: Some("Amazon SES Email Event Notification"), ..Sns::notification() }
            .signed_by(rsa_identity());
        removed.as_object_mut().unwrap().remove("Subject");
        let mut added = Sns::notification().signed_by(rsa_identity());
        added["Subject"] = json!("Added");
        assert_eq!(verify_value(&removed), Err(Refusal::BadSignature));
        assert_eq!(verify_value(&added), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_subscription_confirmation_verifies_and_yields_its_subscribe_url() {
        for version in ["1", "2"] {
            let value = Sns { version, ..Sns::confirmation("SubscriptionConfirmation") }.signed_by(rsa_identity());
            assert_eq!(
                verify_value(&value),
                Ok(SnsEnvelope {
                    kind: SnsType::SubscriptionConfirmation,
                    message_id: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b".to_owned(),
                    topic_arn: TOPIC.to_owned(),
                    message: "You have chosen to subscribe to the topic.".to_owned(),
                    subscribe_url: Some(Url::parse(SUBSCRIBE_URL).unwrap()),
                })
            );
        }
    }

    #[test]
    fn an_unsubscribe_confirmation_verifies() {
        let value = Sns::confirmation("UnsubscribeConfirmation").signed_by(rsa_identity());
        assert_eq!(verify_value(&value).map(|envelope| envelope.kind), Ok(SnsType::UnsubscribeConfirmation));
    }

    #[test]
    fn a_changed_sns_message_is_refused() {
        let mut value = Sns::notification().signed_by(rsa_identity());
        value["Message"] = json!(r#"{"notificationType":"Complaint"}"#);
        assert_eq!(verify_value(&value), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_changed_subscribe_url_is_refused() {
        let mut value = Sns::confirmation("SubscriptionConfirmation").signed_by(rsa_identity());
        value["SubscribeURL"] = json!("https://sns.eu-central-1.amazonaws.com/?Action=ConfirmSubscription&Token=other");
        assert_eq!(verify_value(&value), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_changed_sns_timestamp_is_refused() {
        let mut value = Sns::notification().signed_by(rsa_identity());
        value["Timestamp"] = json!(rfc3339(NOW - 1));
        assert_eq!(verify_value(&value), Err(Refusal::BadSignature));
    }

    #[test]
    fn an_sns_message_signed_under_another_certificate_is_refused() {
        let value = Sns::notification().signed_by(other_rsa_identity());
        assert_eq!(verify_value(&value), Err(Refusal::BadSignature));
    }

    #[test]
    fn a_der_certificate_verifies_as_well_as_pem() {
        let (_, pem) = parse_x509_pem(&rsa_identity().certificate_pem).unwrap();
        let body = serde_json::to_vec(&Sns::notification().signed_by(rsa_identity())).unwrap();
        assert_eq!(verify_sns(&body, &pem.contents, &topics(), NOW), Ok(notification_envelope()));
    }

    #[test]
    fn a_certificate_that_is_unreadable_or_not_rsa_is_refused() {
        let body = serde_json::to_vec(&Sns::notification().signed_by(rsa_identity())).unwrap();
        let ec = make_identity(&["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]);
        let private_key = &rsa_identity().key_pem;
        for certificate in [&b"not a certificate"[..], b"", private_key, &ec.certificate_pem] {
            assert_eq!(verify_sns(&body, certificate, &topics(), NOW), Err(Refusal::BadCertificate));
        }
    }

    #[test]
    fn an_sns_message_older_than_an_hour_is_stale() {
        let identity = rsa_identity();
        let at = |timestamp| verify_value(&Sns { timestamp, ..Sns::notification() }.signed_by(identity));
        assert_eq!(at(NOW - SNS_MAX_AGE), Ok(notification_envelope()));
        assert_eq!(at(NOW - SNS_MAX_AGE - 1), Err(Refusal::Stale));
    }

    #[test]
    fn an_sns_message_more_than_five_minutes_ahead_is_from_the_future() {
        let identity = rsa_identity();
        let at = |timestamp| verify_value(&Sns { timestamp, ..Sns::notification() }.signed_by(identity));
        assert_eq!(at(NOW + SNS_MAX_AHEAD), Ok(notification_envelope()));
        assert_eq!(at(NOW + SNS_MAX_AHEAD + 1), Err(Refusal::FromTheFuture));
    }

    #[test]
    fn an_sns_message_from_a_foreign_topic_is_refused() {
        let value = Sns { topic: "arn:aws:sns:eu-central-1:999999999999:ses-events", ..Sns::notification() }
            .signed_by(rsa_identity());
        assert_eq!(verify_value(&value), Err(Refusal::UnknownTopic));
        let body = serde_json::to_vec(&Sns::notification().signed_by(rsa_identity())).unwrap();
        assert_eq!(verify_sns(&body, &rsa_identity().certificate_pem, &[], NOW), Err(Refusal::UnknownTopic));
    }

    #[test]
    fn certificate_urls_on_sns_hosts_are_approved() {
        for url in [
            CERT_URL,
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
            "https://SNS.US-EAST-1.AMAZONAWS.COM/SimpleNotificationService-abc.pem",
        ] {
            let body = serde_json::to_vec(&json!({
                "Type": "Notification", "MessageId": "m", "TopicArn": TOPIC, "Message": "", "Timestamp": rfc3339(NOW),
                "SignatureVersion": "1", "Signature": "", "SigningCertURL": url,
            }))
            .unwrap();
            assert_eq!(sns_certificate_url(&body, &[TOPIC.to_owned()]), Ok(Url::parse(url).unwrap()), "{url}");
        }
    }

    #[test]
    fn a_topic_not_configured_is_refused_before_its_certificate_url_is_approved() {
        let body = serde_json::to_vec(&json!({
            "Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:eu-central-1:999999999999:other",
            "Message": "", "Timestamp": rfc3339(NOW), "SignatureVersion": "1", "Signature": "", "SigningCertURL": CERT_URL,
        }))
        .unwrap();
        assert_eq!(sns_certificate_url(&body, &[TOPIC.to_owned()]), Err(Refusal::UnknownTopic));
        assert_eq!(sns_certificate_url(&body, &[]), Err(Refusal::UnknownTopic));
    }

    #[test]
    fn certificate_urls_anywhere_else_are_refused() {
        for url in [
            "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-abc.pem",
            "https://user:pw@sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.amazonaws.com@evil.com/SimpleNotificationService-abc.pem",
            "https://sns.evil.com/SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.amazonaws.com.evil.com/SimpleNotificationService-abc.pem",
            "https://evil.com/sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.evil.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.evil.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://s3.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.amazonaws.com./SimpleNotificationService-abc.pem",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem.exe",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem?x=1",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem#x",
            "https://54.239.28.85/SimpleNotificationService-abc.pem",
            "file:///etc/passwd.pem",
            "not a url",
        ] {
            let body = serde_json::to_vec(&json!({
                "Type": "Notification", "MessageId": "m", "TopicArn": TOPIC, "Message": "", "Timestamp": rfc3339(NOW),
                "SignatureVersion": "1", "Signature": "", "SigningCertURL": url,
            }))
            .unwrap();
            assert_eq!(sns_certificate_url(&body, &[TOPIC.to_owned()]), Err(Refusal::BadCertificateUrl), "{url}");
        }
    }

    #[test]
    fn a_signed_message_with_a_foreign_certificate_url_is_refused_by_verify_too() {
        let value = Sns { cert_url: "https://sns.evil.com/SimpleNotificationService-abc.pem", ..Sns::notification() }
            .signed_by(rsa_identity());
        assert_eq!(verify_value(&value), Err(Refusal::BadCertificateUrl));
    }

    #[test]
    fn a_subscribe_url_that_is_not_https_on_an_sns_host_is_refused() {
        for subscribe_url in [
            "https://evil.com/?Action=ConfirmSubscription",
            "https://sns.us-east-1.amazonaws.com.evil.com/?Action=ConfirmSubscription",
            "http://sns.eu-central-1.amazonaws.com/?Action=ConfirmSubscription",
            "https://sns.eu-central-1.amazonaws.com:444/?Action=ConfirmSubscription",
            "https://u@sns.eu-central-1.amazonaws.com/?Action=ConfirmSubscription",
        ] {
            let value =
                Sns { subscribe_url, ..Sns::confirmation("SubscriptionConfirmation") }.signed_by(rsa_identity());
            assert_eq!(verify_value(&value), Err(Refusal::BadSubscribeUrl), "{subscribe_url}");
        }
    }

    #[test]
    fn an_sns_message_that_cannot_be_read_is_malformed() {
        let signed = Sns::notification().signed_by(rsa_identity());
        let confirmation = Sns::confirmation("SubscriptionConfirmation").signed_by(rsa_identity());
        let changed = |mut value: Value, name: &str, new: Value| {
            value[name] = new;
            value
        };
        let without = |mut value: Value, name: &str| {
            value.as_object_mut().unwrap().remove(name);
            value
        };
        let cases = [
            (json!("not an object"), "body"),
            (without(signed.clone(), "TopicArn"), "body"),
            (changed(signed.clone(), "Timestamp", json!(NOW)), "body"),
            (changed(signed.clone(), "Type", json!("Notice")), "Type"),
            (changed(signed.clone(), "SignatureVersion", json!("3")), "SignatureVersion"),
            (changed(signed.clone(), "Signature", json!("not base64!")), "Signature"),
            (changed(signed.clone(), "Timestamp", json!("yesterday")), "Timestamp"),
            (without(confirmation.clone(), "Token"), "Token"),
            (without(confirmation, "SubscribeURL"), "SubscribeURL"),
        ];
        for (value, part) in cases {
            assert_eq!(verify_value(&value), Err(Refusal::Malformed(part)), "{part}");
        }
        assert_eq!(sns_certificate_url(b"{}", &[TOPIC.to_owned()]), Err(Refusal::Malformed("body")));
    }
}
