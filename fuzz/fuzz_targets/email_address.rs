//! `EmailAddress::parse`, what every signup body's `email` field goes through.
#![no_main]

use libfuzzer_sys::fuzz_target;
use signupd::domain::EmailAddress;

fuzz_target!(|data: &[u8]| {
    // Bodies are decoded to UTF-8 (lossily for forms) before the parser sees them.
    let input = String::from_utf8_lossy(data);
    let Ok(address) = EmailAddress::parse(&input) else {
        return;
    };
    let text = address.as_ref();
    assert!(text.len() <= EmailAddress::MAX_LEN, "too long: {} octets", text.len());
    assert!(address.local_part().len() <= EmailAddress::MAX_LOCAL_PART_LEN);
    assert!(text.is_ascii() && !text.bytes().any(|b| b.is_ascii_uppercase()), "not lowercase ASCII");
    assert!(!text.bytes().any(|b| b.is_ascii_control() || b == b' '), "control or space");
    assert_eq!(text.matches('@').count(), 1);
    // Idempotent: the stored form parses to itself.
    assert_eq!(EmailAddress::parse(text).as_ref(), Ok(&address));
    // The mailer converts every accepted address to lettre's type; that must never fail.
    assert!(text.parse::<lettre::Address>().is_ok(), "lettre refuses an accepted address");
    // The log form never shows the whole local part.
    let masked = address.masked();
    assert_ne!(masked.split_once('@').map(|(shown, _)| shown), Some(address.local_part()));
    let _ = format!("{address:?}");
});
