//! One client connection: its identity, its outbound queue (drained by the writer task) and the
//! table of broker→client requests waiting for their answers.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use crate::remoting::{LanguageCode, RemotingCommand};

/// Why a broker→client request got no answer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InvokeError {
    #[error("connection to {0} is closed")]
    Closed(SocketAddr),
    #[error("no answer from {peer} within {millis} ms")]
    Timeout { peer: SocketAddr, millis: u128 },
}

pub struct Connection {
    pub id: u64,
    pub peer: SocketAddr,
    pub local: SocketAddr,
    outbound: mpsc::UnboundedSender<RemotingCommand>,
    pending: Mutex<HashMap<i32, oneshot::Sender<RemotingCommand>>>,
    next_opaque: AtomicI32,
    client: OnceLock<(LanguageCode, i32)>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connection#{}({})", self.id, self.peer)
    }
}

impl Connection {
    pub(super) fn new(
        id: u64,
        peer: SocketAddr,
        local: SocketAddr,
        outbound: mpsc::UnboundedSender<RemotingCommand>,
    ) -> Self {
        Self {
            id,
            peer,
            local,
            outbound,
            pending: Mutex::new(HashMap::new()),
            next_opaque: AtomicI32::new(1),
            client: OnceLock::new(),
        }
    }

    /// A connection whose frames go nowhere, never closed (unit tests of the registries).
    #[cfg(test)]
    pub(crate) fn detached_for_tests() -> std::sync::Arc<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        std::mem::forget(rx);
        let addr: SocketAddr = "127.0.0.1:1".parse().expect("address");
        std::sync::Arc::new(Self::new(0, addr, addr, tx))
    }

    /// Queues a frame for the writer. False when the connection is gone.
    pub fn send(&self, cmd: RemotingCommand) -> bool {
        self.outbound.send(cmd).is_ok()
    }

    pub fn is_closed(&self) -> bool {
        self.outbound.is_closed()
    }

    /// The language and version of the first request seen on this connection.
    pub fn client_info(&self) -> Option<&(LanguageCode, i32)> {
        self.client.get()
    }

    pub(super) fn note_client(&self, request: &RemotingCommand) {
        if self.client.get().is_none() {
            let _ = self.client.set((request.language.clone(), request.version));
        }
    }

    /// Sends a broker→client request and waits for the answer matched by opaque.
    pub async fn invoke(
        &self,
        mut request: RemotingCommand,
        timeout: Duration,
    ) -> Result<RemotingCommand, InvokeError> {
        let opaque = self.next_opaque.fetch_add(1, Ordering::Relaxed);
        request.opaque = opaque;
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(opaque, tx);
        if !self.send(request) {
            self.pending.lock().remove(&opaque);
            return Err(InvokeError::Closed(self.peer));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(_)) => Err(InvokeError::Closed(self.peer)),
            Err(_) => {
                self.pending.lock().remove(&opaque);
                Err(InvokeError::Timeout {
                    peer: self.peer,
                    millis: timeout.as_millis(),
                })
            }
        }
    }

    /// Sends a broker→client request with the oneway flag; no answer is awaited.
    pub fn invoke_oneway(&self, mut request: RemotingCommand) -> bool {
        request.opaque = self.next_opaque.fetch_add(1, Ordering::Relaxed);
        request.mark_oneway();
        self.send(request)
    }

    /// Hands a response from the peer to the request waiting for it. False when nobody waits.
    pub(super) fn complete(&self, response: RemotingCommand) -> bool {
        match self.pending.lock().remove(&response.opaque) {
            Some(tx) => tx.send(response).is_ok(),
            None => false,
        }
    }

    /// Fails every waiting broker→client request (their senders are dropped).
    pub(super) fn fail_pending(&self) {
        self.pending.lock().clear();
    }
}
