//! DKIM signatures as a receiver checks them (docs/operations.md "Mail deliverability"): a key made
//! by the guide's own commands, the confirmation and the welcome mail (with the `List-Unsubscribe`
//! headers RFC 8058 wants signed) sent through the real SMTP path, and each signature checked by
//! dkimpy, an independent DKIM implementation, against the DNS record the guide shows. A changed
//! copy of each mail must fail, or a pass would prove nothing.
//!
//! Guards the relaxed/relaxed canonicalization in `src/outbound/mail/transport.rs`: with lettre's default
//! (simple header canonicalization) not one of signupd's signatures verified.

use std::path::Path;
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::confirm::{location, post_token};
use crate::helpers::{guide_example, python_with, run_python, spawn_app_with};
use crate::mail::{Mail, all_sent, run_mail, sign_up};
use crate::smtp_server::SmtpServer;

/// Runs the guide's key commands between the `marker` lines with `/etc/signupd/` changed to
/// `dir`; returns what they print, the public key for the record's `p=`.
fn documented_key(marker: &str, dir: &Path) -> String {
    let script = guide_example(marker).replace("/etc/signupd/", &format!("{}/", dir.display()));
    let output = Command::new("bash").args(["-euo", "pipefail", "-c", &script]).output().unwrap();
    assert!(output.status.success(), "{marker}:\n{script}\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The confirmation and the welcome mail of one signup, as the SMTP server received them, from an
/// app signing with `[mail.dkim]` `algorithm` and the key the guide's `marker` commands make; and
/// the TXT record the guide says to publish for it.
async fn signed_mails(algorithm: &str, marker: &str) -> (String, Vec<Vec<u8>>) {
    let keys = tempfile::tempdir().unwrap();
    let public_key = documented_key(marker, keys.path());
    let smtp = SmtpServer::start();
    // A German list, so the signed headers include encoded words (the subject) too.
    let config = format!(
        "{}[mail.dkim]\nselector = \"signupd1\"\ndomain = \"example.com\"\nalgorithm = \"{algorithm}\"\n\
         private_key_file = {:?}\n\
         [[lists]]\nid = \"news\"\nname = \"Brotbrief\"\nsite_name = \"Bäckerei Korn\"\nlanguage = \"de\"\n",
        smtp.config(),
        keys.path().join("dkim.key").display().to_string()
    );
    let app = spawn_app_with(&config).await;

    sign_up(&app, "anna@example.com").await;
    assert!(all_sent(&run_mail(&app).await));
    let token = Mail::parse(&smtp.received()[0]).confirm_token();
    assert_eq!(location(&post_token(&app, "/api/confirm", &token).await), "/confirmed?list=news");
    assert!(all_sent(&run_mail(&app).await));

    let mails = smtp.received();
    assert_eq!(mails.len(), 2, "a confirmation and a welcome mail");
    assert!(String::from_utf8_lossy(&mails[1]).contains("\r\nList-Unsubscribe-Post: "), "the welcome mail's headers");
    (format!("v=DKIM1; k={algorithm}; p={public_key}"), mails)
}

/// dkimpy's verdict on each mail, `pass` or `fail: <its reasons>`, with `record` published at
/// `signupd1._domainkey.example.com` and nothing else in DNS.
fn verify_with_dkimpy(record: &str, mails: &[Vec<u8>]) -> Vec<String> {
    const SCRIPT: &str = "
import base64, json, logging, sys
import dkim
request = json.load(sys.stdin)
def dns(name, timeout=5):
    return request['record'].encode() if name == b'signupd1._domainkey.example.com.' else None
reasons = []
class Collect(logging.Handler):
    def emit(self, record):
        reasons.append(record.getMessage())
logger = logging.getLogger('dkimpy')
logger.setLevel(logging.DEBUG)
logger.addHandler(Collect())
for mail in request['mails']:
    reasons.clear()
    passed = dkim.verify(base64.b64decode(mail), logger=logger, dnsfunc=dns)
    print('pass' if passed else 'fail: ' + ' | '.join(reasons).replace('\\n', ' '))
";
    let mails: Vec<String> = mails.iter().map(|mail| STANDARD.encode(mail)).collect();
    let python = python_with("dkim, nacl", &["dkimpy==1.1.8", "pynacl==1.6.2"]);
    run_python(python, SCRIPT, &json!({"record": record, "mails": mails}))
}

/// The mails as sent, then two changed copies: another subject (a signed header) and a line added
/// to the body. Returns dkimpy's verdicts in that order.
fn verdicts(record: &str, mails: &[Vec<u8>]) -> Vec<String> {
    let text = |mail: &Vec<u8>| String::from_utf8(mail.clone()).unwrap();
    let other_subject = text(&mails[0]).replacen("\r\nSubject: ", "\r\nSubject: Re: ", 1).into_bytes();
    let longer_body = [mails[1].as_slice(), b"P.S. added on the way\r\n"].concat();
    assert!(other_subject != mails[0], "the subject was changed");
    verify_with_dkimpy(record, &[mails[0].clone(), mails[1].clone(), other_subject, longer_body])
}

fn assert_signed_and_tamper_evident(algorithm: &str, verdicts: &[String]) {
    assert_eq!(verdicts.len(), 4, "{verdicts:?}");
    assert_eq!(verdicts[0], "pass", "{algorithm}: the confirmation mail");
    assert_eq!(verdicts[1], "pass", "{algorithm}: the welcome mail");
    assert!(verdicts[2].starts_with("fail"), "{algorithm}: a changed subject must fail: {verdicts:?}");
    assert!(verdicts[3].starts_with("fail"), "{algorithm}: a changed body must fail: {verdicts:?}");
}

#[actix_web::test]
async fn mail_signed_with_the_guides_ed25519_key_verifies_with_dkimpy_and_a_changed_copy_does_not() {
    let (record, mails) = signed_mails("ed25519", "dkim-ed25519-key").await;

    let verdicts = verdicts(&record, &mails);

    assert!(record.starts_with("v=DKIM1; k=ed25519; p=") && record.len() == 66, "{record}");
    assert_signed_and_tamper_evident("ed25519", &verdicts);
}

#[actix_web::test]
async fn mail_signed_with_the_guides_rsa_key_verifies_with_dkimpy_and_a_changed_copy_does_not() {
    let (record, mails) = signed_mails("rsa", "dkim-rsa-key").await;

    let verdicts = verdicts(&record, &mails);

    assert!(record.starts_with("v=DKIM1; k=rsa; p=MIIBIjAN"), "{record}");
    assert_signed_and_tamper_evident("rsa", &verdicts);
}
