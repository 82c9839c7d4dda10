//! The background workers' own threads: one runtime for the mail workers, one for the hand-on
//! of subscriber events.
//!
//! `serve` runs on actix's runtime, whose main thread is a single-threaded tokio runtime: every
//! task spawned there shares one thread. The mail workers spend most of their time on that
//! thread's work — SMTP conversations, settling, the next claim — and with all of them on it,
//! beside the intake and rollup workers, one worker's turn waited for the others' (BENCHMARKS.md,
//! "The drain against smtp-source": 0.375 of smtp-source before, 0.414 with the fixes of that
//! series). They run instead on a multi-threaded runtime of their own, with as many threads as
//! there are cores (at most one per worker), beside the HTTP workers' threads.
//!
//! The webhook and destination workers run on a second runtime whose threads ask the kernel for
//! the lowest CPU priority of a normal thread ([`Priority::Background`], nice 19). A wave of
//! confirmations queues one event per confirmation and sink, and a receiver on the same network
//! answers as fast as it is called: delivering at full speed took a quarter of a two-core
//! machine's confirm rate (BENCHMARKS.md, "Destinations"), and at nice 10 (a tenth of a busy
//! CPU) still about a tenth. When the CPUs are busy, the delivery threads now get what the pages
//! leave; the events wait in their durable queue, in order, and go out when the wave has passed.
//! On an idle machine the priority changes nothing. The priority alone was not enough (the worker
//! sleeps on its calls and wakes with a fresh slice): the workers also wait while the writer is
//! busy (`webhooks::worker`, "yield to the pages"). Nice 19 rather than `SCHED_IDLE`: a delivery
//! thread still gets a slice now and then under a load that never ends, so a lease it holds is
//! given back and a reader connection it took is returned within the slice, not when the load
//! stops.
//!
//! Everything a worker awaits works from any runtime: the writer answers through channels,
//! the readers and file writes go through this runtime's blocking pool, and lettre's and
//! reqwest's sockets are registered with the runtime that opened them.

use std::future::Future;

use anyhow::Context;
use tokio::task::JoinHandle;

/// How the kernel schedules a runtime's threads against the rest of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// As the HTTP workers.
    Normal,
    /// Nice 19: about a seventieth of a normal thread's share of a busy CPU, all of an idle one.
    Background,
}

/// Nice value of [`Priority::Background`] threads.
const BACKGROUND_NICE: i32 = 19;

/// A runtime the background workers are spawned on; stopped (without waiting) when dropped,
/// after `serve` has awaited the workers, or on an early return where they never started.
#[derive(Debug)]
pub struct WorkerRuntime(Option<tokio::runtime::Runtime>);

impl WorkerRuntime {
    /// A runtime named `name` with one thread per core, at most `workers`, at `priority`.
    pub fn start(name: &str, workers: usize, priority: Priority) -> anyhow::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores.min(workers).max(1))
            .thread_name(name)
            .on_thread_start(move || {
                if priority == Priority::Background {
                    lower_this_threads_priority();
                }
            })
            .enable_all()
            .build()
            .with_context(|| format!("cannot start the {name} threads"))?;
        Ok(Self(Some(runtime)))
    }

    pub fn spawn<F>(&self, worker: F) -> JoinHandle<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.as_ref().expect("the runtime lives until dropped").spawn(worker)
    }
}

/// Linux keeps a nice value per thread: `setpriority(PRIO_PROCESS, tid)` changes this thread
/// only. Tokio runs it on every thread of the runtime, its blocking pool's (the database reads)
/// included. A refusal (a sandbox that forbids it) leaves the thread as it was: slower confirm
/// pages under load, not a reason to stop.
fn lower_this_threads_priority() {
    let thread = rustix::thread::gettid();
    if let Err(error) = rustix::process::setpriority_process(Some(thread), BACKGROUND_NICE) {
        tracing::warn!(%error, "cannot lower the delivery threads' CPU priority; they run at the normal one");
    }
}

impl Drop for WorkerRuntime {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its threads end, which tokio forbids inside another
        // runtime; `serve` has awaited every worker by then, so nothing is left to wait for.
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}
