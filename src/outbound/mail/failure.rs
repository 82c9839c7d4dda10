//! What a failed send means, and whose it is: the recipient's refusal (it counts against the
//! address), a refusal of signupd itself or a relay out of reach (the whole queue waits,
//! nothing is lost), or a failure of this mail alone. Relays word their refusals of signupd
//! like a recipient's (Exim's `550 relay not permitted`, qmail's `553 … (#5.7.1)`, Postfix's
//! sender refusals at `RCPT TO`), so the reply is read for what it names, and a refusal at
//! `RCPT TO` stays nobody's until the next mail to another address settles it
//! (`super::worker`). The text is safe to log, store and alert
//! with: the SMTP code and the server's reason with addresses masked, or the cause in words,
//! never the recipient.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct SendError {
    pub permanent: bool,
    /// The SMTP reply code, when the server answered.
    pub code: Option<u16>,
    /// Where in the SMTP conversation it failed; `None` when no relay was involved (the file
    /// transport, a mail that could not be built).
    pub stage: Option<Stage>,
    /// Safe to log and store: code and reason, or the cause in words, with what to change.
    pub detail: String,
}

impl SendError {
    /// A failure that is nobody's refusal and may pass: retried for this mail alone.
    pub fn temporary(detail: String) -> Self {
        Self { permanent: false, code: None, stage: None, detail }
    }

    /// Whether the reply names the recipient — and so counts against the address, once the
    /// relay took another recipient ([`Self::refused_at_rcpt`]) — and the enhanced status it
    /// gave (empty without one): a permanent reply to `RCPT TO` whose enhanced status is one
    /// that only a recipient earns ([`names_the_recipient`]), or, with no enhanced status, a
    /// bare 550, 551 or 553 there (ambiguous: the relay says the same of signupd, as Exim's
    /// `550 relay not permitted` does). Nothing else ever counts against an address: not 5.1.0,
    /// 5.1.7 or 5.1.8 (the sender), not a 5.7.x policy, not anything at `MAIL FROM` or `DATA`.
    pub fn refused_address(&self) -> Option<String> {
        if !self.permanent || !self.refused_at_rcpt() {
            return None;
        }
        match self.enhanced() {
            Some((word, status)) => names_the_recipient(status).then(|| word.to_owned()),
            None => matches!(self.code, Some(550 | 551 | 553)).then(String::new),
        }
    }

    /// Whether the relay answered `RCPT TO` with a refusal, permanent or not. Whose refusal it
    /// is the reply alone cannot tell: the next mail to another address settles it
    /// ([`super::worker`]).
    pub fn refused_at_rcpt(&self) -> bool {
        self.stage == Some(Stage::Rcpt) && self.code.is_some()
    }

    /// Whether two refusals at `RCPT TO` are the same: the same reply code and the same
    /// enhanced status (or neither has one). A relay refusing signupd answers every recipient
    /// alike.
    pub fn same_refusal(&self, other: &Self) -> bool {
        self.refused_at_rcpt()
            && other.refused_at_rcpt()
            && self.code == other.code
            && self.enhanced().map(|(_, status)| status) == other.enhanced().map(|(_, status)| status)
    }

    /// The first enhanced status code in the server's reason, as written and as read, in
    /// either spelling: RFC 3463's `5.7.1` or qmail's `#5.7.1` (in parentheses).
    fn enhanced(&self) -> Option<(&str, (u16, u16, u16))> {
        self.detail.split_whitespace().find_map(|word| {
            let word = word.trim_end_matches([':', ',', ';', ')', '.']).trim_start_matches(['(', '#']);
            enhanced_status(word).map(|status| (word, status))
        })
    }

    /// Whether the relay refused signupd itself, or could not be reached, as the reply alone
    /// tells: everything at `MAIL FROM`, the end of `DATA` (but a mailbox busy or full for now,
    /// 4.1.x or 4.2.x, which is the recipient's to clear), and before. A refusal at `RCPT TO`
    /// is nobody's until the next mail settles it, so it does not hold by itself. Such a
    /// failure is the operator's or the relay's to fix, and no mail should burn its tries
    /// meanwhile: the whole queue waits (`super::relay_hold`).
    pub fn holds_the_queue(&self) -> bool {
        match self.stage {
            None => false,
            Some(Stage::Rcpt) => self.code.is_none(),
            Some(Stage::Data) if self.code.is_some_and(|code| code < 500) => {
                !matches!(self.enhanced().map(|(_, status)| status), Some((4, 1 | 2, _)))
            }
            Some(_) => true,
        }
    }
}

/// Whether an enhanced status given to `RCPT TO` says the recipient itself is refused: 5.1.1
/// (no such mailbox), 5.1.2 (no such domain), 5.1.3 (a malformed address), 5.1.6 (moved),
/// 5.1.10 (a null MX) and 5.2.1 (a disabled mailbox). The rest of 5.1.x names the sender
/// (5.1.0, 5.1.7, 5.1.8) or nobody in particular, and 5.2.x other than 5.2.1 is a relay's
/// quota as often as a mailbox's.
pub fn names_the_recipient(status: (u16, u16, u16)) -> bool {
    matches!(status, (5, 1, 1 | 2 | 3 | 6 | 10) | (5, 2, 1))
}

/// An RFC 3463 enhanced status code (`5.1.1`) as its class, subject and detail.
pub fn enhanced_status(text: &str) -> Option<(u16, u16, u16)> {
    let mut parts = text.trim().split('.');
    let mut next = || -> Option<u16> {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let status = (next()?, next()?, next()?);
    (parts.next().is_none() && matches!(status.0, 2 | 4 | 5)).then_some(status)
}

/// Whether an enhanced status says the address does not take mail, for good: 5.1.x (a bad
/// mailbox or domain), 5.2.1 (a disabled mailbox), 5.4.4 (no route to the domain).
pub fn refuses_the_address(status: (u16, u16, u16)) -> bool {
    matches!(status, (5, 1, _) | (5, 2, 1) | (5, 4, 4))
}

/// The step of an SMTP conversation a failure came at; named in the `relay_refused` alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Connect,
    Tls,
    Ehlo,
    Auth,
    MailFrom,
    Rcpt,
    Data,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::Ehlo => "ehlo",
            Self::Auth => "auth",
            Self::MailFrom => "mail_from",
            Self::Rcpt => "rcpt",
            Self::Data => "data",
        }
    }
}

/// A server's reason may quote the recipient (`550 <ann@example.com>: no such user`). Words with
/// an `@` are masked before the text is logged or stored.
pub fn reason_without_addresses(reason: &str) -> String {
    reason
        .split_whitespace()
        .map(|word| if word.contains('@') { "[address]" } else { word })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_recipients_own_permanent_refusal_counts_against_the_address() {
        use Stage::{Auth, Connect, Data, MailFrom, Rcpt, Tls};
        let refusal = |stage, permanent, code, detail: &str| SendError {
            permanent,
            code,
            stage: Some(stage),
            detail: detail.to_owned(),
        };
        // (error, refused_address, holds_the_queue): at RCPT TO, what counts against the address
        // once the relay took another recipient; nothing there holds by itself.
        let cases = [
            (
                refusal(Rcpt, true, Some(550), "SMTP 550: permanent error (550): 5.1.1 [address]: User unknown"),
                Some("5.1.1"),
                false,
            ),
            (refusal(Rcpt, true, Some(550), "SMTP 550: 5.2.1 mailbox disabled"), Some("5.2.1"), false),
            (refusal(Rcpt, true, Some(550), "SMTP 550: 5.1.10 null MX"), Some("5.1.10"), false),
            (
                refusal(Rcpt, true, Some(553), "SMTP 553: sorry, no mailbox here by that name. (#5.1.1)"),
                Some("5.1.1"),
                false,
            ),
            (refusal(Rcpt, true, Some(550), "SMTP 550: no such user here"), Some(""), false),
            (refusal(Rcpt, true, Some(553), "SMTP 553: mailbox name not allowed"), Some(""), false),
            // Exim's default refusal of an unauthenticated client: ambiguous, settled by the next mail.
            (refusal(Rcpt, true, Some(550), "SMTP 550: relay not permitted"), Some(""), false),
            // qmail writes the enhanced code after a `#`.
            (
                refusal(
                    Rcpt,
                    true,
                    Some(553),
                    "SMTP 553: sorry, that domain isnt in my list of allowed rcpthosts (#5.7.1)",
                ),
                None,
                false,
            ),
            // Postfix reports a refused sender at RCPT TO.
            (refusal(Rcpt, true, Some(550), "SMTP 550: 5.1.0 [address]: Sender address rejected"), None, false),
            (refusal(Rcpt, true, Some(553), "SMTP 553: 5.1.8 [address]: Sender address rejected"), None, false),
            (refusal(Rcpt, true, Some(554), "SMTP 554: 5.7.1 [address]: Recipient address rejected"), None, false),
            (refusal(Rcpt, true, Some(550), "SMTP 550: (5.7.1) rejected by policy from 10.1.2.3"), None, false),
            (refusal(Rcpt, true, Some(554), "SMTP 554: 5.4.4 unrouteable"), None, false),
            (refusal(Rcpt, true, Some(552), "SMTP 552: 5.2.2 mailbox full"), None, false),
            (refusal(Rcpt, false, Some(450), "SMTP 450: 4.7.1 Client host rejected"), None, false),
            (refusal(Rcpt, false, None, "relay:587 closed the connection at RCPT TO"), None, true),
            // Every permanent refusal at the end of DATA is the relay's: Microsoft 365's too.
            (refusal(Data, true, Some(554), "SMTP 554: 5.2.252 SendAsDenied; [address] not allowed"), None, true),
            (
                refusal(Data, true, Some(554), "SMTP 554: 5.2.0 STOREDRV.Submission.Exception:QuotaExceededException"),
                None,
                true,
            ),
            (refusal(Data, true, Some(552), "SMTP 552: 5.2.2 mailbox full"), None, true),
            (refusal(Data, true, Some(550), "SMTP 550: 5.1.1 no such user here"), None, true),
            (refusal(Data, true, Some(554), "SMTP 554: transaction failed"), None, true),
            (refusal(Data, false, Some(451), "SMTP 451: 4.3.0 local error"), None, true),
            (refusal(Data, false, Some(452), "SMTP 452: 4.2.2 mailbox full"), None, false),
            (refusal(Auth, true, Some(535), "SMTP 535: 5.7.8 authentication failed"), None, true),
            (refusal(MailFrom, true, Some(553), "SMTP 553: 5.1.8 [address]: Sender address rejected"), None, true),
            (refusal(MailFrom, true, Some(550), "SMTP 550: no such user here"), None, true),
            (refusal(Tls, false, None, "TLS with relay:587 failed"), None, true),
            (refusal(Connect, false, None, "connection refused by relay:587"), None, true),
            (SendError::temporary("cannot write the mail file".into()), None, false),
            (
                SendError { permanent: true, code: None, stage: None, detail: "the mail could not be built".into() },
                None,
                false,
            ),
        ];
        for (error, refused, holds) in cases {
            assert_eq!(error.refused_address().as_deref(), refused, "{}", error.detail);
            assert_eq!(error.holds_the_queue(), holds, "{}", error.detail);
        }
        assert_eq!(enhanced_status("5.1.10"), Some((5, 1, 10)));
        let exim = refusal(Rcpt, true, Some(550), "SMTP 550: relay not permitted");
        let qmail = refusal(Rcpt, true, Some(553), "SMTP 553: sorry (#5.7.1)");
        assert!(exim.same_refusal(&exim.clone()) && qmail.same_refusal(&qmail.clone()));
        assert!(!exim.same_refusal(&qmail), "another code is another refusal");
        let unknown = refusal(Rcpt, true, Some(550), "SMTP 550: 5.1.1 no such user");
        assert!(!exim.same_refusal(&unknown), "another enhanced status is another refusal");
        assert!(!refusal(Data, true, Some(550), "SMTP 550: x").same_refusal(&refusal(
            Data,
            true,
            Some(550),
            "SMTP 550: x"
        )));
        for nonsense in ["10.1.2.3", "5.1", "550", "6.1.1", "5..1", "5.1.1.", "x.1.1"] {
            assert_eq!(enhanced_status(nonsense), None, "{nonsense}");
        }
    }

    #[test]
    fn addresses_are_masked_in_server_reasons() {
        assert_eq!(
            reason_without_addresses("permanent error (550): <ann@example.com> no such user"),
            "permanent error (550): [address] no such user"
        );
    }
}
