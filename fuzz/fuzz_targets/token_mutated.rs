//! The three token formats, minted and derived by signupd's own code, then mutated: every valid
//! token must be accepted for what it is, and every changed one refused.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use signupd::config::secrets::Secret;
use signupd::config::tokens::{
    ConfirmToken, Keyring, PresentedRemoval, RemovalToken, TOKEN_LEN, TokenForm, UnsubscribeClaims, is_opaque,
};

/// The longest signed token `verify_unsubscribe` reads.
const MAX_SIGNED_TOKEN_LEN: usize = 512;

#[derive(Debug, Arbitrary)]
enum Mutation {
    None,
    SetByte {
        at: usize,
        byte: u8,
    },
    Insert {
        at: usize,
        text: String,
    },
    Remove {
        at: usize,
        len: u8,
    },
    Truncate {
        at: usize,
    },
    /// Swaps two dot-separated parts.
    SwapParts {
        a: u8,
        b: u8,
    },
    /// Replaces one dot-separated part with other text.
    ReplacePart {
        part: u8,
        text: String,
    },
    Append {
        text: String,
    },
}

#[derive(Debug, Arbitrary)]
struct Input {
    list_id: String,
    subscriber_id: String,
    issued_at: i64,
    /// The id of the row a removal token is derived for, as a UUID.
    row_id: u128,
    /// Which keyring signs: the current one, or the one before a rotation.
    old_signer: bool,
    mutation: Mutation,
}

struct Keys {
    current: Keyring,
    /// The keyring before the rotation: its signing secret is now verify-only in `current`.
    before_rotation: Keyring,
    /// A keyring sharing no secret with the others.
    stranger: Keyring,
    hash_key: Secret,
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let secret = |b: u8| Secret::from_bytes(vec![b; 32]);
        Keys {
            current: Keyring::new(&secret(1), &[secret(2)]),
            before_rotation: Keyring::new(&secret(2), &[]),
            stranger: Keyring::new(&secret(9), &[]),
            hash_key: secret(7),
        }
    })
}

/// `n` as a canonical UUID, the form of every subscriber id signupd makes.
fn canonical_uuid(n: u128) -> String {
    let hex = format!("{n:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

fn mutate(token: &str, mutation: &Mutation) -> String {
    let mut bytes = token.as_bytes().to_vec();
    let clamp = |at: usize, len: usize| if len == 0 { 0 } else { at % (len + 1) };
    match mutation {
        Mutation::None => {}
        Mutation::SetByte { at, byte } => {
            if !bytes.is_empty() {
                let at = at % bytes.len();
                bytes[at] = *byte;
            }
        }
        Mutation::Insert { at, text } => {
            let at = clamp(*at, bytes.len());
            bytes.splice(at..at, text.bytes());
        }
        Mutation::Remove { at, len } => {
            let at = clamp(*at, bytes.len());
            let end = (at + usize::from(*len)).min(bytes.len());
            bytes.drain(at..end);
        }
        Mutation::Truncate { at } => bytes.truncate(clamp(*at, bytes.len())),
        Mutation::SwapParts { a, b } => {
            let mut parts: Vec<&str> = token.split('.').collect();
            let (a, b) = (usize::from(*a) % parts.len(), usize::from(*b) % parts.len());
            parts.swap(a, b);
            bytes = parts.join(".").into_bytes();
        }
        Mutation::ReplacePart { part, text } => {
            let mut parts: Vec<&str> = token.split('.').collect();
            let at = usize::from(*part) % parts.len();
            parts[at] = text;
            bytes = parts.join(".").into_bytes();
        }
        Mutation::Append { text } => bytes.extend_from_slice(text.as_bytes()),
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fuzz_target!(|input: Input| {
    let keys = keys();
    let signer = if input.old_signer { &keys.before_rotation } else { &keys.current };

    // Unsubscribe: signed, verified by the current keyring (the old secret is verify-only there).
    let token = signer.sign_unsubscribe(&input.list_id, &input.subscriber_id, input.issued_at);
    let claims = UnsubscribeClaims {
        list_id: input.list_id.clone(),
        subscriber_id: input.subscriber_id.clone(),
        issued_at: input.issued_at,
    };
    if token.len() <= MAX_SIGNED_TOKEN_LEN {
        assert_eq!(keys.current.verify_unsubscribe(&token).as_ref(), Ok(&claims), "a valid token is refused");
        assert_eq!(TokenForm::parse(&token, &keys.current), Ok(TokenForm::Unsubscribe(claims.clone())));
    } else {
        assert!(keys.current.verify_unsubscribe(&token).is_err(), "an overlong token is read");
    }
    assert!(keys.stranger.verify_unsubscribe(&token).is_err(), "another secret verifies the token");
    if input.old_signer {
        assert!(keys.before_rotation.verify_unsubscribe(&token).is_ok() || token.len() > MAX_SIGNED_TOKEN_LEN);
    } else {
        assert!(keys.before_rotation.verify_unsubscribe(&token).is_err(), "a retired-only keyring verifies");
    }
    let changed = mutate(&token, &input.mutation);
    let verified = keys.current.verify_unsubscribe(&changed);
    if changed != token {
        assert!(verified.is_err(), "a changed token verifies: {:?} -> {verified:?}", input.mutation);
    }

    // Removal: `<row id>.<secret>`, the secret derived from the hash key and the row id; it
    // matches exactly its own row's stored value, and a changed token matches it no more.
    let row_id = canonical_uuid(input.row_id);
    let removal = RemovalToken::derive(&keys.hash_key, &row_id);
    let stored = removal.removal_hash();
    let Ok(TokenForm::Removal(presented)) = TokenForm::parse(removal.expose(), &keys.current) else {
        panic!("a derived removal token is not read as one");
    };
    assert_eq!(presented.subscriber_id(), row_id);
    assert!(presented.matches(&stored), "a derived removal token does not match its row");
    let changed = mutate(removal.expose(), &input.mutation);
    match TokenForm::parse(&changed, &keys.current) {
        Ok(TokenForm::Opaque(opaque)) => assert!(opaque == changed && is_opaque(&changed)),
        Ok(TokenForm::Removal(parsed)) => {
            assert_eq!(PresentedRemoval::parse(&changed).as_ref(), Some(&parsed));
            if changed != removal.expose() {
                assert!(!parsed.matches(&stored), "a changed removal token matches: {:?}", input.mutation);
            }
        }
        Ok(TokenForm::Unsubscribe(claims)) => panic!("a changed removal token verified as signed: {claims:?}"),
        Err(_) => assert!(!is_opaque(&changed) && PresentedRemoval::parse(&changed).is_none()),
    }

    // Confirm: random, same shape; the mutated form is only ever opaque or refused.
    let confirm = ConfirmToken::mint().expect("the system RNG works");
    assert_eq!(confirm.expose().len(), TOKEN_LEN);
    assert!(is_opaque(confirm.expose()));
    let changed = mutate(confirm.expose(), &input.mutation);
    assert!(!matches!(TokenForm::parse(&changed, &keys.current), Ok(TokenForm::Unsubscribe(_))));
});
