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
//! Send tokens (surge mode, `crate::web::routes` `send`): the same signed form with purpose `send`,
//! naming the list and the signup's random send id (never the address). Their age is judged
//! against `confirm_ttl` by the route.
//!
//! A malformed token (wrong length, alphabet or structure) is rejected by [`TokenForm::parse`]
//! before any database access.
//!
//! Removal tokens: `<subscriber id>.<secret>`. The secret is 32 bytes, base64url (43
//! characters); only its SHA-256 is stored (`subscribers.removal_hash`). Decision on "32 random
//! bytes" per token: the secret is HMAC-SHA256(hash key, "signupd/removal/v1\n" ‖ subscriber id)
//! — pseudo-random and unguessable without the hash key, but *re-derivable*. Every confirmation
//! mail, including resends and retries after an SMTP outage, must carry the manage link, and the
//! mail is sent after the request was answered; a truly random token would have to sit in the
//! queue in the clear between the two. Deriving it keeps the queue free of tokens and the stored
//! value a one-way hash. The hash key is never rotated, so a removal link keeps working for the
//! life of its row.
//!
//! Why the id is in the token: a token that is only a secret can be found only through an index
//! on its hash, and every new row then inserts a random key into that index — a dirty random
//! page per signup, a measured write bottleneck. With the time-ordered id (UUIDv7) in the token,
//! the row is found through the primary key, and the stored value of a row created now is
//! `v2:<id>:<SHA-256 hex of the secret>` ([`RemovalToken::removal_hash`]). The column keeps its
//! `UNIQUE` constraint (dropping an inline one would mean rebuilding the table), but since the id
//! is time-ordered and `v` sorts after every hex digit, each new entry lands at the right-hand end
//! of that index, on a page that is already hot. The stored value is compared with the expected
//! one in constant time ([`PresentedRemoval::matches`]). Before any database access the id must
//! be a canonical UUID (36 characters, lowercase, hyphenated) and the secret 43 base64url
//! characters; anything else is malformed like any other malformed token.
//!
//! Rows created before keep their bare 64-hex `removal_hash`, and links mailed before keep working:
//! the secret is the same derivation the whole 43-character token used to be, so a 43-character
//! removal token is still found by `removal_hash = SHA-256(token)` — which only ever matches such
//! older rows — and the new form `<id>.<secret>` works for older rows too (their stored value is
//! the bare hash of the same secret). Every mail sent from now on carries the new form.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac};

use crate::config::REDACTED;
use crate::config::secrets::Secret;

/// SHA-256 of `bytes`, lowercase hex: the form in which tokens are stored.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(digest::digest(&digest::SHA256, bytes).as_ref())
}

/// The length of a confirm token and of a removal token's secret, in characters (32 bytes,
/// base64url, no padding). A removal token mailed before removal tokens carried their row's id
/// was its secret alone.
pub const TOKEN_LEN: usize = 43;

/// The length of a subscriber id as it appears in a removal token: a canonical UUID.
pub const SUBSCRIBER_ID_LEN: usize = 36;

/// What begins the stored value of a removal token of a row created since removal tokens carry
/// their row's id. `v` sorts after every hex digit, so these values sort after every bare hash.
const REMOVAL_HASH_V2_PREFIX: &str = "v2:";

/// The SHA-256 (hex) of a confirm token: what `subscribers.confirm_hash` stores, and the only
/// form in which a presented token travels to the writer.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenHash(String);

impl TokenHash {
    pub fn of(token: &str) -> Self {
        Self(sha256_hex(token.as_bytes()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenHash({REDACTED})")
    }
}

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

/// The capability to remove one subscriber row: `<subscriber id>.<secret>`.
#[derive(Clone, PartialEq, Eq)]
pub struct RemovalToken {
    subscriber_id: String,
    secret: String,
    /// `<subscriber id>.<secret>`, kept whole so that [`Self::expose`] can lend it.
    token: String,
}

impl RemovalToken {
    pub fn derive(hash_key: &Secret, subscriber_id: &str) -> Self {
        let key = hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose());
        let tag = hmac::sign(&key, format!("signupd/removal/v1\n{subscriber_id}").as_bytes());
        let secret = URL_SAFE_NO_PAD.encode(tag.as_ref());
        let token = format!("{subscriber_id}.{secret}");
        Self { subscriber_id: subscriber_id.to_owned(), secret, token }
    }

    /// The row this token removes.
    pub fn subscriber_id(&self) -> &str {
        &self.subscriber_id
    }

    /// What `subscribers.removal_hash` stores for a row created now: `v2:<id>:<SHA-256 hex of the
    /// secret>` (see the module documentation for why).
    pub fn removal_hash(&self) -> String {
        current_removal_hash(&self.subscriber_id, &sha256_hex(self.secret.as_bytes()))
    }

    /// The raw token, `<subscriber id>.<secret>`, for a link in a mail and nowhere else.
    pub fn expose(&self) -> &str {
        &self.token
    }
}

impl fmt::Debug for RemovalToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemovalToken({REDACTED})")
    }
}

fn current_removal_hash(subscriber_id: &str, secret_hash: &str) -> String {
    format!("{REMOVAL_HASH_V2_PREFIX}{subscriber_id}:{secret_hash}")
}

/// A removal token `<subscriber id>.<secret>` as presented in a link: its shape is checked, its
/// secret not yet.
#[derive(Clone, PartialEq, Eq)]
pub struct PresentedRemoval {
    subscriber_id: String,
    secret: String,
}

impl PresentedRemoval {
    /// `token` split into a canonical UUID, one `.` and 43 base64url characters; `None` for any
    /// other shape.
    pub fn parse(token: &str) -> Option<Self> {
        let (subscriber_id, secret) = token.split_once('.')?;
        (is_canonical_uuid(subscriber_id) && is_opaque(secret))
            .then(|| Self { subscriber_id: subscriber_id.to_owned(), secret: secret.to_owned() })
    }

    /// The row the token names; whether it may remove it is for [`Self::matches`] to say.
    pub fn subscriber_id(&self) -> &str {
        &self.subscriber_id
    }

    /// Whether `stored`, the `removal_hash` of the row this token names, is what the token's
    /// secret hashes to: `v2:<id>:<hash>` for a row created since tokens carry the id, or the bare
    /// `<hash>` for an older row. Both comparisons run, in constant time.
    pub fn matches(&self, stored: &str) -> bool {
        let secret_hash = sha256_hex(self.secret.as_bytes());
        let current = current_removal_hash(&self.subscriber_id, &secret_hash);
        equal_in_constant_time(stored.as_bytes(), current.as_bytes())
            | equal_in_constant_time(stored.as_bytes(), secret_hash.as_bytes())
    }
}

impl fmt::Debug for PresentedRemoval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PresentedRemoval({REDACTED})")
    }
}

/// Whether `a` and `b` are equal, without returning earlier the sooner they differ. ring offers a
/// constant-time comparison only inside `hmac::verify` (its `constant_time` module is deprecated
/// and internal), so `a` is MACed and the tag verified against `b`. The key need not be secret:
/// it does not make the comparison constant-time, `hmac::verify` does.
fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"signupd/constant-time-comparison/v1");
    hmac::verify(&key, b, hmac::sign(&key, a).as_ref()).is_ok()
}

/// What a token string looks like, decided without any database access. Its `Debug` names the
/// form and never the raw token.
#[derive(Clone, PartialEq, Eq)]
pub enum TokenForm {
    /// 43 base64url characters: a confirm token, or a removal token mailed before removal tokens
    /// carried their row's id; only a hash lookup tells which.
    Opaque(String),
    /// `<subscriber id>.<secret>`: a removal token, looked up by its row's id.
    Removal(PresentedRemoval),
    /// A signed unsubscribe token whose signature verified.
    Unsubscribe(UnsubscribeClaims),
}

impl fmt::Debug for TokenForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Opaque(_) => write!(f, "Opaque({REDACTED})"),
            Self::Removal(removal) => f.debug_tuple("Removal").field(removal).finish(),
            Self::Unsubscribe(claims) => f.debug_tuple("Unsubscribe").field(claims).finish(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed or invalid token")]
pub struct BadToken;

impl TokenForm {
    pub fn parse(token: &str, keyring: &Keyring) -> Result<Self, BadToken> {
        if is_opaque(token) {
            return Ok(Self::Opaque(token.to_owned()));
        }
        if let Some(removal) = PresentedRemoval::parse(token) {
            return Ok(Self::Removal(removal));
        }
        keyring.verify_unsubscribe(token).map(Self::Unsubscribe)
    }
}

/// 43 characters of the base64url alphabet: the shape of confirm tokens and of removal secrets.
pub fn is_opaque(token: &str) -> bool {
    token.len() == TOKEN_LEN && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The shape of a subscriber id in a removal token: a UUID as `uuid` writes it, 36 characters of
/// lowercase hex with hyphens after the 8th, 12th, 16th and 20th digit.
fn is_canonical_uuid(text: &str) -> bool {
    const HYPHENS_AT: [usize; 4] = [8, 13, 18, 23];
    text.len() == SUBSCRIBER_ID_LEN
        && text.bytes().enumerate().all(|(at, b)| {
            if HYPHENS_AT.contains(&at) { b == b'-' } else { b.is_ascii_digit() || (b'a'..=b'f').contains(&b) }
        })
}

/// What a verified unsubscribe token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsubscribeClaims {
    pub list_id: String,
    pub subscriber_id: String,
    pub issued_at: i64,
}

/// What a verified send token names: the list and the signup (`send_id`), never the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendClaims {
    pub list_id: String,
    pub send_id: i64,
    pub issued_at: i64,
}

/// A fresh, random, positive send id for a signup recorded in surge mode.
pub fn new_send_id() -> anyhow::Result<i64> {
    let mut bytes = [0u8; 8];
    SystemRandom::new().fill(&mut bytes).map_err(|_| anyhow::anyhow!("no randomness for a send id"))?;
    Ok(i64::from_be_bytes(bytes) & i64::MAX)
}

const SIGNED_VERSION: &str = "1";
const UNSUBSCRIBE_PURPOSE: &str = "unsub";
const SEND_PURPOSE: &str = "send";
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
        self.sign(UNSUBSCRIBE_PURPOSE, list_id, subscriber_id, issued_at)
    }

    pub fn verify_unsubscribe(&self, token: &str) -> Result<UnsubscribeClaims, BadToken> {
        let (list_id, subscriber_id, issued_at) = self.verify(token, UNSUBSCRIBE_PURPOSE)?;
        Ok(UnsubscribeClaims { list_id, subscriber_id, issued_at })
    }

    /// A send token (surge mode): names the list and the signup's `send_id`, never the address.
    pub fn sign_send(&self, list_id: &str, send_id: i64, issued_at: i64) -> String {
        self.sign(SEND_PURPOSE, list_id, &send_id.to_string(), issued_at)
    }

    /// A send token's claims, if it is well formed and signed by a key of the ring. Its age is
    /// for the caller to judge.
    pub fn verify_send(&self, token: &str) -> Result<SendClaims, BadToken> {
        let (list_id, send_id, issued_at) = self.verify(token, SEND_PURPOSE)?;
        Ok(SendClaims { list_id, send_id: send_id.parse().map_err(|_| BadToken)?, issued_at })
    }

    fn sign(&self, purpose: &str, list_id: &str, subject: &str, issued_at: i64) -> String {
        let (key_id, key) = &self.signing;
        let parts = [SIGNED_VERSION, key_id, purpose, list_id, subject, &issued_at.to_string()];
        let body = parts.iter().map(|part| URL_SAFE_NO_PAD.encode(part.as_bytes())).collect::<Vec<_>>().join(".");
        let signature = hmac::sign(key, body.as_bytes());
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    /// The list id, subject and issue time of a token of `purpose`.
    fn verify(&self, token: &str, expected_purpose: &str) -> Result<(String, String, i64), BadToken> {
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
        let [version, key_id, purpose, list_id, subject, issued_at] = parts.as_slice() else {
            return Err(BadToken);
        };
        if version != SIGNED_VERSION || purpose != expected_purpose {
            return Err(BadToken);
        }
        let key = std::iter::once(&self.signing)
            .chain(&self.verify_only)
            .find(|(id, _)| id == key_id)
            .map(|(_, key)| key)
            .ok_or(BadToken)?;
        hmac::verify(key, body.as_bytes(), &signature).map_err(|_| BadToken)?;
        Ok((list_id.clone(), subject.clone(), issued_at.parse().map_err(|_| BadToken)?))
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
    fn a_token_form_never_shows_its_raw_token_in_debug() {
        let raw = "A".repeat(TOKEN_LEN);
        let keyring = Keyring::new(&Secret::from_bytes(vec![3; 32]), &[]);
        let form = TokenForm::parse(&raw, &keyring).unwrap();
        assert!(!format!("{form:?}").contains(&raw), "{form:?}");
    }

    /// Two canonical UUIDv7 ids, the second created a millisecond after the first.
    const EARLIER_ID: &str = "019b7a3c-8e40-7a1b-9c2d-3e4f5a6b7c8d";
    const LATER_ID: &str = "019b7a3c-8e41-7000-8000-000000000000";

    /// The secret the way every removal token was made before tokens carried the id, computed
    /// here independently of [`RemovalToken`].
    fn old_derivation(key: &Secret, subscriber_id: &str) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, key.expose());
        URL_SAFE_NO_PAD.encode(hmac::sign(&key, format!("signupd/removal/v1\n{subscriber_id}").as_bytes()))
    }

    fn presented(token: &RemovalToken) -> PresentedRemoval {
        PresentedRemoval::parse(token.expose()).unwrap()
    }

    #[test]
    fn removal_tokens_carry_the_row_id_beside_the_old_secret_and_are_stable_and_distinct() {
        let key = Secret::from_bytes(vec![1; 32]);
        let a = RemovalToken::derive(&key, EARLIER_ID);
        let secret = old_derivation(&key, EARLIER_ID);
        assert_eq!(a.expose(), format!("{EARLIER_ID}.{secret}"));
        assert_eq!(a.subscriber_id(), EARLIER_ID);
        assert_eq!(secret.len(), TOKEN_LEN);
        assert_eq!(a, RemovalToken::derive(&key, EARLIER_ID));
        assert_ne!(a, RemovalToken::derive(&key, LATER_ID));
        assert_ne!(a, RemovalToken::derive(&Secret::from_bytes(vec![2; 32]), EARLIER_ID));
        assert_eq!(a.removal_hash(), format!("v2:{EARLIER_ID}:{}", sha256_hex(secret.as_bytes())));
        assert!(!a.removal_hash().contains(&secret));
        assert_eq!(format!("{a:?}"), "RemovalToken([redacted])");
        assert_eq!(format!("{:?}", presented(&a)), "PresentedRemoval([redacted])");
    }

    #[test]
    fn a_removal_token_in_the_new_form_parses_to_its_row_id() {
        let ring = keyring(1, &[]);
        let token = RemovalToken::derive(&Secret::from_bytes(vec![1; 32]), EARLIER_ID);
        let Ok(TokenForm::Removal(removal)) = TokenForm::parse(token.expose(), &ring) else {
            panic!("the new form is a removal token");
        };
        assert_eq!(removal.subscriber_id(), EARLIER_ID);
        let by_hand = format!("{LATER_ID}.{}", "A".repeat(43));
        assert!(
            matches!(TokenForm::parse(&by_hand, &ring), Ok(TokenForm::Removal(r)) if r.subscriber_id() == LATER_ID)
        );
        // Its secret alone is the 43-character form mailed before.
        let (_, secret) = token.expose().split_once('.').unwrap();
        assert_eq!(TokenForm::parse(secret, &ring), Ok(TokenForm::Opaque(secret.to_owned())));
    }

    #[test]
    fn a_removal_token_with_a_wrong_id_shape_is_malformed() {
        let ring = keyring(1, &[]);
        let secret = "A".repeat(43);
        let cases = [
            ("upper case", "019B7A3C-8E40-7A1B-9C2D-3E4F5A6B7C8D".to_owned()),
            ("no hyphens", "019b7a3c8e407a1b9c2d3e4f5a6b7c8d".to_owned()),
            ("hyphens moved", "019b7a3c8-e40-7a1b-9c2d-3e4f5a6b7c8d".to_owned()),
            ("35 characters", EARLIER_ID[..35].to_owned()),
            ("37 characters", format!("{EARLIER_ID}0")),
            ("not hex", "019b7a3c-8e40-7a1b-9c2d-3e4f5a6b7c8g".to_owned()),
            ("braces", format!("{{{}}}", &EARLIER_ID[1..35])),
            ("URN", format!("urn:uuid:{EARLIER_ID}")),
            ("SQL", format!("{:<36}", "' OR '1'='1")),
            ("empty", String::new()),
        ];
        for (case, id) in cases {
            assert_eq!(TokenForm::parse(&format!("{id}.{secret}"), &ring), Err(BadToken), "{case}: {id:?}");
            assert_eq!(PresentedRemoval::parse(&format!("{id}.{secret}")), None, "{case}");
        }
    }

    #[test]
    fn a_removal_token_with_a_wrong_secret_or_extra_dots_is_malformed() {
        let ring = keyring(1, &[]);
        let a = "a".repeat(42);
        let cases = [
            ("42 characters", a.clone()),
            ("44 characters", format!("{a}aa")),
            ("a '+' (base64, not base64url)", format!("{a}+")),
            ("a '/' (base64, not base64url)", format!("{a}/")),
            ("padding", format!("{a}=")),
            ("a space", format!("{a} ")),
            ("empty", String::new()),
            ("an extra dot inside", format!("{}.{}", &a[..21], &a[..21])),
            ("an extra dot at the end", format!("{a}a.")),
            ("an extra part", format!("{a}a.{a}a")),
            ("a dot first", format!(".{a}a")),
        ];
        for (case, secret) in cases {
            let token = format!("{EARLIER_ID}.{secret}");
            assert_eq!(TokenForm::parse(&token, &ring), Err(BadToken), "{case}: {token:?}");
        }
        for (case, token) in [
            ("a dot before the id", format!(".{EARLIER_ID}.{}", "a".repeat(43))),
            ("no dot", format!("{EARLIER_ID}{}", "a".repeat(43))),
            ("the parts swapped", format!("{}.{EARLIER_ID}", "a".repeat(43))),
            ("only a dot", ".".to_owned()),
        ] {
            assert_eq!(TokenForm::parse(&token, &ring), Err(BadToken), "{case}: {token:?}");
        }
    }

    #[test]
    fn a_removal_token_matches_its_rows_stored_value_in_either_form_and_nothing_else() {
        let key = Secret::from_bytes(vec![1; 32]);
        let token = RemovalToken::derive(&key, EARLIER_ID);
        let other = RemovalToken::derive(&key, LATER_ID);
        let secret_hash = sha256_hex(old_derivation(&key, EARLIER_ID).as_bytes());

        assert!(presented(&token).matches(&token.removal_hash()), "a row created now");
        assert!(presented(&token).matches(&secret_hash), "a row created before: the bare hash of the same secret");

        let forged = PresentedRemoval::parse(&format!("{EARLIER_ID}.{}", "A".repeat(43))).unwrap();
        let swapped =
            PresentedRemoval::parse(&format!("{EARLIER_ID}.{}", other.expose().split_once('.').unwrap().1)).unwrap();
        for (case, removal, stored) in [
            ("another row's stored value", presented(&token), other.removal_hash()),
            (
                "another row's older stored value",
                presented(&token),
                sha256_hex(old_derivation(&key, LATER_ID).as_bytes()),
            ),
            ("a forged secret", forged.clone(), token.removal_hash()),
            ("a forged secret, an older row", forged, secret_hash.clone()),
            ("another row's secret under this id", swapped.clone(), token.removal_hash()),
            ("another row's secret under this id, its stored value", swapped, other.removal_hash()),
            ("upper-case hex", presented(&token), secret_hash.to_uppercase()),
            ("the stored value with the other id", presented(&token), format!("v2:{LATER_ID}:{secret_hash}")),
            ("a stored value without the version", presented(&token), format!("{EARLIER_ID}:{secret_hash}")),
            ("empty", presented(&token), String::new()),
        ] {
            assert!(!removal.matches(&stored), "{case}");
        }
    }

    #[test]
    fn stored_values_of_new_rows_sort_after_every_bare_hash_and_in_the_order_of_their_ids() {
        let key = Secret::from_bytes(vec![1; 32]);
        let earlier = RemovalToken::derive(&key, EARLIER_ID).removal_hash();
        let later = RemovalToken::derive(&key, LATER_ID).removal_hash();
        let highest_bare_hash = "f".repeat(64);
        assert!(earlier > highest_bare_hash, "{earlier} sorts after every 64-hex value");
        assert!(later > earlier, "a later row's value lands after an earlier one's, whatever its secret");
        for _ in 0..100 {
            let a = uuid::Uuid::now_v7().to_string();
            let b = uuid::Uuid::now_v7().to_string();
            assert!(
                RemovalToken::derive(&key, &b).removal_hash() > RemovalToken::derive(&key, &a).removal_hash(),
                "ids made one after the other"
            );
            assert!(
                PresentedRemoval::parse(RemovalToken::derive(&key, &a).expose()).is_some(),
                "uuid writes the canonical form"
            );
        }
    }
}
