//! `signupd remove EMAIL [--list ID] [--reason unsubscribed|not_me]`: the erasure request an
//! operator receives by mail. It runs the same removal the manage page runs
//! ([`crate::subscribers::subscription::Subscriptions::remove_address`]): the row, its queued mail and any signup of the
//! address not yet applied go, in one transaction, and only the suppression hash stays. Without
//! `--list`, every configured list. The reason defaults to what the manage page would record
//! (`unsubscribed` for a confirmed address, `not_me` for a pending one).

use std::io::Write;

use super::Beside;
use crate::clock::{Clock, SystemClock};
use crate::domain::EmailAddress;
use crate::storage::suppressions::{self, Reason};
use crate::subscribers::subscription::Subscriptions;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReasonArg {
    Unsubscribed,
    /// Spelled as the suppression reason is stored and reported; clap's `not-me` also works.
    #[value(name = "not_me", alias = "not-me")]
    NotMe,
}

impl From<ReasonArg> for Reason {
    fn from(reason: ReasonArg) -> Self {
        match reason {
            ReasonArg::Unsubscribed => Reason::Unsubscribed,
            ReasonArg::NotMe => Reason::NotMe,
        }
    }
}

/// Removes the address; prints one line per list it was removed from, or that nothing matched.
pub async fn run(
    beside: &Beside,
    email: &str,
    list: Option<&str>,
    reason: Option<ReasonArg>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // The error never repeats the input: it may be an address.
    let email = EmailAddress::parse(email).map_err(|error| anyhow::anyhow!("EMAIL: {error}"))?;
    let lists = match list {
        Some(id) => {
            let list = beside.config.list(id);
            vec![list.ok_or_else(|| anyhow::anyhow!("--list: no list with id {id:?} is configured"))?.id.clone()]
        }
        None => beside.config.lists.iter().map(|list| list.id.clone()).collect(),
    };
    let secrets = beside.secrets()?;
    let webhooks = beside.webhooks(&secrets)?;
    let writer = beside.writer()?;
    let subscriptions = Subscriptions {
        config: &beside.config,
        db: &beside.db,
        writer: &writer,
        hash_key: &secrets.hash_key,
        webhooks: &webhooks,
    };
    let removed = subscriptions.remove_address(&lists, &email, reason.map(Reason::from), SystemClock.now()).await;
    let count = removed.as_ref().map_or(0, |removed| removed.len() as u64);
    let address_hash = suppressions::every_list_hash(&secrets.hash_key, email.as_ref());
    let recorded =
        super::audit::record(&writer, super::audit::cli_entry("remove", list, count, Some(address_hash))).await;
    // Closed here, not left to the process's exit: with no server running, the command's
    // connections were the last ones, and closing them removes the `-wal` and `-shm` files.
    writer.close().await?;
    recorded?;
    let removed = removed?;
    if removed.is_empty() {
        writeln!(out, "nothing matched {}: no list has this address", email.masked())?;
    }
    for removed in removed {
        writeln!(
            out,
            "removed {} from list {} (suppressed as {})",
            email.masked(),
            removed.list_id,
            removed.reason.as_str()
        )?;
    }
    Ok(())
}
