//! Tokens and their stored hashes (SPEC §3).
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
use ring::{digest, hmac};

use crate::config::REDACTED;
use crate::secrets::Secret;

/// SHA-256 of `bytes`, lowercase hex: the form in which tokens are stored.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(digest::digest(&digest::SHA256, bytes).as_ref())
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
