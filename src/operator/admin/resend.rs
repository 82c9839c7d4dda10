//! The admin page's "re-send the confirmation": one writer command that queues a new
//! confirmation mail for a pending row, as a visitor pressing "Send my confirmation email"
//! would. The mail worker sends it like any other — from the paced hourly budget, first in
//! line (pressed), with a new token — so the operator cannot spend more than the budget either.
//!
//! Two bounds are checked here rather than left to the worker, so the page can say why nothing
//! was queued: a row mailed within `signup.resend_cooldown` is not mailed again yet, and an
//! address that had its `signup.max_mails_per_address_per_day` confirmations in the last day
//! waits for the day to pass (the worker would drop the mail, and with it a row never mailed).

use ring::hmac;

use crate::clock::UnixSeconds;
use crate::storage::subscribers::{self, Press, Status};
use crate::storage::{Batch, Command, address_mails};

/// Queue a new confirmation for `email`'s row on `list_id`, if it is pending and may be mailed.
pub struct ResendConfirmation {
    pub list_id: String,
    /// As stored: normalised.
    pub email: String,
    pub now: UnixSeconds,
    pub cooldown_secs: i64,
    pub cap: Option<u32>,
    /// Keys the per-address hash of the mail cap (from the hash key).
    pub address_key: hmac::Key,
}

impl std::fmt::Debug for ResendConfirmation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResendConfirmation").field("list_id", &self.list_id).finish_non_exhaustive()
    }
}

/// What [`ResendConfirmation`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resent {
    /// A new confirmation is queued (or the one queued now goes first).
    Queued,
    /// The list has no pending row for the address (none, or confirmed).
    NotPending,
    /// Mailed within the cooldown: the next may go at this time.
    TooSoon(UnixSeconds),
    /// The address had its day's confirmations.
    AtDailyCap,
}

impl Command for ResendConfirmation {
    type Output = Resent;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Resent> {
        let conn = batch.conn();
        let Some(row) = subscribers::find(conn, &self.list_id, &self.email)? else {
            return Ok(Resent::NotPending);
        };
        if row.status != Status::Pending {
            return Ok(Resent::NotPending);
        }
        if let Some(sent) = row.confirmation_sent_at {
            let next = sent.saturating_add(self.cooldown_secs);
            if self.now < next {
                return Ok(Resent::TooSoon(next));
            }
        }
        if let Some(cap) = self.cap {
            let hash = address_mails::hash(&self.address_key, &self.email);
            if address_mails::in_last_day(conn, &hash, self.now)? >= i64::from(cap) {
                return Ok(Resent::AtDailyCap);
            }
        }
        subscribers::queue_confirmation(conn, &row.id, None, self.now, Press::Pressed)?;
        Ok(Resent::Queued)
    }
}
