//! The mail workers' own threads.
//!
//! `serve` runs on actix's runtime, whose main thread is a single-threaded tokio runtime: every
//! task spawned there shares one thread. The mail workers spend most of their time on that
//! thread's work — SMTP conversations, settling, the next claim — and with all of them on it,
//! beside the intake and rollup workers, one worker's turn waited for the others' (BENCHMARKS.md,
//! "The drain against smtp-source": 0.375 of smtp-source before, 0.414 with the fixes of that
//! series). They run instead on a multi-threaded runtime of their own, with as many threads as
//! there are cores (at most one per worker), beside the HTTP workers' threads.
//!
//! Everything a mail worker awaits works from any runtime: the writer answers through channels,
//! the readers and file writes go through this runtime's blocking pool, and lettre's and
//! reqwest's sockets are registered with the runtime that opened them.

use std::future::Future;

use anyhow::Context;
use tokio::task::JoinHandle;

/// The runtime the mail workers are spawned on; stopped (without waiting) when dropped, after
/// `serve` has awaited the workers, or on an early return where they never started.
#[derive(Debug)]
pub struct MailRuntime(Option<tokio::runtime::Runtime>);

impl MailRuntime {
    /// A runtime with one thread per core, at most `workers`.
    pub fn start(workers: usize) -> anyhow::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores.min(workers).max(1))
            .thread_name("signupd-mail")
            .enable_all()
            .build()
            .context("cannot start the mail workers' threads")?;
        Ok(Self(Some(runtime)))
    }

    pub fn spawn<F>(&self, worker: F) -> JoinHandle<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.as_ref().expect("the runtime lives until dropped").spawn(worker)
    }
}

impl Drop for MailRuntime {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its threads end, which tokio forbids inside another
        // runtime; `serve` has awaited every worker by then, so nothing is left to wait for.
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}
