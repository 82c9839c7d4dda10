//! What a failed send means, and whose it is: the recipient's refusal (it counts against the
//! address), a refusal of signupd itself or a relay out of reach (the whole queue waits,
//! nothing is lost), or a failure of this mail alone. The text is safe to log, store and alert
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

    /// Whether the server refused the recipient, for good — a hard bounce at send time — and
    /// the enhanced status it gave (empty without one): a permanent reply to `RCPT TO` or to
    /// the end of `DATA` whose enhanced status is 5.1.x or 5.2.x, or, without an enhanced
    /// status, 550, 551 or 553 to `RCPT TO`. Nothing else counts against the address.
    pub fn refused_address(&self) -> Option<String> {
        if !self.permanent || self.code.is_none() || !matches!(self.stage, Some(Stage::Rcpt | Stage::Data)) {
            return None;
        }
        match self.enhanced() {
            Some((word, status)) => matches!(status, (5, 1 | 2, _)).then(|| word.to_owned()),
            None => (self.stage == Some(Stage::Rcpt) && matches!(self.code, Some(550 | 551 | 553))).then(String::new),
        }
    }

    /// The first enhanced status code in the server's reason, as written and as read.
    fn enhanced(&self) -> Option<(&str, (u16, u16, u16))> {
        self.detail.split_whitespace().find_map(|word| {
            let word = word.trim_end_matches([':', ',', ';', ')']).trim_start_matches('(');
            enhanced_status(word).map(|status| (word, status))
        })
    }

    /// Whether the relay refused signupd itself, or could not be reached: everything but the
    /// recipient's own answer (its refusal, or a deferral at `RCPT TO` such as greylisting).
    /// Such a failure is the operator's or the relay's to fix, and no mail should burn its
    /// tries meanwhile: the whole queue waits (`super::relay_hold`).
    pub fn holds_the_queue(&self) -> bool {
        match self.stage {
            None => false,
            Some(_) if self.refused_address().is_some() => false,
            Some(Stage::Rcpt) => self.code.is_none_or(|code| code >= 500),
            // A mailbox that is busy or full for now (4.1.x, 4.2.x) is the recipient's to clear.
            Some(Stage::Data) if self.code.is_some_and(|code| code < 500) => {
                !matches!(self.enhanced().map(|(_, status)| status), Some((4, 1 | 2, _)))
            }
            Some(_) => true,
        }
    }
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
        // (error, refused_address, holds_the_queue)
        let cases = [
            (
                refusal(Rcpt, true, Some(550), "SMTP 550: permanent error (550): 5.1.1 [address]: User unknown"),
                Some("5.1.1"),
                false,
            ),
            (refusal(Rcpt, true, Some(550), "SMTP 550: 5.2.1 mailbox disabled"), Some("5.2.1"), false),
            (refusal(Data, true, Some(552), "SMTP 552: 5.2.2 mailbox full"), Some("5.2.2"), false),
            (refusal(Rcpt, true, Some(550), "SMTP 550: no such user here"), Some(""), false),
            (refusal(Rcpt, true, Some(553), "SMTP 553: mailbox name not allowed"), Some(""), false),
            (refusal(Data, true, Some(550), "SMTP 550: no such user here"), None, true),
            (refusal(Rcpt, true, Some(554), "SMTP 554: 5.7.1 relay access denied"), None, true),
            (refusal(Rcpt, true, Some(550), "SMTP 550: (5.7.1) rejected by policy from 10.1.2.3"), None, true),
            (refusal(Rcpt, true, Some(554), "SMTP 554: 5.4.4 unrouteable"), None, true),
            (refusal(Data, true, Some(554), "SMTP 554: transaction failed"), None, true),
            (refusal(Rcpt, false, Some(450), "SMTP 450: 4.1.1 try later"), None, false),
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
