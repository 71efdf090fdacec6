//! The NameServer: route tables, broker liveness, KV config and the request handlers, with no
//! sockets. The TCP server owns connections and calls `process` for each request frame,
//! `on_connection_closed` when a connection ends, and `scan_not_active_brokers` periodically
//! (or runs `BrokerHousekeepingService`).

pub mod config;
pub mod error;
pub mod housekeeping;
pub mod kv_config;
pub mod processor;
pub mod route_info;
pub mod server;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use parking_lot::RwLock;

pub use config::{ConfigError, NamesrvConfig};
pub use error::NamesrvError;
pub use housekeeping::BrokerHousekeepingService;
use kv_config::KvConfigManager;
use processor::RequestContext;
use route_info::{RouteInfoManager, RouteOptions};

use crate::remoting::command::RemotingCommand;

pub struct NameServer {
    config: RwLock<NamesrvConfig>,
    route: RouteInfoManager,
    kv: KvConfigManager,
    started: Instant,
}

impl NameServer {
    /// Builds the tables and loads the KV config from `kvConfigPath`.
    pub fn new(config: NamesrvConfig) -> Self {
        let options = route_options(&config);
        let kv = KvConfigManager::new(config.kv_config_path.clone());
        kv.load();
        Self {
            config: RwLock::new(config),
            route: RouteInfoManager::new(options),
            kv,
            started: Instant::now(),
        }
    }

    /// Handles one request from connection `conn_id`. `None` for a oneway request (which is
    /// still carried out). A failure becomes Java's response in one place,
    /// [`NamesrvError::into_response`].
    pub fn process(
        &self,
        conn_id: u64,
        peer: SocketAddr,
        request: RemotingCommand,
    ) -> Option<RemotingCommand> {
        let ctx = RequestContext { conn_id, peer };
        let response = match processor::dispatch(self, &ctx, &request) {
            Ok(resp) => resp,
            Err(e) => {
                if matches!(e, NamesrvError::BadRequest(_) | NamesrvError::Config(_)) {
                    tracing::warn!(code = request.code, %peer, error = %e, "namesrv request failed");
                }
                e.into_response(&request)
            }
        };
        (!request.is_oneway()).then_some(response)
    }

    /// The connection ended: brokers registered over it are removed.
    pub fn on_connection_closed(&self, conn_id: u64) {
        self.route.on_connection_closed(conn_id);
    }

    /// Removes brokers not heard from within their timeout (120 s unless the broker sent
    /// `heartbeatTimeoutMillis`). Returns the connection ids of the removed brokers; Java
    /// closes those channels, so the server should close them.
    pub fn scan_not_active_brokers(&self) -> Vec<u64> {
        self.route.scan_not_active_brokers()
    }

    /// `scanNotActiveBrokerInterval`.
    pub fn scan_interval(&self) -> Duration {
        Duration::from_millis(self.config.read().scan_not_active_broker_interval.max(1) as u64)
    }

    /// A snapshot of the current configuration.
    pub fn config(&self) -> NamesrvConfig {
        self.config.read().clone()
    }

    pub fn route_info(&self) -> &RouteInfoManager {
        &self.route
    }

    pub fn kv_config(&self) -> &KvConfigManager {
        &self.kv
    }

    /// UPDATE_NAMESRV_CONFIG: applies `pairs` (all or nothing) and persists every key to
    /// `configStorePath`. Unknown keys are logged and kept out.
    pub fn update_config(&self, pairs: &[(String, String)]) -> Result<(), ConfigError> {
        let mut next = self.config();
        for unknown in next.apply(pairs)? {
            tracing::warn!(key = %unknown, "unknown namesrv config key ignored");
        }
        let path = next.config_store_path.clone();
        let text = next.to_properties_text();
        self.route.set_options(route_options(&next));
        *self.config.write() = next;
        if let Err(e) = crate::common::json_file::write(&path, text.as_bytes()) {
            tracing::error!(path = %path.display(), error = %e, "persist namesrv config failed");
        }
        Ok(())
    }
}

fn route_options(config: &NamesrvConfig) -> RouteOptions {
    RouteOptions {
        default_broker_expired_time: Duration::from_millis(
            config.broker_channel_expired_time.max(0) as u64,
        ),
        delete_topic_with_broker_registration: config.delete_topic_with_broker_registration,
        support_acting_master: config.support_acting_master,
    }
}
