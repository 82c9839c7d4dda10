//! Hearing back from the relay (issue "Hear back", in progress; `docs/operations.md` "Bounces and
//! complaints" once it is done): every mail about a subscriber carries `X-Signupd-Ref`, a sealed
//! reference to its list, its kind, its row and its address's every-list suppression key, which
//! opens with the installation's key and with no other, and holds no address.

use signupd::mail::reference::{MailKind, ReferenceKey};
use signupd::secrets::Secret;
use signupd::storage::suppressions;

use crate::confirm::{SentMail, deliver, location, post_token};
use crate::helpers::{TestApp, spawn_app_with};
use crate::signup::{RAISED_LIMITS, drain, post_form, valid};

const JANE: &str = "jane.doe+news@example.com";

/// The reference of `mail`, opened with the app's own key.
fn opened(app: &TestApp, mail: &SentMail) -> signupd::mail::reference::Reference {
    let value = mail.header("X-Signupd-Ref").unwrap_or_else(|| panic!("no X-Signupd-Ref in {}", mail.text()));
    ReferenceKey::derive(&app.state.secrets.hash_key).open(value).unwrap_or_else(|| panic!("{value:?} does not open"))
}

#[actix_web::test]
async fn the_confirmation_and_the_welcome_mail_carry_a_reference_that_opens_to_their_list_kind_row_and_key() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;

    // Act: sign up, mail the confirmation, confirm, mail the welcome
    assert_eq!(post_form(&app, &valid(JANE)).await.status().as_u16(), 303);
    drain(&app).await;
    let confirmation = deliver(&app).await.pop().expect("a confirmation mail");
    let confirmed = post_token(&app, "/api/confirm", &confirmation.confirm_token()).await;
    assert_eq!(location(&confirmed), "/confirmed?list=news");
    let welcome = deliver(&app).await.pop().expect("a welcome mail");

    // Assert: each opens to the list, its kind, the row and the address's every-list key
    let row = confirmation.manage_token().split_once('.').unwrap().0.to_owned();
    let key = suppressions::every_list_hash(&app.state.secrets.hash_key, JANE);
    for (mail, kind) in [(&confirmation, MailKind::Confirmation), (&welcome, MailKind::Welcome)] {
        let reference = opened(&app, mail);
        assert_eq!(reference.list_id, "news");
        assert_eq!(reference.kind, kind);
        assert_eq!(reference.subscriber_id.to_string(), row);
        assert_eq!(reference.suppression_hash(), key);
        assert_ne!(key, suppressions::hash(&app.state.secrets.hash_key, "news", JANE), "not the list's own key");
    }
    // Assert: the value names nothing in the clear, and two mails carry two values
    let values = [&confirmation, &welcome].map(|mail| mail.header("X-Signupd-Ref").unwrap().to_owned());
    assert_ne!(values[0], values[1]);
    for value in &values {
        assert!(!value.contains("jane") && !value.contains("news") && !value.contains(&key[..12]), "{value}");
    }
}

#[actix_web::test]
async fn another_installations_key_opens_no_reference() {
    // Arrange
    let app = spawn_app_with(RAISED_LIMITS).await;
    assert_eq!(post_form(&app, &valid(JANE)).await.status().as_u16(), 303);
    drain(&app).await;
    let mail = deliver(&app).await.pop().expect("a confirmation mail");

    // Act
    let value = mail.header("X-Signupd-Ref").expect("a reference");
    let other = ReferenceKey::derive(&Secret::from_bytes(vec![7; 32]));

    // Assert
    assert!(ReferenceKey::derive(&app.state.secrets.hash_key).open(value).is_some());
    assert_eq!(other.open(value), None);
}
