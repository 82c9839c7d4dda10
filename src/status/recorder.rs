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

use crate::background::{Round, Shutdown, Worker};
use crate::clock::Clock;
use crate::metrics::tally::{Count, SERVICE, TALLY};
use crate::state::AppState;
use crate::storage::{Batch, Command, Db, Writer, figures, rollups};

/// The mean time between two rounds: what a crash can lose of the counts (see the module
/// documentation of [`crate::status`]).
pub const TICK: Duration = Duration::from_secs(5);

/// What the worker needs, and the gauges this hour already holds.
#[derive(Debug)]
pub struct Recorder {
    db: Db,
    writer: Writer,
    clock: Arc<dyn Clock>,
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
        let counts = TALLY.take();
        if counts.is_empty() && gauges.is_empty() {
            return Ok(false);
        }
        let command = StoreRollups { hour, counts: counts.clone(), gauges: gauges.clone() };
        if let Err(error) = self.writer.execute(command).await {
            TALLY.give_back(counts);
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
        for (series, value) in &self.gauges {
            rollups::raise(conn, self.hour, SERVICE, series, *value)?;
        }
        Ok(())
    }
}
