//! The one loop every background worker runs: the intake worker, the mail workers and the
//! webhook workers differ in what a round does, not in how they wait or stop.
//!
//! A worker does a [`Worker::round`] of work; if the round moved its queue it goes again at
//! once, otherwise it sleeps a jittered tick (so the cost of background work is not tied to the
//! request that caused it). A failed round is logged and retried on the next tick. The loop
//! returns as soon as the shutdown future has completed, checked between rounds and during the
//! sleep; a round may also look at [`Shutdown::is_stopping`] to stop between its own steps.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::FutureExt;

use crate::clock::jittered;

/// Whether a round moved its queue (and the worker should look again without sleeping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    Moved,
    Idle,
}

/// One kind of background worker.
pub trait Worker: Send {
    /// Names the worker in log lines (a fixed word or a configured name, never data).
    fn name(&self) -> &str;

    /// The mean sleep between idle rounds (jittered by ±50 %).
    fn tick(&self) -> Duration;

    /// Does one round of work. It may stop early when `shutdown` says so, leaving the rest
    /// queued in SQLite.
    fn round(&mut self, shutdown: &mut Shutdown) -> impl Future<Output = anyhow::Result<Round>> + Send;
}

/// The future that ends a worker, polled so that a completed future is never polled again.
pub struct Shutdown {
    future: Pin<Box<dyn Future<Output = ()> + Send>>,
    stopped: bool,
}

impl std::fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shutdown").field("stopped", &self.stopped).finish_non_exhaustive()
    }
}

impl Shutdown {
    pub fn new(future: impl Future<Output = ()> + Send + 'static) -> Self {
        Self { future: Box::pin(future), stopped: false }
    }

    /// Whether the shutdown has come, without waiting; once true, always true.
    pub fn is_stopping(&mut self) -> bool {
        self.stopped = self.stopped || (&mut self.future).now_or_never().is_some();
        self.stopped
    }

    /// Completes when the shutdown has come.
    async fn stopped(&mut self) {
        if !self.stopped {
            (&mut self.future).await;
            self.stopped = true;
        }
    }
}

/// Runs `worker` until `shutdown` completes.
pub async fn run(mut worker: impl Worker, shutdown: impl Future<Output = ()> + Send + 'static) {
    let mut shutdown = Shutdown::new(shutdown);
    loop {
        let moved = match worker.round(&mut shutdown).await {
            Ok(round) => round == Round::Moved,
            Err(error) => {
                tracing::error!(
                    worker = worker.name(),
                    error = format!("{error:#}"),
                    "background worker: cannot work through its queue; retrying"
                );
                false
            }
        };
        if shutdown.is_stopping() {
            return;
        }
        if moved {
            continue;
        }
        tokio::select! {
            () = tokio::time::sleep(jittered(worker.tick())) => {}
            () = shutdown.stopped() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Moves its queue `busy` times, then is idle; counts its rounds.
    struct Counting {
        rounds: Arc<AtomicUsize>,
        busy: usize,
    }

    impl Worker for Counting {
        fn name(&self) -> &str {
            "counting"
        }

        fn tick(&self) -> Duration {
            Duration::from_secs(3600)
        }

        async fn round(&mut self, _: &mut Shutdown) -> anyhow::Result<Round> {
            let done = self.rounds.fetch_add(1, Ordering::SeqCst);
            Ok(if done < self.busy { Round::Moved } else { Round::Idle })
        }
    }

    #[tokio::test]
    async fn a_busy_worker_goes_again_at_once_and_an_idle_one_sleeps_until_shutdown() {
        let rounds = Arc::new(AtomicUsize::new(0));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let worker = tokio::spawn(run(Counting { rounds: rounds.clone(), busy: 3 }, async move {
            let _ = stopped.await;
        }));
        // Three moving rounds and the idle one after them, then an hour-long sleep.
        while rounds.load(Ordering::SeqCst) < 4 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 4);
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), worker).await.expect("the worker stops during its sleep").unwrap();
    }

    #[tokio::test]
    async fn a_shutdown_that_came_during_a_round_ends_the_loop_before_the_next() {
        let rounds = Arc::new(AtomicUsize::new(0));
        run(Counting { rounds: rounds.clone(), busy: usize::MAX }, std::future::ready(())).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn shutdown_stays_stopped_once_it_came() {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut shutdown = Shutdown::new(async move {
            let _ = stopped.await;
        });
        assert!(!shutdown.is_stopping());
        stop.send(()).unwrap();
        assert!(shutdown.is_stopping());
        assert!(shutdown.is_stopping(), "a completed future is not polled again, and the answer stays");
    }
}
