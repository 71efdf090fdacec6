//! The broker's background services, each with an explicit start and stop: [`BackgroundTask`]
//! (a spawned task, the token that stops it, and its handle), [`ServiceSlot`] (one held by a
//! service that starts and stops with its owner) and [`PeriodicService`] (a function run at a
//! fixed interval: offset persistence, client liveness, stats sampling).

use std::future::Future;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A spawned task and what stops it.
pub struct BackgroundTask {
    name: &'static str,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl BackgroundTask {
    /// Spawns `body`, handing it the token that is cancelled when the task is to stop.
    pub fn spawn<F, Fut>(name: &'static str, body: F) -> Self
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let stop = CancellationToken::new();
        let task = tokio::spawn(body(stop.clone()));
        Self { name, stop, task }
    }

    /// Cancels the token and waits for the task to end.
    pub async fn stop(self) {
        self.stop.cancel();
        if let Err(e) = self.task.await {
            tracing::warn!(service = self.name, error = %e, "service task ended abnormally");
        }
    }
}

/// Sleeps `delay`; false when `token` was cancelled first.
pub async fn sleep_unless_stopped(token: &CancellationToken, delay: Duration) -> bool {
    tokio::select! {
        _ = token.cancelled() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}

/// Where a service keeps its running task between `start` and `stop`.
#[derive(Default)]
pub struct ServiceSlot(Mutex<Option<BackgroundTask>>);

impl ServiceSlot {
    /// Holds `task` (a task already held is replaced; callers start once).
    pub fn set(&self, task: BackgroundTask) {
        *self.0.lock() = Some(task);
    }

    /// Stops the held task, if any, and waits for it.
    pub async fn stop(&self) {
        let task = self.0.lock().take();
        if let Some(task) = task {
            task.stop().await;
        }
    }
}

/// Where a service's tick runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TickOn {
    /// On the runtime's worker: for ticks that do not block.
    Worker,
    /// On the blocking pool: for a tick that writes and fsyncs a file, so a slow fsync does not
    /// hold up the requests of every connection on the worker.
    BlockingPool,
}

pub struct PeriodicService(BackgroundTask);

impl PeriodicService {
    /// Runs `tick` every `interval`, first after `initial_delay`, where `on` says.
    pub fn start<F>(
        name: &'static str,
        initial_delay: Duration,
        interval: Duration,
        on: TickOn,
        tick: F,
    ) -> Self
    where
        F: FnMut() + Send + 'static,
    {
        Self(BackgroundTask::spawn(name, move |token| async move {
            if !sleep_unless_stopped(&token, initial_delay).await {
                return;
            }
            let mut timer = tokio::time::interval(interval.max(Duration::from_millis(1)));
            timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut tick = Some(tick);
            loop {
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = timer.tick() => {}
                }
                let Some(mut f) = tick.take() else { return };
                if on == TickOn::Worker {
                    f();
                    tick = Some(f);
                    continue;
                }
                match tokio::task::spawn_blocking(move || {
                    f();
                    f
                })
                .await
                {
                    Ok(f) => tick = Some(f),
                    Err(e) => {
                        tracing::error!(service = name, error = %e, "service tick failed; the service stops");
                        return;
                    }
                }
            }
        }))
    }

    /// Stops the task and waits for a running tick to finish.
    pub async fn stop(self) {
        self.0.stop().await;
    }
}
