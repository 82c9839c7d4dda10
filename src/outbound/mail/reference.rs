//! `X-Signupd-Ref`: the sealed reference every mail about a subscriber carries (the confirmation
//! and the welcome mail; not the operator's test mail, which is about nobody), so that a bounce or
//! a complaint about it can be matched to what it was about without signupd keeping a table of what
//! it sent to whom, and without the address travelling anywhere signupd did not already send it.
//!
//! The reference names the list, the kind of mail, the subscriber row it was sent for (its
//! UUID, not the address) and the address's suppression key on every list
//! (`storage::suppressions::every_list_hash`): a hard bounce or a complaint is
//! a fact about the address, and the row may be gone by the time the report arrives (a pending
//! row expires), so the key is what still suppresses it then. Neither the recipient nor a relay
//! can read any of it, and none of it is the address.
//!
//! Sealed with ChaCha20-Poly1305 (ring's AEAD) under a key derived with HKDF-SHA256 from the hash
//! key, which is never rotated, so a reference in a mail sent years ago still opens; the token
//! signing secret rotates and would not do. Each reference has its own random 96-bit nonce: at a
//! signup service's volumes (far below 2³² mails under one key) a repeat is not a concern. The
//! header's name and the format version are bound as associated data, so a value lifted from
//! another header or a later format does not open. Anything that does not open — forged,
//! truncated, of another installation — is `None`: a mail-borne report acts only on a reference
//! that opens.
//!
//! Form: `v1.` followed by base64url (no padding) of nonce ‖ ciphertext ‖ tag. The plaintext is
//! the kind (one byte), the issue day (days since the Unix epoch, four bytes big-endian), the
//! subscriber id (16 bytes), the suppression key (32 bytes) and the list id (the rest): about
//! 130 characters in all.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};

use crate::clock::UnixSeconds;
use crate::config::secrets::Secret;
use crate::domain::ListId;

/// The header every mail carries.
pub const HEADER: &str = "X-Signupd-Ref";

/// The name the reference goes by where a relay echoes metadata rather than headers: Mailgun's
/// `X-Mailgun-Variables` and SendGrid's `X-SMTPAPI` unique args (both JSON).
pub const ECHO_KEY: &str = "signupd_ref";

/// Postmark's metadata key (header `X-PM-Metadata-signupd-ref`).
pub const POSTMARK_ECHO_KEY: &str = "signupd-ref";

const VERSION: &str = "v1.";
/// Binds a sealed value to this header and format.
const ASSOCIATED: &[u8] = b"X-Signupd-Ref v1";
const HKDF_SALT: &[u8] = b"signupd/reference/v1";
const SECONDS_PER_DAY: i64 = 86_400;
/// kind (1) + day (4) + subscriber id (16) + suppression key (32)
const FIXED_LEN: usize = 1 + 4 + 16 + 32;
/// Anything longer than a list id can be was not sealed here.
const MAX_LIST_ID_LEN: usize = ListId::MAX_LEN;

/// Which mail a reference came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    Confirmation,
    Welcome,
}

impl MailKind {
    fn to_byte(self) -> u8 {
        match self {
            Self::Confirmation => b'c',
            Self::Welcome => b'w',
        }
    }

    fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            b'c' => Some(Self::Confirmation),
            b'w' => Some(Self::Welcome),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirmation => "confirmation",
            Self::Welcome => "welcome",
        }
    }
}

/// What a reference says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub list_id: String,
    pub kind: MailKind,
    /// The row the mail was sent for.
    pub subscriber_id: uuid::Uuid,
    /// `storage::suppressions::every_list_hash(hash key, address)`, as its 32 bytes.
    pub suppression_key: [u8; 32],
    /// The day the mail was sealed, as days since the Unix epoch.
    pub issued_day: u32,
}

impl Reference {
    /// The suppression key in the form `storage::suppressions` stores (lowercase hex).
    pub fn suppression_hash(&self) -> String {
        hex::encode(self.suppression_key)
    }
}

/// The key references are sealed and opened with, derived once from the hash key.
pub struct ReferenceKey {
    key: LessSafeKey,
    rng: SystemRandom,
}

impl std::fmt::Debug for ReferenceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReferenceKey([redacted])")
    }
}

/// HKDF's output length for the AEAD key.
struct KeyLen;

impl hkdf::KeyType for KeyLen {
    fn len(&self) -> usize {
        CHACHA20_POLY1305.key_len()
    }
}

impl ReferenceKey {
    pub fn derive(hash_key: &Secret) -> Self {
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, HKDF_SALT).extract(hash_key.expose());
        let mut bytes = [0u8; 32];
        prk.expand(&[HEADER.as_bytes()], KeyLen)
            .and_then(|okm| okm.fill(&mut bytes))
            .expect("32 bytes is within HKDF-SHA256's output limit");
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, &bytes).expect("a ChaCha20-Poly1305 key is 32 bytes");
        Self { key: LessSafeKey::new(unbound), rng: SystemRandom::new() }
    }

    /// The header's value for a mail of `kind` on `list_id` about row `subscriber_id`, whose
    /// address has the every-list suppression hash `suppression_hash` (64 hex digits).
    pub fn seal(
        &self,
        list_id: &str,
        kind: MailKind,
        subscriber_id: uuid::Uuid,
        suppression_hash: &str,
        now: UnixSeconds,
    ) -> anyhow::Result<String> {
        let mut suppression_key = [0u8; 32];
        hex::decode_to_slice(suppression_hash, &mut suppression_key)
            .map_err(|_| anyhow::anyhow!("a suppression hash is 64 hex digits"))?;
        anyhow::ensure!(list_id.len() <= MAX_LIST_ID_LEN, "list id too long for a reference");
        let day = u32::try_from(now.div_euclid(SECONDS_PER_DAY)).unwrap_or(0);
        let mut sealed = vec![0u8; NONCE_LEN];
        self.rng.fill(&mut sealed).map_err(|_| anyhow::anyhow!("the system's random source failed"))?;
        let nonce = Nonce::try_assume_unique_for_key(&sealed).expect("NONCE_LEN bytes");
        let mut plain = Vec::with_capacity(FIXED_LEN + list_id.len() + CHACHA20_POLY1305.tag_len());
        plain.push(kind.to_byte());
        plain.extend_from_slice(&day.to_be_bytes());
        plain.extend_from_slice(subscriber_id.as_bytes());
        plain.extend_from_slice(&suppression_key);
        plain.extend_from_slice(list_id.as_bytes());
        self.key
            .seal_in_place_append_tag(nonce, Aad::from(ASSOCIATED), &mut plain)
            .map_err(|_| anyhow::anyhow!("sealing a reference failed"))?;
        sealed.extend_from_slice(&plain);
        Ok(format!("{VERSION}{}", URL_SAFE_NO_PAD.encode(&sealed)))
    }

    /// What `value` says, if this key sealed it; `None` for anything else. Surrounding
    /// whitespace (a folded header) is ignored.
    pub fn open(&self, value: &str) -> Option<Reference> {
        let encoded = value.trim().strip_prefix(VERSION)?;
        // The longest value `seal` writes, in base64 characters; anything longer is refused
        // before it is decoded.
        let longest = (NONCE_LEN + FIXED_LEN + MAX_LIST_ID_LEN + CHACHA20_POLY1305.tag_len()).div_ceil(3) * 4;
        if encoded.len() > longest {
            return None;
        }
        let mut sealed = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if sealed.len() < NONCE_LEN + FIXED_LEN + CHACHA20_POLY1305.tag_len() {
            return None;
        }
        let nonce = Nonce::try_assume_unique_for_key(&sealed[..NONCE_LEN]).ok()?;
        let plain = self.key.open_in_place(nonce, Aad::from(ASSOCIATED), &mut sealed[NONCE_LEN..]).ok()?;
        let kind = MailKind::from_byte(plain[0])?;
        let issued_day = u32::from_be_bytes(plain[1..5].try_into().ok()?);
        let subscriber_id = uuid::Uuid::from_slice(&plain[5..21]).ok()?;
        let suppression_key: [u8; 32] = plain[21..53].try_into().ok()?;
        let list_id = std::str::from_utf8(&plain[53..]).ok()?.to_owned();
        Some(Reference { list_id, kind, subscriber_id, suppression_key, issued_day })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> ReferenceKey {
        ReferenceKey::derive(&Secret::from_bytes(vec![byte; 32]))
    }

    const HASH: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const NOW: UnixSeconds = 1_780_000_000;

    fn sealed(key: &ReferenceKey) -> (String, uuid::Uuid) {
        let id = uuid::Uuid::now_v7();
        (key.seal("news", MailKind::Confirmation, id, HASH, NOW).unwrap(), id)
    }

    #[test]
    fn a_sealed_reference_opens_to_what_was_sealed() {
        let key = key(7);
        let (value, id) = sealed(&key);

        let opened = key.open(&value).expect("opens");

        assert_eq!(opened.list_id, "news");
        assert_eq!(opened.kind, MailKind::Confirmation);
        assert_eq!(opened.subscriber_id, id);
        assert_eq!(opened.suppression_hash(), HASH);
        assert_eq!(i64::from(opened.issued_day), NOW / 86_400);
        assert!(value.starts_with("v1.") && value.len() < 140, "{value}");
    }

    #[test]
    fn each_mail_kind_survives_the_round_trip_and_two_seals_of_the_same_differ() {
        let key = key(7);
        for kind in [MailKind::Confirmation, MailKind::Welcome] {
            let a = key.seal("a-list", kind, uuid::Uuid::nil(), HASH, NOW).unwrap();
            let b = key.seal("a-list", kind, uuid::Uuid::nil(), HASH, NOW).unwrap();
            assert_ne!(a, b, "a fresh nonce each time");
            assert_eq!(key.open(&a).unwrap().kind, kind);
            assert_eq!(key.open(&b).unwrap().kind, kind);
        }
    }

    #[test]
    fn a_folded_header_value_still_opens() {
        let key = key(7);
        let (value, _) = sealed(&key);
        assert!(key.open(&format!(" {value}\r\n")).is_some());
    }

    #[test]
    fn another_installations_key_opens_nothing() {
        let (value, _) = sealed(&key(7));
        assert_eq!(key(8).open(&value), None);
    }

    #[test]
    fn any_changed_character_opens_nothing() {
        let key = key(7);
        let (value, _) = sealed(&key);
        for at in 3..value.len() {
            let mut bytes = value.clone().into_bytes();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            assert_eq!(key.open(&changed), None, "changed at {at}");
        }
    }

    #[test]
    fn malformed_values_open_nothing() {
        let key = key(7);
        let (value, _) = sealed(&key);
        let body = value.strip_prefix("v1.").unwrap();
        for bad in [
            String::new(),
            "v1.".to_owned(),
            body.to_owned(),
            format!("v2.{body}"),
            format!("v1.{}", &body[..body.len() - 4]),
            format!("v1.{body}AAAA"),
            format!("v1.{}", "A".repeat(4000)),
            "v1.!!!!".to_owned(),
            "jane@example.com".to_owned(),
        ] {
            assert_eq!(key.open(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_bad_suppression_hash_or_a_long_list_id_is_refused_when_sealing() {
        let key = key(7);
        assert!(key.seal("news", MailKind::Welcome, uuid::Uuid::nil(), "xyz", NOW).is_err());
        assert!(key.seal(&"l".repeat(65), MailKind::Welcome, uuid::Uuid::nil(), HASH, NOW).is_err());
        assert!(key.seal(&"l".repeat(64), MailKind::Welcome, uuid::Uuid::nil(), HASH, NOW).is_ok());
    }

    #[test]
    fn the_value_holds_no_part_of_what_it_names_in_the_clear() {
        let key = key(7);
        let (value, id) = sealed(&key);
        assert!(
            !value.contains("news") && !value.contains(&HASH[..8]) && !value.contains(&id.simple().to_string()[..8])
        );
    }
}
