//! A background task that runs a function at a fixed interval until stopped; the broker's
//! services (offset persistence, client liveness, stats sampling, NameServer registration) are
//! built on it, each with an explicit start and stop.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Where a service's tick runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TickOn {
    /// On the runtime's worker: for ticks that do not block.
    Worker,
    /// On the blocking pool: for a tick that writes and fsyncs a file, so a slow fsync does not
    /// hold up the requests of every connection on the worker.
    BlockingPool,
}

pub struct PeriodicService {
    name: &'static str,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

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
        let stop = CancellationToken::new();
        let token = stop.clone();
        let task = tokio::spawn(async move {
            tokio::select! {
                _ = token.cancelled() => return,
                _ = tokio::time::sleep(initial_delay) => {}
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
        });
        Self {
            name,
            stop,
            task: Some(task),
        }
    }

    /// Stops the task and waits for a running tick to finish.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            if let Err(e) = task.await {
                tracing::warn!(service = self.name, error = %e, "service task ended abnormally");
            }
        }
    }
}
