//! The Remoting TCP server shared by the broker and the NameServer: a listener with a connection
//! limit, per-request tasks, one writer task per connection, broker→client requests matched by
//! opaque, and graceful shutdown that lets in-flight requests finish.

mod budget;
mod connection;
mod listener;
mod reader;
mod writer;

pub use budget::{ReceiveBudget, DEFAULT_RECEIVE_BUDGET};
pub use reader::OWN_FRAME;

pub use connection::{Connection, InvokeError};
pub use listener::{serve, ServerConfig, ServerHandle, SharedLimits};

use std::future::Future;
use std::sync::Arc;

use crate::remoting::RemotingCommand;

/// What a server does with requests. `handle` runs on its own task per request; `None` means no
/// answer (oneway handling). `on_close` runs once when a connection ends.
pub trait RequestHandler: Send + Sync + 'static {
    fn handle(
        self: Arc<Self>,
        conn: Arc<Connection>,
        request: RemotingCommand,
    ) -> impl Future<Output = Option<RemotingCommand>> + Send;

    fn on_close(&self, _conn: &Arc<Connection>) {}
}
