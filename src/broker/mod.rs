//! GLUE: the broker — tokio lives here. Server, dispatch, processors, metadata, services.

pub mod config;
pub mod dispatch;
pub mod error;
pub mod long_polling;
pub mod server;

use std::sync::Arc;
use std::time::Duration;

pub use config::BrokerConfig;

use server::{ServerConfig, ServerHandle};

/// Everything a processor may need, shared by all requests.
pub struct BrokerContext {
    pub config: BrokerConfig,
}

/// A running broker: its listener and its background services.
pub struct BrokerController {
    pub ctx: Arc<BrokerContext>,
    server: ServerHandle,
}

impl BrokerController {
    /// Opens everything and starts serving on `listenPort`.
    pub async fn start(config: BrokerConfig) -> anyhow_like::Result<Self> {
        let bind = format!("{}:{}", config.bind_address, config.listen_port);
        let bind = bind
            .parse()
            .map_err(|e| format!("bad bindAddress/listenPort {bind}: {e}"))?;
        let mut server_config = ServerConfig::new(bind);
        server_config.idle_timeout =
            Duration::from_secs(config.server_channel_max_idle_time_seconds.max(1));
        server_config.max_connections = config.server_max_connections;
        server_config.max_in_flight = config.server_max_in_flight;
        let ctx = Arc::new(BrokerContext { config });
        let handler = Arc::new(dispatch::BrokerHandler { ctx: ctx.clone() });
        let server = server::serve(server_config, handler).await.map_err(|e| {
            format!("cannot listen on {bind}: {e} (is another broker using listenPort?)")
        })?;
        tracing::info!(addr = %server.local_addr, "broker listening");
        Ok(Self { ctx, server })
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.server.local_addr
    }

    /// Stops accepting, finishes in-flight requests, flushes and closes the store.
    pub async fn shutdown(self) {
        self.server.shutdown(Duration::from_secs(10)).await;
    }
}

/// Start-up errors are plain messages that say what to do next.
pub mod anyhow_like {
    pub type Result<T> = std::result::Result<T, String>;
}
