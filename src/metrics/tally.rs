//! The status page's tally: every count that [`super`] records is also added here, in memory,
//! until the rollup worker (`crate::operator::status`) takes it and adds it to the hour's rollups in
//! SQLite. Process-wide like the Prometheus recorder beside it (the record functions are free
//! functions, called where the event happens), but independent of it: the tally counts whether
//! or not a metrics listener is configured.
//!
//! Keys are bounded by construction: a configured list id (or `none`), a family and a fixed
//! word. Nothing here knows about time; the worker files what it takes under the hour in which
//! it takes it.
//!
//! Beside them, per list, the accepted signups and the confirmations by `source` (the status
//! page's table of confirmation rates by source). A source is whatever the form sent, so these
//! keys are bounded by a rule rather than by construction: at most [`SOURCES_PER_HOUR`] sources
//! of a list by name, the rest summed under [`OTHER_SOURCES`] (the rollups apply the same rule
//! to each hour, `storage::rollups::add_source`).

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
    /// `webhooks.<result>`, service-wide: `delivered`, `retry`, `dropped`, of the webhook
    /// endpoints only.
    pub const WEBHOOKS: &str = "webhooks";
    /// `destinations.<name>.<result>`, service-wide: `delivered`, `retry`, `dropped`, of each
    /// destination (its name is `a-z`, `0-9` and `-`, so the dots stay separators). Bounded by the
    /// configured destinations.
    pub const DESTINATIONS: &str = "destinations";
}

/// The source key of signups that carried no source.
pub const NO_SOURCE: &str = "";
/// The source key that sums the sources past [`SOURCES_PER_HOUR`]. Never a source's name: a
/// source has no parentheses.
pub const OTHER_SOURCES: &str = "(other)";
/// The most sources of one list held by name, in the tally and in each hour's rollups.
pub const SOURCES_PER_HOUR: usize = 100;

/// Whether `key` names a source, rather than [`NO_SOURCE`] or [`OTHER_SOURCES`].
pub fn is_named_source(key: &str) -> bool {
    key != NO_SOURCE && key != OTHER_SOURCES
}

/// Accepted signups and confirmations of one source (or of several, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceFigures {
    pub signups: i64,
    pub confirmations: i64,
}

impl SourceFigures {
    pub fn add(&mut self, other: Self) {
        self.signups += other.signups;
        self.confirmations += other.confirmations;
    }
}

/// One source's figures taken from the tally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCount {
    pub list: String,
    /// A source, [`NO_SOURCE`] or [`OTHER_SOURCES`].
    pub source: String,
    pub figures: SourceFigures,
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
    /// Per list, per source key.
    sources: Mutex<BTreeMap<String, BTreeMap<String, SourceFigures>>>,
}

/// The process's tally, which [`super`]'s record functions add to.
pub static TALLY: Tally = Tally::new();

impl Tally {
    pub const fn new() -> Self {
        Self { counts: Mutex::new(BTreeMap::new()), sources: Mutex::new(BTreeMap::new()) }
    }

    /// Adds one to `family.label` of `list` (`label` empty: the series is `family`).
    pub fn bump(&self, list: &str, family: &'static str, label: &'static str) {
        let series = if label.is_empty() { family.to_owned() } else { format!("{family}.{label}") };
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        *counts.entry((list.to_owned(), series)).or_default() += 1;
    }

    /// Adds one to `destinations.<destination>.<result>`, service-wide ([`family::DESTINATIONS`]).
    pub fn bump_destination(&self, destination: &str, result: &'static str) {
        let series = format!("{}.{destination}.{result}", family::DESTINATIONS);
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        *counts.entry((SERVICE.to_owned(), series)).or_default() += 1;
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

    /// Adds `figures` to `source` of `list` (`None`: the signup carried none); past
    /// [`SOURCES_PER_HOUR`] named sources of the list, to [`OTHER_SOURCES`].
    pub fn add_source(&self, list: &str, source: Option<&str>, figures: SourceFigures) {
        let mut sources = self.sources.lock().unwrap_or_else(PoisonError::into_inner);
        if !sources.contains_key(list) {
            sources.insert(list.to_owned(), BTreeMap::new());
        }
        let Some(of_list) = sources.get_mut(list) else { return };
        add_bounded(of_list, source.unwrap_or(NO_SOURCE), figures);
    }

    /// Takes every source's figures, leaving them empty.
    pub fn take_sources(&self) -> Vec<SourceCount> {
        let sources = std::mem::take(&mut *self.sources.lock().unwrap_or_else(PoisonError::into_inner));
        sources
            .into_iter()
            .flat_map(|(list, of_list)| {
                of_list.into_iter().map(move |(source, figures)| SourceCount { list: list.clone(), source, figures })
            })
            .collect()
    }

    /// Puts back figures that could not be stored, under the same bound.
    pub fn give_back_sources(&self, taken: Vec<SourceCount>) {
        let mut sources = self.sources.lock().unwrap_or_else(PoisonError::into_inner);
        for SourceCount { list, source, figures } in taken {
            add_bounded(sources.entry(list).or_default(), &source, figures);
        }
    }
}

/// Adds `figures` under `key`, or under [`OTHER_SOURCES`] when `key` is a source not held yet
/// and [`SOURCES_PER_HOUR`] are. Two map lookups: the named count is the map's size less the
/// two keys that are not sources.
fn add_bounded(of_list: &mut BTreeMap<String, SourceFigures>, key: &str, figures: SourceFigures) {
    if let Some(held) = of_list.get_mut(key) {
        held.add(figures);
        return;
    }
    let unnamed = usize::from(of_list.contains_key(NO_SOURCE)) + usize::from(of_list.contains_key(OTHER_SOURCES));
    let key = if is_named_source(key) && of_list.len() - unnamed >= SOURCES_PER_HOUR { OTHER_SOURCES } else { key };
    of_list.entry(key.to_owned()).or_default().add(figures);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNUP: SourceFigures = SourceFigures { signups: 1, confirmations: 0 };
    const CONFIRMATION: SourceFigures = SourceFigures { signups: 0, confirmations: 1 };

    #[test]
    fn sources_past_the_bound_are_summed_as_other_and_none_is_apart() {
        // Arrange: the bound's sources on news, then more; signups without a source
        let tally = Tally::new();
        for n in 0..SOURCES_PER_HOUR {
            tally.add_source("news", Some(&format!("s{n:03}")), SIGNUP);
        }
        tally.add_source("news", None, SIGNUP);
        tally.add_source("news", None, CONFIRMATION);

        // Act: 50 new sources, and one that is held already; another list's own
        for n in 0..50 {
            tally.add_source("news", Some(&format!("late{n}")), SIGNUP);
        }
        tally.add_source("news", Some("s007"), CONFIRMATION);
        tally.add_source("other", Some("late1"), SIGNUP);
        let taken = tally.take_sources();

        // Assert
        let news: Vec<&SourceCount> = taken.iter().filter(|count| count.list == "news").collect();
        assert_eq!(news.len(), SOURCES_PER_HOUR + 2, "the named sources, none and other");
        let find = |list: &str, source: &str| {
            taken.iter().find(|count| count.list == list && count.source == source).map(|count| count.figures)
        };
        assert_eq!(find("news", OTHER_SOURCES), Some(SourceFigures { signups: 50, confirmations: 0 }));
        assert_eq!(find("news", NO_SOURCE), Some(SourceFigures { signups: 1, confirmations: 1 }));
        assert_eq!(find("news", "s007"), Some(SourceFigures { signups: 1, confirmations: 1 }));
        assert_eq!(find("news", "late1"), None);
        assert_eq!(find("other", "late1"), Some(SIGNUP), "each list has its own bound");
        assert!(tally.take_sources().is_empty());

        // Act + Assert: what is given back keeps the bound, and adds to what came since
        tally.add_source("news", Some("new"), SIGNUP);
        tally.give_back_sources(taken);
        let again = tally.take_sources();
        assert_eq!(again.iter().filter(|count| count.list == "news").count(), SOURCES_PER_HOUR + 2);
        let other: i64 = again
            .iter()
            .filter(|count| count.list == "news" && count.source == OTHER_SOURCES)
            .map(|count| count.figures.signups)
            .sum();
        assert_eq!(other, 50 + 1, "the source that came first now holds a place, s099 did not fit");
        let total: i64 = again.iter().map(|count| count.figures.signups).sum();
        assert_eq!(total, i64::try_from(SOURCES_PER_HOUR).unwrap() + 1 + 50 + 1 + 1, "nothing lost");
    }

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
