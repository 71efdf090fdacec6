//! `BrokerHousekeepingService`: scans for brokers past their liveness timeout every
//! `scanNotActiveBrokerInterval` ms. Explicit start and stop; the expired connection ids go to
//! an optional callback so the server can close them.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::NameServer;

/// Called with the connection ids of brokers that expired.
pub type ExpiredConnections = Box<dyn Fn(Vec<u64>) + Send + Sync>;

pub struct BrokerHousekeepingService {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl BrokerHousekeepingService {
    /// Spawns the scan loop on the current tokio runtime.
    pub fn start(ns: Arc<NameServer>, on_expired: Option<ExpiredConnections>) -> Self {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(ns.scan_interval());
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stopped.changed() => return,
                }
                let expired = ns.scan_not_active_brokers();
                if let (false, Some(cb)) = (expired.is_empty(), on_expired.as_ref()) {
                    cb(expired);
                }
            }
        });
        Self {
            stop,
            task: Some(task),
        }
    }

    /// Stops the loop and waits for it to end.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for BrokerHousekeepingService {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}
