//! A background task that runs a function at a fixed interval until stopped; the broker's
//! services (offset persistence, client liveness, stats sampling, NameServer registration) are
//! built on it, each with an explicit start and stop.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub struct PeriodicService {
    name: &'static str,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl PeriodicService {
    /// Runs `tick` every `interval`, first after `initial_delay`.
    pub fn start<F>(
        name: &'static str,
        initial_delay: Duration,
        interval: Duration,
        mut tick: F,
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
            loop {
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = timer.tick() => tick(),
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
