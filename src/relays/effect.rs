//! What a hard bounce or a complaint does, once its report is believed: the address is
//! suppressed on every list (`bounced` or `complained`, under its every-list key), and where its
//! address is known, its rows are removed from every configured list in the same transaction —
//! a confirmed row as an unsubscribe (`subscriber.unsubscribed` with the reason and `via`
//! `relay`, so endpoints and destinations hear of it), a pending row with its queued mail.
//!
//! A report names its mail one of two ways ([`Subject`]):
//!
//! - by the sealed `X-Signupd-Ref` the mail carried (`mail::reference`), which opens only under
//!   this installation's key. It holds the row's id and the address's every-list key, never the
//!   address: the address is read from the row, and used only if its every-list key is the
//!   reference's, so a reference can only ever act on the address it was sealed for. When the
//!   row is gone (a pending row expired, the subscriber left), the key still suppresses;
//! - by the recipient a relay's event names (when no reference came back), whose every-list key
//!   is computed in memory; nothing of the address is stored but the keyed hash.
//!
//! A mail-borne report (a DSN, a feedback report) is trusted only through a reference that
//! opens: its recipient is whatever its sender wrote, so the caller never makes it a
//! [`Subject::Recipient`].

use crate::clock::UnixSeconds;
use crate::domain::{EmailAddress, ListId};
use crate::mail::reference::Reference;
use crate::storage::subscribers;
use crate::storage::suppressions::{self, Reason};
use crate::subscription::{Removed, Subscriptions};

/// What a report is about.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A reference that opened.
    Reference(&'a Reference),
    /// The recipient an authenticated relay event names.
    Recipient(&'a EmailAddress),
}

/// A hard bounce or a complaint: which of the two suppressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    HardBounce,
    Complaint,
}

impl Verdict {
    fn reason(self) -> Reason {
        match self {
            Self::HardBounce => Reason::Bounced,
            Self::Complaint => Reason::Complained,
        }
    }
}

/// Suppresses `subject` on every list and removes its rows from each of `lists` (the
/// configured ones) as [`Verdict`] says. What was removed from which list; empty when no row
/// was left (the suppression is recorded all the same).
pub async fn suppress(
    subscriptions: &Subscriptions<'_>,
    lists: &[ListId],
    subject: Subject<'_>,
    verdict: Verdict,
    now: UnixSeconds,
) -> anyhow::Result<Vec<Removed>> {
    let hash_key = subscriptions.hash_key;
    let (email, every_list_hash) = match subject {
        Subject::Recipient(address) => {
            (Some(address.as_ref().to_owned()), suppressions::every_list_hash(hash_key, address.as_ref()))
        }
        Subject::Reference(reference) => {
            let every_list_hash = reference.suppression_hash();
            let id = reference.subscriber_id.to_string();
            let row = subscriptions
                .db
                .run(move |conn| Ok::<_, anyhow::Error>(subscribers::find_removable_by_id(conn, &id)?))
                .await?;
            let email = row
                .map(|(row, _)| row.email)
                .filter(|email| suppressions::every_list_hash(hash_key, email) == every_list_hash);
            (email, every_list_hash)
        }
    };
    subscriptions.suppress_everywhere(lists, email.as_deref(), &every_list_hash, verdict.reason(), now).await
}
