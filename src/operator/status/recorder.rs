//! The rollup worker: every [`TICK`] (jittered) it takes what the process counted
//! ([`crate::metrics::tally`]), samples each queue's depth and oldest item through a reader, and
//! stores both in one background command of the writer under the current clock hour — counts
//! added, gauges raised to the hour's maximum. Never on a request path: a request only adds one
//! to a counter in memory.
//!
//! A tick with nothing new (no count, no gauge above what this hour already holds) writes
//! nothing. A write that fails puts the counts back into the tally, so the next tick carries
//! them. The last round runs at a clean stop ([`crate::app`]), after the other workers stopped
//! and before the writer closes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::clock::background::{Round, Shutdown, Worker};
use crate::metrics::tally::{Count, SERVICE, SourceCount, TALLY, Tally};
use crate::storage::{Batch, Command, Db, Writer, figures, rollups};
use crate::web::state::AppState;

/// The mean time between two rounds: what a crash can lose of the counts (see the module
/// documentation of [`crate::operator::status`]).
pub const TICK: Duration = Duration::from_secs(5);

/// What the worker needs, and the gauges this hour already holds.
#[derive(Debug)]
pub struct Recorder {
    db: Db,
    writer: Writer,
    clock: Arc<dyn Clock>,
    /// The process's [`TALLY`]; a test's own elsewhere.
    tally: &'static Tally,
    /// The hour of `stored` and the gauges stored for it, so an unchanged queue is not
    /// written again every tick.
    stored: (i64, BTreeMap<String, i64>),
}

impl Recorder {
    pub fn new(state: &AppState) -> Self {
        Self {
            db: state.db.clone(),
            writer: state.writer.clone(),
            clock: state.clock.clone(),
            tally: &TALLY,
            stored: (i64::MIN, BTreeMap::new()),
        }
    }

    /// One round: takes the tally, samples the queues, writes what is new. Returns whether it
    /// wrote.
    pub async fn record(&mut self) -> anyhow::Result<bool> {
        let now = self.clock.now();
        let hour = rollups::hour_of(now);
        let queues = self.db.run(|conn| Ok::<_, anyhow::Error>(figures::queue_depths(conn)?)).await?;
        if self.stored.0 != hour {
            self.stored = (hour, BTreeMap::new());
        }
        let gauges: Vec<(String, i64)> = queues
            .iter()
            .flat_map(|queue| {
                [
                    (format!("queue.{}.depth", queue.name), queue.depth),
                    (format!("queue.{}.oldest_secs", queue.name), queue.oldest_age(now).unwrap_or(0)),
                ]
            })
            .filter(|(series, value)| *value > self.stored.1.get(series).copied().unwrap_or(0))
            .collect();
        let counts = self.tally.take();
        let sources = self.tally.take_sources();
        if counts.is_empty() && sources.is_empty() && gauges.is_empty() {
            return Ok(false);
        }
        let command = StoreRollups { hour, counts: counts.clone(), sources: sources.clone(), gauges: gauges.clone() };
        if let Err(error) = self.writer.execute(command).await {
            self.tally.give_back(counts);
            self.tally.give_back_sources(sources);
            return Err(anyhow::Error::new(error).context("cannot store the status page's rollups"));
        }
        self.stored.1.extend(gauges);
        Ok(true)
    }
}

impl Worker for Recorder {
    fn name(&self) -> &str {
        "rollup worker"
    }

    fn tick(&self) -> Duration {
        TICK
    }

    async fn round(&mut self, _: &mut Shutdown) -> anyhow::Result<Round> {
        // However much it wrote, the next round waits a tick: it is the tick that batches.
        self.record().await.map(|_| Round::Idle)
    }
}

/// One round's counts and gauges, for one hour.
struct StoreRollups {
    hour: i64,
    counts: Vec<Count>,
    /// Accepted signups and confirmations by source.
    sources: Vec<SourceCount>,
    /// Service-wide gauges, each above what the hour holds.
    gauges: Vec<(String, i64)>,
}

impl Command for StoreRollups {
    type Output = ();
    // Not a visitor's request: it commits apart from theirs.
    const BACKGROUND: bool = true;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
        let conn = batch.conn();
        for count in &self.counts {
            rollups::add(conn, self.hour, &count.list, &count.series, count.value)?;
        }
        for count in &self.sources {
            rollups::add_source(conn, self.hour, &count.list, &count.source, count.figures)?;
        }
        for (series, value) in &self.gauges {
            rollups::raise(conn, self.hour, SERVICE, series, *value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::metrics::tally::{SourceFigures, family};

    /// 2026-12-02T09:20:00Z.
    const NOW: i64 = 1_796_203_200;

    fn stored(path: &std::path::Path) -> Vec<(i64, String, String, i64)> {
        let conn = rusqlite::Connection::open(path).unwrap();
        rollups::between(&conn, 0, i64::MAX)
            .unwrap()
            .into_iter()
            .map(|row| (row.hour, row.list, row.series, row.value))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_round_stores_new_counts_and_risen_gauges_and_a_round_with_nothing_new_writes_nothing() {
        // Arrange: a migrated database, a tally of this test's own, an injected clock
        static OWN: Tally = Tally::new();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let writer = Writer::start(&path, 2).unwrap();
        let clock = ManualClock::starting_at(NOW);
        let mut recorder = Recorder {
            db: Db::open_readers(&path).unwrap(),
            writer: writer.clone(),
            clock: Arc::new(clock.clone()),
            tally: &OWN,
            stored: (i64::MIN, BTreeMap::new()),
        };
        let hour = rollups::hour_of(NOW);

        // Act + Assert: empty queues and no counts write nothing
        let batches = writer.batches_committed();
        assert!(!recorder.record().await.unwrap());
        assert_eq!(writer.batches_committed(), batches);

        // Act + Assert: counts are added to the hour, a webhook waiting 60 s is a gauge
        OWN.bump("news", family::SIGNUPS, "accepted");
        OWN.bump("news", family::SIGNUPS, "accepted");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute(
                "INSERT INTO webhook_deliveries (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at)
                 VALUES ('crm', 'e', 'confirmed', 's', '{}', ?1, ?1)",
                [NOW - 60],
            )
            .unwrap();
        assert!(recorder.record().await.unwrap());
        let expected = vec![
            (hour, String::new(), "queue.webhook.depth".to_owned(), 1),
            (hour, String::new(), "queue.webhook.oldest_secs".to_owned(), 60),
            (hour, "news".to_owned(), "signups.accepted".to_owned(), 2),
        ];
        assert_eq!(stored(&path), expected);

        // Act + Assert: a source's figures alone are a round's write, under the hour
        OWN.add_source("news", Some("footer"), SourceFigures { signups: 1, confirmations: 0 });
        assert!(recorder.record().await.unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut sources = Vec::new();
        rollups::visit_sources_between(&conn, hour, hour, |list, source, figures| {
            sources.push((list.to_owned(), source.to_owned(), figures.signups))
        })
        .unwrap();
        assert_eq!(sources, [("news".to_owned(), "footer".to_owned(), 1)]);

        // Act + Assert: the same depth again is not written; the older item raises its gauge
        clock.advance(Duration::from_secs(30));
        assert!(recorder.record().await.unwrap());
        assert_eq!(stored(&path)[1].3, 90, "the oldest item's age rose");
        let batches = writer.batches_committed();
        OWN.bump("news", family::SIGNUPS, "accepted");
        assert!(recorder.record().await.unwrap());
        assert_eq!(stored(&path)[2].3, 3, "added to the hour's count");
        assert_eq!(stored(&path)[0].3, 1, "the depth stayed");
        assert_eq!(writer.batches_committed(), batches + 1, "one command per round");

        // Act + Assert: a new hour starts its own rows
        clock.advance(Duration::from_secs(3600));
        assert!(recorder.record().await.unwrap(), "the gauges of the new hour");
        assert!(stored(&path).iter().any(|row| row.0 == hour + 1 && row.2 == "queue.webhook.depth"));
        writer.close().await.unwrap();
    }
}
