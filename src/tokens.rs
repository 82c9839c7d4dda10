//! Tokens and their stored hashes.
//!
//! Confirm tokens: 32 random bytes from ring's `SystemRandom`, base64url (43 characters), minted
//! by the mail worker at the moment it sends; only their SHA-256 is stored
//! (`subscribers.confirm_hash`). Resending mints a new one, and the old one stops working.
//!
//! Unsubscribe tokens: stateless and signed, never expiring: six base64url parts joined by `.`
//! — version, key id, purpose `unsub`, list id, subscriber id (never the address), issued-at —
//! then the HMAC-SHA256 of those parts under the signing secret. The purpose is signed, so no
//! token works for another purpose. Verification tries the key named by the key id among the
//! signing secret and the verify-only secrets ([`Keyring`]), so rotating the signing secret keeps
//! every link already sent working while the old secret stays in the verify list. Signature
//! checks are constant-time (`ring::hmac::verify`).
//!
//! A malformed token (wrong length, alphabet or structure) is rejected by [`TokenForm::parse`]
//! before any database access.
//!
//! Removal tokens: 32 bytes, base64url (43 characters); only their SHA-256 is stored
//! (`subscribers.removal_hash`). Decision on "32 random bytes" per token: the removal
//! token is HMAC-SHA256(hash key, "signupd/removal/v1" ‖ subscriber id) — pseudo-random and
//! unguessable without the hash key, but *re-derivable*. Every confirmation mail, including
//! resends and retries after an SMTP outage, must carry the manage link, and the mail is sent
//! after the request was answered; a truly random token would have to sit in the queue in the
//! clear between the two. Deriving it keeps the queue free of tokens and the stored value a
//! one-way hash. The hash key is never rotated, so a removal link keeps working for the life of
//! its row.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac};

use crate::config::REDACTED;
use crate::secrets::Secret;

/// SHA-256 of `bytes`, lowercase hex: the form in which tokens are stored.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(digest::digest(&digest::SHA256, bytes).as_ref())
}

/// The length of a confirm or removal token in characters (32 bytes, base64url, no padding).
pub const TOKEN_LEN: usize = 43;

/// The capability to confirm one pending row, for one link lifetime.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfirmToken(String);

impl ConfirmToken {
    pub fn mint() -> anyhow::Result<Self> {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| anyhow::anyhow!("the system random number generator failed"))?;
        Ok(Self(URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// What `subscribers.confirm_hash` stores.
    pub fn hash(&self) -> String {
        sha256_hex(self.0.as_bytes())
    }

    /// The raw token, for the link in the mail and nowhere else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ConfirmToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConfirmToken({REDACTED})")
    }
}

/// The capability to remove one subscriber row.
#[derive(Clone, PartialEq, Eq)]
pub struct RemovalToken(String);

impl RemovalToken {
    pub fn derive(hash_key: &Secret, subscriber_id: &str) -> Self {
        let key = hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose());
        let tag = hmac::sign(&key, format!("signupd/removal/v1\n{subscriber_id}").as_bytes());
        Self(URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    /// What `subscribers.removal_hash` stores.
    pub fn hash(&self) -> String {
        sha256_hex(self.0.as_bytes())
    }

    /// The raw token, for a link in a mail and nowhere else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RemovalToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemovalToken({REDACTED})")
    }
}

/// What a token string looks like, decided without any database access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenForm {
    /// 43 base64url characters: a confirm or removal token; only a hash lookup tells which.
    Opaque(String),
    /// A signed unsubscribe token whose signature verified.
    Unsubscribe(UnsubscribeClaims),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed or invalid token")]
pub struct BadToken;

impl TokenForm {
    pub fn parse(token: &str, keyring: &Keyring) -> Result<Self, BadToken> {
        if is_opaque(token) {
            return Ok(Self::Opaque(token.to_owned()));
        }
        keyring.verify_unsubscribe(token).map(Self::Unsubscribe)
    }
}

/// 43 characters of the base64url alphabet: the shape of confirm and removal tokens.
pub fn is_opaque(token: &str) -> bool {
    token.len() == TOKEN_LEN && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What a verified unsubscribe token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsubscribeClaims {
    pub list_id: String,
    pub subscriber_id: String,
    pub issued_at: i64,
}

const UNSUBSCRIBE_VERSION: &str = "1";
const UNSUBSCRIBE_PURPOSE: &str = "unsub";
/// Longer tokens are refused unread.
const MAX_SIGNED_TOKEN_LEN: usize = 512;

/// The signing secret and the verify-only secrets, each with its key id (the first 8 hex digits
/// of its SHA-256, so a token says which key signed it without revealing the key).
pub struct Keyring {
    signing: (String, hmac::Key),
    verify_only: Vec<(String, hmac::Key)>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("signing_key_id", &self.signing.0)
            .field("verify_only_key_ids", &self.verify_only.iter().map(|(id, _)| id).collect::<Vec<_>>())
            .finish()
    }
}

impl Keyring {
    pub fn new(signing: &Secret, verify_only: &[Secret]) -> Self {
        let entry = |secret: &Secret| (key_id(secret), hmac::Key::new(hmac::HMAC_SHA256, secret.expose()));
        Self { signing: entry(signing), verify_only: verify_only.iter().map(entry).collect() }
    }

    pub fn sign_unsubscribe(&self, list_id: &str, subscriber_id: &str, issued_at: i64) -> String {
        let (key_id, key) = &self.signing;
        let parts = [UNSUBSCRIBE_VERSION, key_id, UNSUBSCRIBE_PURPOSE, list_id, subscriber_id, &issued_at.to_string()];
        let body = parts.iter().map(|part| URL_SAFE_NO_PAD.encode(part.as_bytes())).collect::<Vec<_>>().join(".");
        let signature = hmac::sign(key, body.as_bytes());
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    pub fn verify_unsubscribe(&self, token: &str) -> Result<UnsubscribeClaims, BadToken> {
        if token.len() > MAX_SIGNED_TOKEN_LEN {
            return Err(BadToken);
        }
        let (body, signature) = token.rsplit_once('.').ok_or(BadToken)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| BadToken)?;
        let parts: Vec<String> = body
            .split('.')
            .map(|part| URL_SAFE_NO_PAD.decode(part).ok().and_then(|bytes| String::from_utf8(bytes).ok()))
            .collect::<Option<_>>()
            .ok_or(BadToken)?;
        let [version, key_id, purpose, list_id, subscriber_id, issued_at] = parts.as_slice() else {
            return Err(BadToken);
        };
        if version != UNSUBSCRIBE_VERSION || purpose != UNSUBSCRIBE_PURPOSE {
            return Err(BadToken);
        }
        let key = std::iter::once(&self.signing)
            .chain(&self.verify_only)
            .find(|(id, _)| id == key_id)
            .map(|(_, key)| key)
            .ok_or(BadToken)?;
        hmac::verify(key, body.as_bytes(), &signature).map_err(|_| BadToken)?;
        Ok(UnsubscribeClaims {
            list_id: list_id.clone(),
            subscriber_id: subscriber_id.clone(),
            issued_at: issued_at.parse().map_err(|_| BadToken)?,
        })
    }
}

fn key_id(secret: &Secret) -> String {
    sha256_hex(secret.expose())[..8].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyring(secret: u8, old: &[u8]) -> Keyring {
        let old: Vec<Secret> = old.iter().map(|b| Secret::from_bytes(vec![*b; 32])).collect();
        Keyring::new(&Secret::from_bytes(vec![secret; 32]), &old)
    }

    #[test]
    fn unsubscribe_tokens_round_trip_and_reject_tampering() {
        let ring = keyring(1, &[]);
        let token = ring.sign_unsubscribe("news", "row-1", 1_700_000_000);
        let claims = ring.verify_unsubscribe(&token).unwrap();
        assert_eq!(
            claims,
            UnsubscribeClaims { list_id: "news".into(), subscriber_id: "row-1".into(), issued_at: 1_700_000_000 }
        );
        assert!(matches!(TokenForm::parse(&token, &ring), Ok(TokenForm::Unsubscribe(_))));

        // A payload part swapped for another list, with the old signature.
        let mut parts: Vec<&str> = token.split('.').collect();
        let other_list = URL_SAFE_NO_PAD.encode("other");
        parts[3] = &other_list;
        assert_eq!(ring.verify_unsubscribe(&parts.join(".")), Err(BadToken));
        // A flipped signature character.
        let mut tampered = token.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert_eq!(ring.verify_unsubscribe(&tampered), Err(BadToken));
        assert_eq!(ring.verify_unsubscribe("a.b.c"), Err(BadToken));
        assert_eq!(ring.verify_unsubscribe(&"x".repeat(600)), Err(BadToken));
    }

    #[test]
    fn rotation_keeps_old_links_while_the_old_secret_is_listed() {
        let before = keyring(1, &[]);
        let token = before.sign_unsubscribe("news", "row-1", 0);
        assert!(keyring(2, &[1]).verify_unsubscribe(&token).is_ok(), "old secret in the verify list");
        assert_eq!(keyring(2, &[]).verify_unsubscribe(&token), Err(BadToken), "old secret dropped");
    }

    #[test]
    fn opaque_tokens_need_exactly_43_base64url_characters() {
        let ring = keyring(1, &[]);
        let good = "a".repeat(43);
        assert_eq!(TokenForm::parse(&good, &ring), Ok(TokenForm::Opaque(good.clone())));
        for bad in ["a".repeat(42), "a".repeat(44), format!("{}+", "a".repeat(42)), "' OR 1=1 --".into(), String::new()]
        {
            assert_eq!(TokenForm::parse(&bad, &ring), Err(BadToken), "{bad:?}");
        }
    }

    #[test]
    fn confirm_tokens_are_43_random_characters() {
        let a = ConfirmToken::mint().unwrap();
        let b = ConfirmToken::mint().unwrap();
        assert_eq!(a.expose().len(), TOKEN_LEN);
        assert!(a.expose().bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a, b);
        assert_eq!(a.hash(), sha256_hex(a.expose().as_bytes()));
        assert!(!format!("{a:?}").contains(a.expose()));
    }

    #[test]
    fn removal_tokens_are_43_characters_stable_and_distinct() {
        let key = Secret::from_bytes(vec![1; 32]);
        let a = RemovalToken::derive(&key, "row-a");
        assert_eq!(a.expose().len(), 43);
        assert_eq!(a, RemovalToken::derive(&key, "row-a"));
        assert_ne!(a, RemovalToken::derive(&key, "row-b"));
        assert_ne!(a, RemovalToken::derive(&Secret::from_bytes(vec![2; 32]), "row-a"));
        assert_eq!(a.hash().len(), 64);
        assert_ne!(a.hash(), a.expose());
        assert_eq!(format!("{a:?}"), "RemovalToken([redacted])");
    }
}
