//! Tokens and their stored hashes (SPEC §3).
//!
//! Confirm tokens: 32 random bytes from ring's `SystemRandom`, base64url (43 characters), minted
//! by the mail worker at the moment it sends; only their SHA-256 is stored
//! (`subscribers.confirm_hash`). Resending mints a new one, and the old one stops working.
//!
//! Removal tokens: 32 bytes, base64url (43 characters); only their SHA-256 is stored
//! (`subscribers.removal_hash`). Decision where SPEC §3 says "32 random bytes": the removal
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_tokens_are_43_random_characters() {
        let a = ConfirmToken::mint().unwrap();
        let b = ConfirmToken::mint().unwrap();
        assert_eq!(a.expose().len(), TOKEN_LEN);
        assert!(
            a.expose()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
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
