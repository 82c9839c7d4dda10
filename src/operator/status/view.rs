//! What the status page shows, before any drawing: the range asked for, its buckets (hours or
//! days, UTC), and every stored series summed into them — counts added up, gauges (the
//! `queue.*` series) as their largest hour. And per list, each source's accepted signups and
//! confirmations summed over the whole range, for the table by source ([`SourceTable`]).

use std::collections::BTreeMap;

use crate::clock::UnixSeconds;
use crate::metrics::tally::{NO_SOURCE, OTHER_SOURCES, SourceFigures, is_named_source};
use crate::storage::rollups::{GAUGE_PREFIX, HOUR, Rollup, hour_of};

/// The two views of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// The current hour and the 47 before it, by hour.
    Hours48,
    /// The current UTC day and the 29 before it, by day.
    Days30,
}

impl Range {
    /// `?range=48h` (the default) or `?range=30d`; anything else is `None`.
    pub fn parse(value: Option<&str>) -> Option<Self> {
        match value {
            None | Some("48h") => Some(Self::Hours48),
            Some("30d") => Some(Self::Days30),
            Some(_) => None,
        }
    }

    pub fn query(self) -> &'static str {
        match self {
            Self::Hours48 => "48h",
            Self::Days30 => "30d",
        }
    }

    /// Hours per bucket.
    pub fn bucket_hours(self) -> i64 {
        match self {
            Self::Hours48 => 1,
            Self::Days30 => 24,
        }
    }

    pub fn buckets(self) -> i64 {
        match self {
            Self::Hours48 => 48,
            Self::Days30 => 30,
        }
    }

    /// The first hour of the first bucket at `now`.
    pub fn first_hour(self, now: UnixSeconds) -> i64 {
        let current = hour_of(now);
        let bucket = self.bucket_hours();
        current.div_euclid(bucket) * bucket - (self.buckets() - 1) * bucket
    }

    /// The hours the page reads at `now`, first and last included.
    pub fn hours(self, now: UnixSeconds) -> (i64, i64) {
        (self.first_hour(now), hour_of(now))
    }
}

/// The buckets of a range and every series summed into them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    pub range: Range,
    /// The first hour of each bucket, oldest first.
    pub starts: Vec<i64>,
    /// The current hour: later rows are left out.
    last: i64,
    /// Per list (`""`: service-wide), per series, one value per bucket.
    series: BTreeMap<String, BTreeMap<String, Vec<i64>>>,
    /// Per list, per source key, over the whole range.
    sources: BTreeMap<String, BTreeMap<String, SourceFigures>>,
}

/// A list's sources over a range, as the page shows them: like `signupd stats`, the largest
/// by name, the rest summed, the signups without a source apart.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceTable {
    /// At most the `top` asked for, most accepted signups first (ties by name).
    pub named: Vec<(String, SourceFigures)>,
    /// The named sources past `top`, and those the hours summed as [`OTHER_SOURCES`] (past
    /// their bound); `None` when there are none.
    pub other: Option<OtherSources>,
    /// Signups without a source, and confirmations of rows without one.
    pub none: Option<SourceFigures>,
}

/// What a [`SourceTable`] sums as other sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtherSources {
    /// How many sources by name are summed here.
    pub named: usize,
    /// Whether some hours summed sources past their bound too, which have no name left.
    pub beyond_the_bound: bool,
    pub figures: SourceFigures,
}

/// Whether a series is a gauge (its hour holds the largest sample, and a day its largest hour)
/// rather than a count.
pub fn is_gauge(series: &str) -> bool {
    series.starts_with(GAUGE_PREFIX)
}

/// Sums `rows` into the buckets of `range` at `now` ([`Aggregate::add`] each).
pub fn aggregate(rows: &[Rollup], range: Range, now: UnixSeconds) -> Aggregate {
    let mut aggregate = Aggregate::new(range, now);
    for row in rows {
        aggregate.add(row.hour, &row.list, &row.series, row.value);
    }
    aggregate
}

impl Aggregate {
    /// The empty buckets of `range` at `now`.
    pub fn new(range: Range, now: UnixSeconds) -> Self {
        let first = range.first_hour(now);
        let starts = (0..range.buckets()).map(|index| first + index * range.bucket_hours()).collect();
        Self { range, starts, last: hour_of(now), series: BTreeMap::new(), sources: BTreeMap::new() }
    }

    /// Adds one stored hour of a source of `list`; the caller reads only the range's hours.
    pub fn add_source(&mut self, list: &str, source: &str, figures: SourceFigures) {
        if !self.sources.contains_key(list) {
            self.sources.insert(list.to_owned(), BTreeMap::new());
        }
        let Some(of_list) = self.sources.get_mut(list) else { return };
        match of_list.get_mut(source) {
            Some(held) => held.add(figures),
            None => {
                of_list.insert(source.to_owned(), figures);
            }
        }
    }

    /// The sources of `list` over the range: the `top` largest by name, the rest summed.
    pub fn sources(&self, list: &str, top: usize) -> SourceTable {
        let Some(of_list) = self.sources.get(list) else { return SourceTable::default() };
        let mut named: Vec<(String, SourceFigures)> = of_list
            .iter()
            .filter(|(source, _)| is_named_source(source))
            .map(|(source, figures)| (source.clone(), *figures))
            .collect();
        named.sort_by(|(a, x), (b, y)| y.signups.cmp(&x.signups).then_with(|| a.cmp(b)));
        let rest = named.split_off(top.min(named.len()));
        let beyond = of_list.get(OTHER_SOURCES).copied();
        let other = (!rest.is_empty() || beyond.is_some()).then(|| {
            let mut figures = beyond.unwrap_or_default();
            for (_, each) in &rest {
                figures.add(*each);
            }
            OtherSources { named: rest.len(), beyond_the_bound: beyond.is_some(), figures }
        });
        SourceTable { named, other, none: of_list.get(NO_SOURCE).copied() }
    }

    /// Adds one stored hour: a count to its bucket's sum, a gauge to its bucket's maximum. An
    /// hour outside the range is left out. Allocates only for a list or series not seen yet, so
    /// summing 30 days of hours costs two map lookups each.
    pub fn add(&mut self, hour: i64, list: &str, series: &str, value: i64) {
        let first = self.starts.first().copied().unwrap_or(0);
        let Ok(index) = usize::try_from((hour - first).div_euclid(self.range.bucket_hours())) else { return };
        if index >= self.starts.len() || hour > self.last {
            return;
        }
        let buckets = self.starts.len();
        if !self.series.contains_key(list) {
            self.series.insert(list.to_owned(), BTreeMap::new());
        }
        let Some(of_list) = self.series.get_mut(list) else { return };
        if !of_list.contains_key(series) {
            of_list.insert(series.to_owned(), vec![0; buckets]);
        }
        let Some(values) = of_list.get_mut(series) else { return };
        if is_gauge(series) {
            values[index] = values[index].max(value);
        } else {
            values[index] += value;
        }
    }

    /// The values of `series` of `list`, zeros when nothing was stored.
    pub fn values(&self, list: &str, series: &str) -> Vec<i64> {
        self.series
            .get(list)
            .and_then(|of_list| of_list.get(series))
            .cloned()
            .unwrap_or_else(|| vec![0; self.starts.len()])
    }

    /// The labels of the series of `list` in `family` (`signups` → `accepted`, `rate_limited`…)
    /// that have a value in the range.
    pub fn labels(&self, list: &str, family: &str) -> Vec<String> {
        let prefix = format!("{family}.");
        self.series
            .get(list)
            .into_iter()
            .flatten()
            .filter(|(series, values)| series.starts_with(&prefix) && values.iter().any(|v| *v != 0))
            .map(|(series, _)| series[prefix.len()..].to_owned())
            .collect()
    }

    /// The lists with a value in the range, the service-wide series left out.
    pub fn lists(&self) -> Vec<String> {
        self.series.keys().filter(|list| !list.is_empty()).cloned().collect()
    }

    /// The Unix time a bucket starts at.
    pub fn start_time(&self, index: usize) -> UnixSeconds {
        self.starts.get(index).map_or(0, |hour| hour * HOUR)
    }
}

/// `part` ÷ `whole` as a share, or `None` over nothing.
pub fn rate(part: i64, whole: i64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(hour: i64, list: &str, series: &str, value: i64) -> Rollup {
        Rollup { hour, list: list.into(), series: series.into(), value }
    }

    /// 2026-12-02T09:20:00Z.
    const NOW: UnixSeconds = 1_796_203_200;

    #[test]
    fn thirty_days_sum_the_counts_of_each_day_and_keep_the_largest_hour_of_each_gauge() {
        // Arrange: two hours of today and one of yesterday, for a count and a gauge; an hour
        // of 30 days ago, outside the range
        let today = hour_of(NOW).div_euclid(24) * 24;
        let rows = [
            row(today - 30 * 24 + 5, "news", "signups.accepted", 100),
            row(today - 24 + 3, "news", "signups.accepted", 2),
            row(today - 24 + 3, "", "queue.mail.depth", 9),
            row(today, "news", "signups.accepted", 3),
            row(today, "", "queue.mail.depth", 4),
            row(today + 9, "news", "signups.accepted", 5),
            row(today + 9, "", "queue.mail.depth", 7),
        ];

        // Act
        let days = aggregate(&rows, Range::Days30, NOW);

        // Assert
        assert_eq!(days.starts.len(), 30);
        assert_eq!(days.starts[29], today, "the last bucket is today, from midnight UTC");
        assert_eq!(days.starts[0], today - 29 * 24);
        let accepted = days.values("news", "signups.accepted");
        assert_eq!((accepted[28], accepted[29]), (2, 8), "counts are summed");
        assert_eq!(accepted.iter().sum::<i64>(), 10, "the row of 30 days ago is left out");
        let depth = days.values("", "queue.mail.depth");
        assert_eq!((depth[28], depth[29]), (9, 7), "gauges keep the day's largest hour");
        assert_eq!(days.values("news", "confirmations"), vec![0; 30]);
        assert_eq!(days.labels("news", "signups"), ["accepted"]);
        assert_eq!(days.lists(), ["news"]);
    }

    #[test]
    fn forty_eight_hours_end_with_the_current_hour() {
        let rows = [row(hour_of(NOW), "news", "confirmations", 1), row(hour_of(NOW) - 48, "news", "confirmations", 1)];
        let hours = aggregate(&rows, Range::Hours48, NOW);
        assert_eq!(hours.starts.len(), 48);
        assert_eq!(hours.starts[47], hour_of(NOW));
        assert_eq!(hours.values("news", "confirmations").iter().sum::<i64>(), 1);
        assert_eq!(Range::Hours48.hours(NOW), (hour_of(NOW) - 47, hour_of(NOW)));
    }

    #[test]
    fn sources_are_summed_over_the_range_the_largest_first_the_rest_as_other() {
        // Arrange: hours of news by source, with an hour past its bound and signups without one
        let mut data = Aggregate::new(Range::Days30, NOW);
        let figures = |signups, confirmations| SourceFigures { signups, confirmations };
        for (source, signups, confirmations) in
            [("footer", 4, 2), ("blog", 4, 1), ("footer", 1, 1), ("ads", 9, 0), ("zine", 1, 0), ("", 2, 1)]
        {
            data.add_source("news", source, figures(signups, confirmations));
        }
        data.add_source("news", OTHER_SOURCES, figures(3, 1));

        // Act
        let table = data.sources("news", 2);

        // Assert: by signups, a tie by name; blog and zine summed with the unnamed overflow
        assert_eq!(table.named, [("ads".to_owned(), figures(9, 0)), ("footer".to_owned(), figures(5, 3))]);
        assert_eq!(table.other, Some(OtherSources { named: 2, beyond_the_bound: true, figures: figures(8, 2) }));
        assert_eq!(table.none, Some(figures(2, 1)));
        let all = data.sources("news", 20);
        assert_eq!(all.named.len(), 4);
        assert_eq!(all.named[1].0, "footer", "5 signups before blog's 4");
        assert_eq!(all.other.map(|other| other.named), Some(0), "only the overflow is left over");
        assert_eq!(data.sources("other", 20), SourceTable::default());
    }

    #[test]
    fn the_rate_is_none_over_no_signups() {
        assert_eq!(rate(1, 0), None);
        assert_eq!(rate(1, 4), Some(0.25));
        assert_eq!(Range::parse(Some("7d")), None);
        assert_eq!(Range::parse(None), Some(Range::Hours48));
    }
}
