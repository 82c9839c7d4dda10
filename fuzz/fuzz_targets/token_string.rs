//! Any string where a token belongs (`?token=` of the confirm, manage and unsubscribe pages and
//! endpoints): `TokenForm::parse` with a keyring of one signing and two verify-only secrets.
//! It must never panic, and must accept only the three shapes it promises.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use signupd::config::secrets::Secret;
use signupd::config::tokens::{Keyring, PresentedRemoval, SUBSCRIBER_ID_LEN, TOKEN_LEN, TokenForm, is_opaque};

fn keyring() -> &'static Keyring {
    static KEYRING: OnceLock<Keyring> = OnceLock::new();
    KEYRING.get_or_init(|| {
        Keyring::new(
            &Secret::from_bytes(vec![1; 32]),
            &[Secret::from_bytes(vec![2; 32]), Secret::from_bytes(vec![3; 32])],
        )
    })
}

fuzz_target!(|data: &[u8]| {
    // A query string is percent-decoded lossily to UTF-8 before the token is parsed.
    let token = String::from_utf8_lossy(data);
    match TokenForm::parse(&token, keyring()) {
        Ok(TokenForm::Opaque(opaque)) => {
            assert_eq!(opaque, token);
            assert_eq!(opaque.len(), TOKEN_LEN);
            assert!(is_opaque(&opaque));
        }
        Ok(TokenForm::Removal(removal)) => {
            // `<canonical UUID>.<43 base64url characters>`, nothing else.
            assert_eq!(token.len(), SUBSCRIBER_ID_LEN + 1 + TOKEN_LEN);
            let (id, secret) = token.split_once('.').expect("a dot");
            assert_eq!(id, removal.subscriber_id());
            assert_eq!(id.len(), SUBSCRIBER_ID_LEN);
            assert!(id.bytes().all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert!(is_opaque(secret));
        }
        Ok(TokenForm::Unsubscribe(claims)) => {
            // Forging a signature by chance is not expected; if it happens, it is a finding.
            panic!("an unsigned input verified: {claims:?}");
        }
        Err(_) => assert!(!is_opaque(&token) && PresentedRemoval::parse(&token).is_none()),
    }
    let _ = keyring().verify_unsubscribe(&token);
});
