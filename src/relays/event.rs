//! What a relay's event or a mail-borne report says, once read: the one shape every kind's
//! payload ([`super::payload`]) and every DSN or feedback report ([`super::report`]) is read
//! into, so that what an event does is decided in one place whatever carried it.
//!
//! Nothing here holds more than the event needs to act: the reference as it came (opened later,
//! under the installation's key), the recipient only for a relay's authenticated event, the
//! enhanced status code without the diagnostic text around it (which often quotes the address).

use crate::outbound::mail::failure::{enhanced_status, refuses_the_address};

/// What happened to a mail, as signupd acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// The address does not exist or will never take mail (5.1.x, 5.2.1, 5.4.4, the relay's
    /// "permanent"): suppressed on every list.
    HardBounce,
    /// Mail could not be delivered for now (4.x.x, a full mailbox, the relay's "transient"):
    /// counted only.
    SoftBounce,
    /// The receiver refused the sender, not the address (5.7.x, "blocked"): suppresses nothing,
    /// alerts the operator.
    Policy,
    /// The recipient marked the mail as spam: suppressed on every list, and counted for the
    /// complaint breaker.
    Complaint,
    /// Anything else the relay reports (delivered, opened, not-spam, …): answered and ignored.
    Ignored,
}

impl Class {
    /// The `event` label of `signupd_relay_events_total`.
    pub fn label(self) -> &'static str {
        match self {
            Self::HardBounce => "hard_bounce",
            Self::SoftBounce => "soft_bounce",
            Self::Policy => "policy",
            Self::Complaint => "complaint",
            Self::Ignored => "ignored",
        }
    }

    /// Every class, in the order the metric's series are registered.
    pub const ALL: [Class; 5] = [Self::HardBounce, Self::SoftBounce, Self::Policy, Self::Complaint, Self::Ignored];

    /// The class of an RFC 3463 enhanced status code (`5.1.1`) in a report whose action failed
    /// for good: 5.1.x, 5.2.1 and 5.4.4 say the address is bad; 5.7.x is the receiver's policy;
    /// any other 5.x.x (a full mailbox, a message too big, a network trouble) is treated as
    /// passing, and 4.x.x is passing by definition. `None` for something that is not a status
    /// code.
    pub fn of_status(status: &str) -> Option<Self> {
        let status = enhanced_status(status)?;
        Some(match status {
            _ if refuses_the_address(status) => Self::HardBounce,
            (5, 7, _) => Self::Policy,
            (5 | 4, _, _) => Self::SoftBounce,
            _ => Self::Ignored,
        })
    }
}

/// One event of a relay's request, or the one event of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayEvent {
    /// The relay's own id of this event, so a retried delivery acts once (`None` when the kind
    /// gives none per event; the request's id then stands for it).
    pub id: Option<String>,
    pub class: Class,
    /// The `X-Signupd-Ref` value the relay echoed or the report quoted, unopened.
    pub reference: Option<String>,
    /// The recipient the event names, as the relay wrote it (only ever used for a relay's
    /// authenticated event, never for a mail-borne report).
    pub recipient: Option<String>,
    /// The enhanced status code, when the event gives one (`5.1.1`), without any text.
    pub status: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_classify_as_the_contract_says() {
        for (status, class) in [
            ("5.1.1", Class::HardBounce),
            ("5.1.10", Class::HardBounce),
            ("5.2.1", Class::HardBounce),
            ("5.4.4", Class::HardBounce),
            ("5.7.1", Class::Policy),
            ("5.7.26", Class::Policy),
            ("5.2.2", Class::SoftBounce),
            ("5.3.4", Class::SoftBounce),
            ("4.4.1", Class::SoftBounce),
            (" 4.2.2 ", Class::SoftBounce),
            ("2.0.0", Class::Ignored),
        ] {
            assert_eq!(Class::of_status(status), Some(class), "{status}");
        }
        for nonsense in ["", "5", "5.1", "x.1.1", "6.1.1", "5.1.1.1", "550"] {
            assert_eq!(Class::of_status(nonsense), None, "{nonsense}");
        }
    }
}
