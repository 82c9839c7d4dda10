//! The one writer: a thread that owns the only read-write connection to the database. Every
//! write the program makes is a [`Command`] sent to it through a [`Writer`] handle; everything
//! else reads through the `query_only` pool of [`super::Db`].
//!
//! The thread takes every command that is waiting (up to [`MAX_BATCH`]), runs them in one
//! `BEGIN IMMEDIATE` transaction, each under its own savepoint, commits once, and only then
//! answers each caller. So:
//!
//! - "persist first, then answer" holds for every acknowledged request: no answer leaves before
//!   the commit (and its fsync, `synchronous = FULL`) that made it durable;
//! - one fsync serves every write of a batch, which is what makes a bot wave cheap;
//! - SQLite's write lock never changes hands inside the process, so no writer polls a busy
//!   handler for another; only other processes (a CLI command, a backup) can make it wait;
//! - a command that fails rolls back to its own savepoint and answers with its error; its
//!   neighbours in the batch are committed as if it had never run. If the transaction itself
//!   cannot begin or commit, every command of the batch answers [`WriteError::Unavailable`] and
//!   nothing of it is kept.
//!
//! Beside it, a checkpointer thread with a `query_only` connection copies committed WAL frames
//! into the database file (`PASSIVE`), so no commit waits for a checkpoint.
//!
//! [`Writer::close`] (a clean stop, after serving ended) lets the commands already sent finish,
//! stops the checkpointer, runs one `PRAGMA wal_checkpoint(TRUNCATE)` and closes both
//! connections. With the readers closed before ([`super::Db::close`]), that is the last
//! connection, and SQLite removes the `-wal` and `-shm` files: only the database file stays.
//! Should another connection still be open (a reader in use, `signupd backup`, Litestream), the
//! files stay, the `-wal` emptied when nobody reads an older snapshot.
//!
//! Why the TRUNCATE at exit is safe beside Litestream (`docs/disaster-recovery.md`), though
//! signupd's checkpoints are PASSIVE while it runs: it comes after the last write, so no commit
//! waits for it; and Litestream keeps a read transaction open on the database, so the checkpoint
//! cannot restart the WAL under it (TRUNCATE then gives up after the lock wait, [`LOCK_WAIT`],
//! and nothing changes), nor can the close delete the WAL while Litestream's connection is
//! open. Only with Litestream stopped does the WAL go; Litestream then notices the new WAL
//! header at its next start and takes a fresh snapshot, as that guide says.
//!
//! Readiness ([`Writer::is_ready`], behind the public `/readyz`) is an empty command through the
//! same thread, so it is rationed: a probe's answer is reused for [`READY_PROBE_INTERVAL`] from
//! the moment the probe began, and callers that arrive while a probe runs wait for it and take
//! its answer, so a flood of `/readyz` costs at most one probe a second. A failure is reused like
//! a success, except that a probe which failed by waiting out another process's write lock
//! ([`LOCK_WAIT`], no shorter than the interval) is already stale when it answers: the next caller
//! probes again, and sees at once that the lock is gone.
//!
//! Adding a write: define a struct with what it needs, `impl Command` for it (the SQL goes in
//! `execute`, against the connection it is given), and call `writer.execute(command).await`.
//! Keep `execute` short and free of crypto or I/O the caller could do first: the writer thread
//! is the one place every write waits for.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::batch::{Batch, Counters};
use super::migrations;

/// Most commands committed together: bounds how long one transaction holds the write lock.
pub const MAX_BATCH: usize = 1024;
/// Commands waiting for the writer; beyond this, callers wait (backpressure), nothing is dropped.
const CHANNEL_CAPACITY: usize = 8192;
/// How long the writer waits for another process's write lock before the batch fails. Short, so
/// a locked database answers `503` within 2 s (a command that arrives during a failed wait fails
/// with that batch).
pub const LOCK_WAIT: Duration = Duration::from_secs(1);
/// How long the writer sleeps between two tries while another process holds the write lock.
/// SQLite's own `busy_timeout` sleeps up to 100 ms between tries.
const LOCK_RETRY: Duration = Duration::from_micros(500);

/// How long one readiness probe's answer is reused, counted from when the probe began.
pub const READY_PROBE_INTERVAL: Duration = Duration::from_secs(1);
// A probe that fails on another process's lock answers after `LOCK_WAIT`: when that is no shorter
// than the interval, such a failure is never reused, and recovery shows at the next call.
const _: () = assert!(LOCK_WAIT.as_nanos() >= READY_PROBE_INTERVAL.as_nanos());

/// A write, executed on the writer thread inside the batch transaction, under its own savepoint.
pub trait Command: Send + 'static {
    type Output: Send + 'static;

    /// Background work (applying intake, the cleanup) commits apart from the requests' commands:
    /// one such command at a time, in a commit of its own, between two batches of the others.
    /// So a request never waits in its own commit for a chunk of work that is not its own, and
    /// the background work still gets a turn after every batch, however busy the writer is.
    const BACKGROUND: bool = false;

    /// The command writes with at most one SQL statement (the batch's counters aside), which
    /// SQLite makes atomic by itself: it runs without a savepoint of its own, which saves the
    /// writer two statements and a copy of every page it changes. A failure leaves nothing of it.
    const ATOMIC: bool = false;

    /// Does the write, through `batch.conn()` and the batch's counters. An error rolls back what
    /// this command did, and only that.
    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Self::Output>;
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The command failed; what it wrote was rolled back, the rest of its batch committed.
    #[error(transparent)]
    Rejected(anyhow::Error),
    /// The batch could not be committed (the database is locked by another process, full, or
    /// unwritable); nothing of it was kept.
    #[error("the database cannot be written: {0:#}")]
    Unavailable(Arc<anyhow::Error>),
    #[error("the database writer has stopped")]
    Stopped,
}

/// The handle every writer of the program uses; cheap to clone. The thread ends when the last
/// handle is dropped or one handle is [closed](Writer::close), after the commands already sent.
#[derive(Debug, Clone)]
pub struct Writer {
    sender: mpsc::Sender<Message>,
    batches: Arc<AtomicU64>,
    /// Foreground commands sent through [`Writer::execute`] ([`Writer::demand`]).
    demand: Arc<AtomicU64>,
    migrations_applied: usize,
    readiness: Arc<Readiness>,
}

/// The last readiness probe, shared by every handle.
#[derive(Debug, Default)]
struct Readiness {
    /// Held while a probe runs, so concurrent callers wait for its answer instead of probing.
    last: tokio::sync::Mutex<Option<LastProbe>>,
    probes: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct LastProbe {
    began: Instant,
    ended: Instant,
    ready: bool,
}

impl Writer {
    /// Opens the read-write connection (WAL, `synchronous = FULL`, foreign keys, a page cache of
    /// `cache_mib`), applies pending migrations on it, and starts the writer thread.
    pub fn start(path: &Path, cache_mib: u32) -> anyhow::Result<Self> {
        let mut conn = open(path, cache_mib)?;
        let migrations_applied =
            migrations::migrate(&mut conn).with_context(|| format!("database {}", path.display()))?;
        Self::spawn(conn, migrations_applied)
    }

    /// Like [`Writer::start`], for a command beside a running server: it never migrates, and
    /// refuses a database whose schema is not the one this binary writes.
    pub fn attach(path: &Path) -> anyhow::Result<Self> {
        let conn = open(path, ATTACHED_CACHE_MIB)?;
        let version = migrations::schema_version(&conn).with_context(|| format!("database {}", path.display()))?;
        anyhow::ensure!(
            version == migrations::LATEST_VERSION,
            "database {} has schema version {version}, this signupd writes version {}: run `signupd migrate` (or start `serve`) with this binary first",
            path.display(),
            migrations::LATEST_VERSION
        );
        Self::spawn(conn, 0)
    }

    fn spawn(conn: Connection, migrations_applied: usize) -> anyhow::Result<Self> {
        let (sender, receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let batches = Arc::new(AtomicU64::new(0));
        let counter = batches.clone();
        let checkpoints = Connection::open(conn.path().unwrap_or_default()).context("cannot open the checkpointer")?;
        checkpoints.pragma_update(None, "query_only", "ON")?;
        let watched = batches.clone();
        // The checkpointer runs until the writer thread drops `stop_checkpoints`.
        let (stop_checkpoints, stopped) = std::sync::mpsc::channel::<()>();
        let checkpointer = std::thread::Builder::new()
            .name("signupd-checkpoint".into())
            .spawn(move || checkpoint_until(checkpoints, &watched, &stopped))
            .context("cannot start the checkpointer thread")?;
        std::thread::Builder::new()
            .name("signupd-writer".into())
            .spawn(move || {
                let closers = run(&conn, receiver, &counter);
                drop(stop_checkpoints);
                let closed = shut_down(conn, checkpointer);
                for reply in closers {
                    let _ = reply.send(closed.as_ref().map(|_| ()).map_err(|error| anyhow::anyhow!("{error:#}")));
                }
            })
            .context("cannot start the database writer thread")?;
        Ok(Self { sender, batches, demand: Arc::default(), migrations_applied, readiness: Arc::default() })
    }

    /// Runs `command` in the next batch and returns its output once the batch is committed.
    pub async fn execute<C: Command>(&self, command: C) -> Result<C::Output, WriteError> {
        if !C::BACKGROUND {
            self.demand.fetch_add(1, Ordering::Relaxed);
        }
        self.execute_uncounted(command).await
    }

    /// [`Writer::execute`] without counting the command in [`Writer::demand`]: for a worker that
    /// yields to the demand, so that it never yields to its own writes.
    pub async fn execute_uncounted<C: Command>(&self, command: C) -> Result<C::Output, WriteError> {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn Queued> =
            Box::new(Envelope { queued_at: Instant::now(), command: Some(command), outcome: None, reply: Some(reply) });
        self.sender.send(Message::Write(job)).await.map_err(|_| WriteError::Stopped)?;
        answer.await.map_err(|_| WriteError::Stopped)?
    }

    /// Stops the writer for every handle: the commands sent before run and commit, later ones
    /// answer [`WriteError::Stopped`]; then the checkpointer stops, the WAL is checkpointed with
    /// `TRUNCATE` and both connections close (see the module documentation). Returns once they
    /// are closed. A writer already stopped is fine. For a clean stop, after the last write.
    pub async fn close(&self) -> anyhow::Result<()> {
        let (reply, closed) = oneshot::channel();
        if self.sender.send(Message::Close(reply)).await.is_err() {
            return Ok(());
        }
        closed.await.unwrap_or(Ok(()))
    }

    /// How many foreground commands have been sent so far (requests' writes and the workers'
    /// that count): sampled twice, how busy the pages keep the writer.
    pub fn demand(&self) -> u64 {
        self.demand.load(Ordering::Relaxed)
    }

    /// Batches committed since start (for tests that check what shared a commit).
    pub fn batches_committed(&self) -> u64 {
        self.batches.load(Ordering::SeqCst)
    }

    /// How many migrations [`Writer::start`] applied.
    pub fn migrations_applied(&self) -> usize {
        self.migrations_applied
    }

    /// Whether the database is migrated and could take a write within the last
    /// [`READY_PROBE_INTERVAL`]: the answer of an empty command, for which a batch must begin
    /// (take the write lock) and commit, rationed as the module documentation says.
    pub async fn is_ready(&self) -> bool {
        let asked = Instant::now();
        let mut last = self.readiness.last.lock().await;
        if let Some(probe) = *last
            && (probe.ended >= asked || probe.began.elapsed() < READY_PROBE_INTERVAL)
        {
            return probe.ready;
        }
        let began = Instant::now();
        self.readiness.probes.fetch_add(1, Ordering::SeqCst);
        let ready = match self.execute(Probe).await {
            Ok(version) => version == migrations::LATEST_VERSION,
            Err(error) => {
                tracing::warn!(error = %error, "readiness probe: the database cannot be written");
                false
            }
        };
        *last = Some(LastProbe { began, ended: Instant::now(), ready });
        ready
    }

    /// Readiness probes run since start (for tests that check they are rationed).
    #[doc(hidden)]
    pub fn readiness_probes(&self) -> u64 {
        self.readiness.probes.load(Ordering::SeqCst)
    }
}

/// Reads the schema version inside a write transaction: answers only when a batch committed.
struct Probe;

impl Command for Probe {
    type Output = usize;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<usize> {
        Ok(migrations::schema_version(batch.conn())?)
    }
}

/// What the writer thread receives.
enum Message {
    Write(Box<dyn Queued>),
    /// Stop after the commands sent before; answered once the connections are closed.
    Close(oneshot::Sender<anyhow::Result<()>>),
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Write(_) => "Write",
            Self::Close(_) => "Close",
        })
    }
}

/// A command waiting in the channel, its type erased.
trait Queued: Send {
    /// Runs the command; `false` when it failed (and must be rolled back to its savepoint).
    fn execute(&mut self, batch: &mut Batch<'_>) -> bool;
    /// Answers the caller once the batch's fate is known.
    fn answer(self: Box<Self>, batch: Result<(), &Arc<anyhow::Error>>);
    fn queued_at(&self) -> Instant;
    /// [`Command::BACKGROUND`].
    fn is_background(&self) -> bool;
    /// [`Command::ATOMIC`].
    fn is_atomic(&self) -> bool;
}

impl std::fmt::Debug for dyn Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

struct Envelope<C: Command> {
    queued_at: Instant,
    command: Option<C>,
    outcome: Option<anyhow::Result<C::Output>>,
    reply: Option<oneshot::Sender<Result<C::Output, WriteError>>>,
}

impl<C: Command> Queued for Envelope<C> {
    fn queued_at(&self) -> Instant {
        self.queued_at
    }

    fn is_background(&self) -> bool {
        C::BACKGROUND
    }

    fn is_atomic(&self) -> bool {
        C::ATOMIC
    }

    fn execute(&mut self, batch: &mut Batch<'_>) -> bool {
        let Some(command) = self.command.take() else {
            return false;
        };
        // A panicking command must not take the writer (and every later write) down with it.
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| command.execute(batch)))
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the command panicked")));
        let ok = outcome.is_ok();
        self.outcome = Some(outcome);
        ok
    }

    fn answer(mut self: Box<Self>, batch: Result<(), &Arc<anyhow::Error>>) {
        let Some(reply) = self.reply.take() else {
            return;
        };
        let answer = match (batch, self.outcome.take()) {
            (Ok(()), Some(Ok(output))) => Ok(output),
            (Ok(()), Some(Err(error))) => Err(WriteError::Rejected(error)),
            (Ok(()), None) => Err(WriteError::Unavailable(Arc::new(anyhow::anyhow!("the command did not run")))),
            (Err(error), _) => Err(WriteError::Unavailable(error.clone())),
        };
        // The caller may have gone (a client that hung up); what was committed stays committed.
        let _ = reply.send(answer);
    }
}

/// Copies committed WAL frames into the database file, beside the writer rather than on its
/// thread: an automatic checkpoint runs inside the commit that crosses the threshold, and every
/// request waiting for that commit would wait for the copy and its fsync too. PASSIVE never
/// blocks the writer or a reader. Runs until `stop` is dropped (the writer thread is ending),
/// then closes its connection.
fn checkpoint_until(conn: Connection, batches: &AtomicU64, stop: &std::sync::mpsc::Receiver<()>) {
    let mut checkpointed = 0;
    // The wait for the stop paces the loop, and ends it at once when the writer stops.
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT_EVERY) {
        let committed = batches.load(Ordering::SeqCst);
        if committed != checkpointed {
            match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                Ok(()) => checkpointed = committed,
                Err(error) => tracing::warn!(error = %error, "WAL checkpoint failed; trying again"),
            }
        }
    }
    if let Err((_, error)) = conn.close() {
        tracing::warn!(error = %error, "cannot close the checkpointer's connection");
    }
}

/// The writer's last step: waits for the checkpointer to close its connection, folds the WAL
/// into the database file and empties it (`TRUNCATE`), and closes the writer's connection; when
/// that was the last connection, SQLite removes the `-wal` and `-shm` files.
fn shut_down(conn: Connection, checkpointer: std::thread::JoinHandle<()>) -> anyhow::Result<()> {
    if checkpointer.join().is_err() {
        tracing::warn!("the checkpointer thread panicked");
    }
    // `(busy, log pages, checkpointed pages)`: busy when another connection (Litestream, a
    // backup) still reads an older snapshot. Then the WAL stays for it, which is what it needs.
    let checkpoint = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get::<_, i64>(0));
    match checkpoint {
        Ok(0) => {}
        Ok(_) => tracing::info!("another connection still reads the database: its WAL stays"),
        Err(error) => tracing::warn!(error = %error, "the final WAL checkpoint failed; the WAL stays"),
    }
    conn.close().map_err(|(_, error)| anyhow::Error::new(error).context("cannot close the database"))
}

/// How often the checkpointer looks for new commits.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);
/// The writer still checkpoints by itself past this many WAL pages (40 MiB), should the
/// checkpointer ever fall behind, so the WAL stays bounded.
const WRITER_AUTOCHECKPOINT_PAGES: i64 = 10_000;

/// Why a batch was not committed.
enum BatchError {
    /// The transaction could not begin: nothing ran.
    Begin(rusqlite::Error),
    /// It began, but a savepoint or the commit failed: rolled back whole.
    Commit(rusqlite::Error),
}

/// Runs batches until a handle asks to close or every handle is gone; returns who asked to
/// close, to answer once the connections are closed. Commands still in the channel after a
/// close are dropped, so their callers see [`WriteError::Stopped`]; background commands received
/// before it still run.
fn run(
    conn: &Connection,
    mut receiver: mpsc::Receiver<Message>,
    batches: &AtomicU64,
) -> Vec<oneshot::Sender<anyhow::Result<()>>> {
    let mut queue = Queue { batch: Vec::with_capacity(MAX_BATCH), background: VecDeque::new(), carried: None };
    let mut close = None;
    let mut senders_gone = false;
    while !(close.is_some() || senders_gone) || !queue.background.is_empty() {
        if let Some(job) = queue.carried.take() {
            queue.sort(job);
        }
        if close.is_none() && !senders_gone {
            if queue.is_empty() {
                match receiver.blocking_recv() {
                    Some(Message::Write(job)) => queue.sort(job),
                    Some(Message::Close(reply)) => close = Some(reply),
                    None => senders_gone = true,
                }
            }
            while queue.batch.len() < MAX_BATCH && close.is_none() {
                match receiver.try_recv() {
                    Ok(Message::Write(job)) => queue.sort(job),
                    Ok(Message::Close(reply)) => close = Some(reply),
                    Err(_) => break,
                }
            }
        }
        // The requests' commands first, in one commit; then one background command alone.
        if !queue.batch.is_empty() {
            commit(conn, &mut queue, &mut receiver, &mut close, batches);
        }
        if let Some(job) = queue.background.pop_front() {
            queue.batch.push(job);
            commit(conn, &mut queue, &mut receiver, &mut close, batches);
        }
    }
    receiver.close();
    let mut closers: Vec<_> = close.into_iter().collect();
    while let Ok(message) = receiver.try_recv() {
        if let Message::Close(reply) = message {
            closers.push(reply);
        }
    }
    closers
}

/// What the writer thread holds between commits.
struct Queue {
    /// The next batch: commands that commit together.
    batch: Vec<Box<dyn Queued>>,
    /// Background commands, each waiting for a commit of its own ([`Command::BACKGROUND`]).
    background: VecDeque<Box<dyn Queued>>,
    /// A command that arrived after a failed wait for the lock, for the next batch.
    carried: Option<Box<dyn Queued>>,
}

impl Queue {
    fn sort(&mut self, job: Box<dyn Queued>) {
        if job.is_background() { self.background.push_back(job) } else { self.batch.push(job) }
    }

    fn is_empty(&self) -> bool {
        self.batch.is_empty() && self.background.is_empty() && self.carried.is_none()
    }
}

/// Runs `queue.batch` in one transaction and answers its commands. When the transaction could
/// not even begin (another process held the lock for the whole wait), what arrived meanwhile
/// fails too, as it would wait as long again; what arrives after the failure gets a fresh try.
fn commit(
    conn: &Connection,
    queue: &mut Queue,
    receiver: &mut mpsc::Receiver<Message>,
    close: &mut Option<oneshot::Sender<anyhow::Result<()>>>,
    batches: &AtomicU64,
) {
    match execute_batch(conn, &mut queue.batch) {
        Ok(()) => {
            batches.fetch_add(1, Ordering::SeqCst);
            for job in queue.batch.drain(..) {
                job.answer(Ok(()));
            }
        }
        Err(failure) => {
            let (error, lock_wait_failed) = match failure {
                BatchError::Begin(error) => (error, true),
                BatchError::Commit(error) => (error, false),
            };
            tracing::error!(error = %error, commands = queue.batch.len(), "cannot write to the database");
            let error = Arc::new(anyhow::Error::new(error).context("the write transaction failed"));
            let failed_at = Instant::now();
            for job in queue.batch.drain(..) {
                job.answer(Err(&error));
            }
            if lock_wait_failed {
                while close.is_none() {
                    match receiver.try_recv() {
                        Ok(Message::Write(job)) if job.queued_at() > failed_at => {
                            queue.carried = Some(job);
                            break;
                        }
                        Ok(Message::Write(job)) => job.answer(Err(&error)),
                        Ok(Message::Close(reply)) => *close = Some(reply),
                        Err(_) => break,
                    }
                }
            }
        }
    }
}

fn execute_batch(conn: &Connection, batch: &mut [Box<dyn Queued>]) -> Result<(), BatchError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(BatchError::Begin)?;
    let mut counters = Counters::default();
    let result = (|| {
        for job in batch.iter_mut() {
            if job.is_atomic() {
                if job.execute(&mut Batch::new(conn, &mut counters)) {
                    counters.keep_command();
                } else {
                    counters.drop_command();
                    // Some errors (a full disk, an I/O error) make SQLite roll back the whole
                    // transaction: then the batch must fail, not go on outside a transaction.
                    if conn.is_autocommit() {
                        return Err(transaction_lost());
                    }
                }
                continue;
            }
            conn.prepare_cached("SAVEPOINT command")?.execute([])?;
            if job.execute(&mut Batch::new(conn, &mut counters)) {
                counters.keep_command();
            } else {
                conn.prepare_cached("ROLLBACK TO command")?.execute([])?;
                counters.drop_command();
            }
            conn.prepare_cached("RELEASE command")?.execute([])?;
        }
        counters.write_back(conn)?;
        conn.execute_batch("COMMIT")
    })();
    result.map_err(|error| {
        // Leaves no half-written batch behind; fails harmlessly if SQLite already rolled back.
        let _ = conn.execute_batch("ROLLBACK");
        BatchError::Commit(error)
    })
}

/// The error of a batch whose transaction SQLite rolled back by itself after a command failed.
fn transaction_lost() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
        Some("a failed command ended the transaction".into()),
    )
}

fn open(path: &Path, cache_mib: u32) -> anyhow::Result<Connection> {
    let conn = Connection::open(path).with_context(|| format!("cannot open database {}", path.display()))?;
    configure(&conn, cache_mib).with_context(|| format!("cannot configure database {}", path.display()))?;
    Ok(conn)
}

/// The page cache of a command's writer beside a running server (`remove`, `import`): a few
/// writes, SQLite's own default size.
const ATTACHED_CACHE_MIB: u32 = 2;

/// The writer connection's settings. WAL lets readers run beside the writer; `synchronous =
/// FULL` makes every commit survive a power cut; foreign keys take queued mail with its row.
fn configure(conn: &Connection, cache_mib: u32) -> rusqlite::Result<()> {
    wait_for_lock(conn)?;
    // journal_mode answers with a row; WAL is persistent, the others are per connection.
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, WAL is required")));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Every write goes through this one connection, and its cache is the only one that survives
    // the commits (a reader's is reset whenever the database changed): it holds the hot pages
    // (the right-hand ends of the time-ordered indexes, the counters, the upper levels of the
    // address index) and saves a read from the file for most B-tree steps. It is also most of
    // signupd's memory under load, so the operator sizes it (`storage.cache_mib`; BENCHMARKS.md
    // has the throughput and memory against it). Negative: KiB.
    conn.pragma_update(None, "cache_size", -i64::from(cache_mib) * 1024)?;
    // Each command's savepoint keeps the original of every page it changes in a statement
    // journal, a temporary *file* by default: measured, that file's writes, opens and closes
    // took 40 % of the writer's time. In memory it is a copy. Nothing durable lives there: a
    // crash loses only the uncommitted batch, as it would anyway.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "wal_autocheckpoint", WRITER_AUTOCHECKPOINT_PAGES)?;
    // A removed address must not linger in the file's free space: without it, a deleted row's
    // bytes stay on its page (or a freed one) until something else overwrites them, and the
    // promise that only the keyed hash remains after a removal, a bounce or a complaint would
    // hold for SQL but not for the file. SQLite zeroes what it deletes instead.
    conn.pragma_update(None, "secure_delete", "ON")?;
    Ok(())
}

/// Waits up to [`LOCK_WAIT`] for another process's write lock, in short steps.
pub(super) fn wait_for_lock(conn: &Connection) -> rusqlite::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "a busy handler runs on a blocking thread and must sleep")]
    fn retry(attempt: i32) -> bool {
        std::thread::sleep(LOCK_RETRY);
        u128::try_from(attempt).unwrap_or(0) * LOCK_RETRY.as_micros() < LOCK_WAIT.as_micros()
    }
    conn.busy_handler(Some(retry))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts a value into the test table, or fails after inserting it.
    struct Insert {
        value: &'static str,
        fail: bool,
    }

    impl Command for Insert {
        type Output = i64;

        fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<i64> {
            batch.conn().execute("INSERT INTO t (value) VALUES (?1)", [self.value])?;
            anyhow::ensure!(!self.fail, "refused {}", self.value);
            Ok(batch.conn().last_insert_rowid())
        }
    }

    /// Blocks the writer thread until released, so the commands sent meanwhile share a batch.
    struct Hold {
        started: tokio::sync::oneshot::Sender<()>,
        release: std::sync::mpsc::Receiver<()>,
    }

    impl Command for Hold {
        type Output = ();

        fn execute(self, _batch: &mut Batch<'_>) -> anyhow::Result<()> {
            let _ = self.started.send(());
            self.release.recv()?;
            Ok(())
        }
    }

    /// Inserts a value as background work.
    struct Background(&'static str);

    impl Command for Background {
        type Output = ();
        const BACKGROUND: bool = true;

        fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
            batch.conn().execute("INSERT INTO t (value) VALUES (?1)", [self.0])?;
            Ok(())
        }
    }

    /// One insert with the given id, without a savepoint; counts itself in the batch first.
    struct AtomicInsert {
        id: i64,
        value: &'static str,
    }

    impl Command for AtomicInsert {
        type Output = ();
        const ATOMIC: bool = true;

        fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
            batch.count("inserts", 1, i64::MAX, 0)?;
            batch
                .conn()
                .execute("INSERT INTO t (id, value) VALUES (?1, ?2)", rusqlite::params![self.id, self.value])?;
            Ok(())
        }
    }

    /// The writer held inside a [`Hold`] command.
    struct Held {
        release: std::sync::mpsc::Sender<()>,
        hold: tokio::task::JoinHandle<Result<(), WriteError>>,
    }

    impl Held {
        /// Lets the writer go on and waits until the held batch is committed.
        async fn release(self) {
            self.release.send(()).unwrap();
            self.hold.await.unwrap().unwrap();
        }
    }

    /// Holds the writer thread inside a batch, so the commands sent meanwhile queue up for the
    /// next one; returns once it is held.
    async fn hold(writer: &Writer) -> Held {
        let (release, held) = std::sync::mpsc::channel();
        let (started, writer_held) = tokio::sync::oneshot::channel();
        let hold = tokio::spawn({
            let writer = writer.clone();
            async move { writer.execute(Hold { started, release: held }).await }
        });
        writer_held.await.unwrap();
        Held { release, hold }
    }

    struct Panics;

    impl Command for Panics {
        type Output = ();

        fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
            batch.conn().execute("INSERT INTO t (value) VALUES ('from a panic')", [])?;
            panic!("a bug in a command");
        }
    }

    /// Puts `command` in the writer's queue at once (no waiting for room), like `execute` does.
    fn enqueue<C: Command>(writer: &Writer, command: C) -> oneshot::Receiver<Result<C::Output, WriteError>> {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn Queued> =
            Box::new(Envelope { queued_at: Instant::now(), command: Some(command), outcome: None, reply: Some(reply) });
        writer.sender.try_send(Message::Write(job)).unwrap();
        answer
    }

    fn values(path: &Path) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut statement = conn.prepare("SELECT value FROM t ORDER BY id").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn writer_with_table() -> (tempfile::TempDir, std::path::PathBuf, Writer) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let writer = Writer::start(&path, 2).unwrap();
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)").unwrap();
        (dir, path, writer)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_command_does_not_fail_its_neighbours_in_the_batch() {
        // Arrange: hold the writer, so the next commands queue up and share one batch
        let (_dir, path, writer) = writer_with_table();
        let held = hold(&writer).await;
        let before = writer.batches_committed();

        // Act: queued synchronously while the writer is held, so all four are waiting when it
        // takes its next batch
        let first = enqueue(&writer, Insert { value: "first", fail: false });
        let failing = enqueue(&writer, Insert { value: "failing", fail: true });
        let panicking = enqueue(&writer, Panics);
        let last = enqueue(&writer, Insert { value: "last", fail: false });
        held.release().await;

        // Assert
        assert!(first.await.unwrap().is_ok());
        let failed = failing.await.unwrap().unwrap_err();
        assert!(matches!(&failed, WriteError::Rejected(error) if error.to_string() == "refused failing"), "{failed}");
        assert!(matches!(panicking.await.unwrap(), Err(WriteError::Rejected(_))));
        assert!(last.await.unwrap().is_ok());
        assert_eq!(values(&path), ["first", "last"], "the failed commands' writes are rolled back, only theirs");
        assert_eq!(writer.batches_committed() - before, 2, "the held batch, then one commit for all four");
        assert!(writer.execute(Insert { value: "after", fail: false }).await.is_ok(), "the writer lives on");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn background_commands_commit_alone_one_between_each_batch_and_after_a_close() {
        // Arrange: hold the writer, so background and request commands queue up together
        let (_dir, path, writer) = writer_with_table();
        let held = hold(&writer).await;
        let before = writer.batches_committed();

        // Act
        let background = [enqueue(&writer, Background("background 1")), enqueue(&writer, Background("background 2"))];
        let requests = [
            enqueue(&writer, Insert { value: "request 1", fail: false }),
            enqueue(&writer, Insert { value: "request 2", fail: false }),
        ];
        held.release().await;
        for answer in requests {
            answer.await.unwrap().unwrap();
        }
        for answer in background {
            answer.await.unwrap().unwrap();
        }

        // Assert: the requests' commit carried no background work; each background command
        // committed alone, after them
        assert_eq!(values(&path), ["request 1", "request 2", "background 1", "background 2"]);
        assert_eq!(writer.batches_committed() - before, 4, "the held batch, the requests, then one each");

        // Act: background work queued when the writer is asked to close still runs
        let held = hold(&writer).await;
        let last = enqueue(&writer, Background("before the close"));
        // Queued at once, like `close` does, so the writer finds it beside the background command.
        let (reply, closed) = oneshot::channel();
        writer.sender.try_send(Message::Close(reply)).unwrap();
        held.release().await;
        closed.await.unwrap().unwrap();
        assert!(last.await.unwrap().is_ok());
        assert_eq!(values(&path).last().map(String::as_str), Some("before the close"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_atomic_command_that_fails_leaves_nothing_and_its_neighbours_commit() {
        // Arrange: a row with id 2, and the writer held so the next commands share a batch
        let (_dir, path, writer) = writer_with_table();
        writer.execute(AtomicInsert { id: 2, value: "existing" }).await.unwrap();
        let held = hold(&writer).await;
        let before = writer.batches_committed();

        // Act: the second insert breaks the primary key
        let first = enqueue(&writer, AtomicInsert { id: 1, value: "first" });
        let conflicting = enqueue(&writer, AtomicInsert { id: 2, value: "conflicting" });
        let last = enqueue(&writer, AtomicInsert { id: 3, value: "last" });
        held.release().await;

        // Assert
        assert!(first.await.unwrap().is_ok());
        assert!(matches!(conflicting.await.unwrap(), Err(WriteError::Rejected(_))));
        assert!(last.await.unwrap().is_ok());
        assert_eq!(values(&path), ["first", "existing", "last"]);
        assert_eq!(writer.batches_committed() - before, 2, "the held batch, then one commit for all three");
        let counted: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT count FROM rate_limits WHERE key = 'inserts'", [], |row| row.get(0))
            .unwrap();
        assert_eq!(counted, 3, "the existing row's insert and the two that succeeded; not the failed one");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn committed_writes_reach_the_database_file_through_the_checkpointer() {
        let (_dir, path, writer) = writer_with_table();
        for value in ["a", "b", "c"] {
            writer.execute(Insert { value, fail: false }).await.unwrap();
        }
        // `immutable=1` reads the database file alone, not the WAL: the rows show up there only
        // once a checkpoint copied them, and the writer's own threshold is far away.
        let uri = format!("file:{}?immutable=1", path.display());
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
        let mut in_file = 0;
        for _ in 0..100 {
            let conn = Connection::open_with_flags(&uri, flags).unwrap();
            in_file = conn.query_row("SELECT count(*) FROM t", [], |row| row.get::<_, i64>(0)).unwrap_or(0);
            if in_file == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(in_file, 3, "the checkpointer copied the committed frames");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn close_commits_what_was_sent_then_leaves_only_the_database_file() {
        // Arrange: a command sent, not yet answered, when the close is asked for
        let (dir, path, writer) = writer_with_table();
        writer.execute(Insert { value: "before", fail: false }).await.unwrap();
        let sent = enqueue(&writer, Insert { value: "sent", fail: false });
        assert!(dir.path().join("db.sqlite3-wal").exists(), "WAL mode while the writer runs");

        // Act
        writer.close().await.unwrap();

        // Assert
        assert!(sent.await.unwrap().is_ok(), "a command sent before the close is committed");
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(files, ["db.sqlite3"], "no -wal, no -shm");
        assert_eq!(values(&path), ["before", "sent"]);
        let late = writer.execute(Insert { value: "late", fail: false }).await;
        assert!(matches!(late, Err(WriteError::Stopped)), "{late:?}");
        writer.close().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_database_locked_by_another_process_fails_the_batch_whole_within_the_lock_wait() {
        let (_dir, path, writer) = writer_with_table();
        let blocker = Connection::open(&path).unwrap();
        blocker.execute_batch("BEGIN EXCLUSIVE; INSERT INTO t (value) VALUES ('blocker')").unwrap();

        let started = std::time::Instant::now();
        let outcome = writer.execute(Insert { value: "blocked", fail: false }).await;

        assert!(matches!(outcome, Err(WriteError::Unavailable(_))), "{outcome:?}");
        // It gives up after the lock wait rather than waiting on the lock for as long as it is held;
        // the bound is generous because a loaded CI machine stretches the wait's steps.
        assert!(started.elapsed() < LOCK_WAIT * 20, "answered after {:?}", started.elapsed());
        assert!(!writer.is_ready().await);
        blocker.execute_batch("ROLLBACK").unwrap();
        let probe = writer.execute(Probe).await;
        assert!(matches!(probe, Ok(version) if version == migrations::LATEST_VERSION), "{probe:?}");
        assert!(values(&path).is_empty(), "nothing of the failed batch was kept");
    }
}
