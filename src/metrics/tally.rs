//! The status page's tally: every count that [`super`] records is also added here, in memory,
//! until the rollup worker (`crate::status`) takes it and adds it to the hour's rollups in
//! SQLite. Process-wide like the Prometheus recorder beside it (the record functions are free
//! functions, called where the event happens), but independent of it: the tally counts whether
//! or not a metrics listener is configured.
//!
//! Keys are bounded by construction: a configured list id (or `none`), a family and a fixed
//! word. Nothing here knows about time; the worker files what it takes under the hour in which
//! it takes it.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// The list of the service-wide series (mail, queues, webhooks), which belong to no list.
pub const SERVICE: &str = "";

/// What a count is of: a series name is `family` or `family.label`.
pub mod family {
    /// `signups.<outcome>` per list: `accepted`, or a refusal outcome (`signupd_signups_total`).
    pub const SIGNUPS: &str = "signups";
    /// `confirmations` per list, whatever the method.
    pub const CONFIRMATIONS: &str = "confirmations";
    /// `surge_alerts` per list.
    pub const SURGE_ALERTS: &str = "surge_alerts";
    /// `mails.<result>`, service-wide: `sent`, `retry`, `failed`, `capped`.
    pub const MAILS: &str = "mails";
    /// `webhooks.<result>`, service-wide: `delivered`, `retry`, `dropped`.
    pub const WEBHOOKS: &str = "webhooks";
}

/// One count taken from the tally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// A list id, or [`SERVICE`].
    pub list: String,
    /// `family` or `family.label`.
    pub series: String,
    pub value: i64,
}

/// Counts since the last [`Tally::take`], by list and series.
#[derive(Debug, Default)]
pub struct Tally {
    counts: Mutex<BTreeMap<(String, String), i64>>,
}

/// The process's tally, which [`super`]'s record functions add to.
pub static TALLY: Tally = Tally::new();

impl Tally {
    pub const fn new() -> Self {
        Self { counts: Mutex::new(BTreeMap::new()) }
    }

    /// Adds one to `family.label` of `list` (`label` empty: the series is `family`).
    pub fn bump(&self, list: &str, family: &'static str, label: &'static str) {
        let series = if label.is_empty() { family.to_owned() } else { format!("{family}.{label}") };
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        *counts.entry((list.to_owned(), series)).or_default() += 1;
    }

    /// Takes every count, leaving the tally empty.
    pub fn take(&self) -> Vec<Count> {
        let counts = std::mem::take(&mut *self.counts.lock().unwrap_or_else(PoisonError::into_inner));
        counts.into_iter().map(|((list, series), value)| Count { list, series, value }).collect()
    }

    /// Puts back counts that could not be stored, so the next take carries them.
    pub fn give_back(&self, taken: Vec<Count>) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        for Count { list, series, value } in taken {
            *counts.entry((list, series)).or_default() += value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_by_list_and_series_and_a_take_empties_the_tally() {
        let tally = Tally::new();
        tally.bump("news", family::SIGNUPS, "accepted");
        tally.bump("news", family::SIGNUPS, "accepted");
        tally.bump("news", family::SIGNUPS, "rate_limited");
        tally.bump("news", family::CONFIRMATIONS, "");
        tally.bump(SERVICE, family::MAILS, "sent");

        let taken = tally.take();

        let found: Vec<(&str, &str, i64)> =
            taken.iter().map(|count| (count.list.as_str(), count.series.as_str(), count.value)).collect();
        assert_eq!(
            found,
            [
                ("", "mails.sent", 1),
                ("news", "confirmations", 1),
                ("news", "signups.accepted", 2),
                ("news", "signups.rate_limited", 1)
            ]
        );
        assert!(tally.take().is_empty());
        tally.bump("news", family::SIGNUPS, "accepted");
        tally.give_back(taken);
        let again = tally.take();
        assert!(
            again.contains(&Count { list: "news".into(), series: "signups.accepted".into(), value: 3 }),
            "{again:?}"
        );
    }
}
