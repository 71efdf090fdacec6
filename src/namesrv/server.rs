//! The NameServer on the network: a Remoting server whose requests go to `NameServer::process`,
//! with broker liveness scanned in the background. Used by `rmqd namesrv` and by the broker's
//! embedded NameServer.

use std::sync::Arc;
use std::time::Duration;

use super::error::StartError;
use super::{BrokerHousekeepingService, NameServer, NamesrvConfig};
use crate::remoting::RemotingCommand;
use crate::server::{
    self, Connection, ReceiveBudget, RequestHandler, ServerConfig, ServerHandle,
    DEFAULT_RECEIVE_BUDGET,
};

struct NamesrvHandler {
    ns: Arc<NameServer>,
}

impl RequestHandler for NamesrvHandler {
    async fn handle(
        self: Arc<Self>,
        conn: Arc<Connection>,
        request: RemotingCommand,
    ) -> Option<RemotingCommand> {
        self.ns.process(conn.id, conn.peer, request)
    }

    fn on_close(&self, conn: &Arc<Connection>) {
        self.ns.on_connection_closed(conn.id);
    }
}

/// A running NameServer: the listener and the liveness scan.
pub struct NamesrvServer {
    pub ns: Arc<NameServer>,
    server: ServerHandle,
    housekeeping: BrokerHousekeepingService,
}

impl NamesrvServer {
    /// Binds `bindAddress:listenPort` and starts serving.
    pub async fn start(config: NamesrvConfig) -> Result<Self, StartError> {
        Self::start_with_budget(config, ReceiveBudget::new(DEFAULT_RECEIVE_BUDGET)).await
    }

    /// [`Self::start`] drawing on a receive budget shared with the rest of the process (the
    /// embedded NameServer shares the broker's).
    pub async fn start_with_budget(
        config: NamesrvConfig,
        receive_budget: ReceiveBudget,
    ) -> Result<Self, StartError> {
        let bind_text = format!("{}:{}", config.bind_address, config.listen_port);
        let bind = bind_text.parse().map_err(|source| StartError::BadBind {
            bind: bind_text,
            source,
        })?;
        let mut server_config = ServerConfig::new(bind);
        server_config.idle_timeout =
            Duration::from_secs(config.server_channel_max_idle_time_seconds.max(1) as u64);
        server_config.receive_budget = receive_budget;
        let ns = Arc::new(NameServer::new(config));
        let handler = Arc::new(NamesrvHandler { ns: ns.clone() });
        let server = server::serve(server_config, handler)
            .await
            .map_err(|source| StartError::Listen { bind, source })?;
        let housekeeping = BrokerHousekeepingService::start(ns.clone(), None);
        Ok(Self {
            ns,
            server,
            housekeeping,
        })
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.server.local_addr
    }

    pub async fn shutdown(self) {
        self.housekeeping.stop().await;
        self.server.shutdown(Duration::from_secs(5)).await;
    }
}
