//! A small async Remoting client: one connection per address, reused and re-opened after a
//! failure; requests matched to responses by `opaque`, with a timeout; oneway sends. Frames go
//! through `remoting::codec`. Used for REGISTER_BROKER / UNREGISTER_BROKER to NameServers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{oneshot, Mutex as AsyncMutex};

use crate::remoting::codec::{encode_frame, FrameCodec};
use crate::remoting::command::{RemotingCommand, FLAG_RESPONSE};

/// Java's `connectTimeoutMillis` default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Error)]
pub enum ClientError {
    #[error("connect to {addr}: {source}")]
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("connect to {addr}: timed out after {millis} ms")]
    ConnectTimeout { addr: String, millis: u128 },
    #[error("send to {addr}: {source}")]
    Send {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("request {opaque} to {addr}: no response within {millis} ms")]
    Timeout {
        addr: String,
        opaque: i32,
        millis: u128,
    },
    #[error("connection to {addr} closed before the response to {opaque}")]
    Closed { addr: String, opaque: i32 },
}

type Pending = parking_lot::Mutex<HashMap<i32, oneshot::Sender<RemotingCommand>>>;

/// One TCP connection: a locked writer and a reader task completing pending requests.
struct Connection {
    addr: String,
    writer: AsyncMutex<OwnedWriteHalf>,
    pending: Arc<Pending>,
    closed: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Connection {
    async fn open(addr: &str, connect_timeout: Duration) -> Result<Arc<Self>, ClientError> {
        let stream = tokio::time::timeout(connect_timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| ClientError::ConnectTimeout {
                addr: addr.to_string(),
                millis: connect_timeout.as_millis(),
            })?
            .map_err(|source| ClientError::Connect {
                addr: addr.to_string(),
                source,
            })?;
        let _ = stream.set_nodelay(true);
        let (mut read, write) = stream.into_split();
        let pending: Arc<Pending> = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let (p, c, a) = (pending.clone(), closed.clone(), addr.to_string());
        let reader = tokio::spawn(async move {
            let codec = FrameCodec::default();
            let mut buf = BytesMut::with_capacity(64 * 1024);
            'read: loop {
                loop {
                    match codec.decode_frame(&mut buf) {
                        Ok(Some(cmd)) => complete(&p, cmd),
                        Ok(None) => break,
                        Err(e) => {
                            tracing::warn!(addr = %a, error = %e, "bad frame; closing");
                            break 'read;
                        }
                    }
                }
                match read.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            c.store(true, Ordering::Release);
            // Dropping the senders fails every waiting request with `Closed`.
            p.lock().clear();
        });
        Ok(Arc::new(Self {
            addr: addr.to_string(),
            writer: AsyncMutex::new(write),
            pending,
            closed,
            reader,
        }))
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    async fn write(&self, cmd: &RemotingCommand) -> Result<(), ClientError> {
        let mut frame = BytesMut::new();
        encode_frame(cmd, &mut frame);
        let mut w = self.writer.lock().await;
        if let Err(source) = w.write_all(&frame).await {
            self.closed.store(true, Ordering::Release);
            return Err(ClientError::Send {
                addr: self.addr.clone(),
                source,
            });
        }
        Ok(())
    }
}

/// A response completes its request; requests from the server are not served by this client.
fn complete(pending: &Pending, cmd: RemotingCommand) {
    if cmd.flag & FLAG_RESPONSE == 0 {
        tracing::debug!(code = cmd.code, "ignoring a request from the server");
        return;
    }
    if let Some(tx) = pending.lock().remove(&cmd.opaque) {
        let _ = tx.send(cmd);
    }
}

/// The client. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct RemotingClient {
    inner: Arc<Inner>,
}

/// One address's connection, opened lazily; the async lock serializes (re)connecting.
type Slot = Arc<AsyncMutex<Option<Arc<Connection>>>>;

struct Inner {
    slots: parking_lot::Mutex<HashMap<String, Slot>>,
    next_opaque: AtomicI32,
    connect_timeout: Duration,
}

impl Default for RemotingClient {
    fn default() -> Self {
        Self::new(DEFAULT_CONNECT_TIMEOUT)
    }
}

impl RemotingClient {
    pub fn new(connect_timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                slots: parking_lot::Mutex::new(HashMap::new()),
                next_opaque: AtomicI32::new(0),
                connect_timeout,
            }),
        }
    }

    /// Sends `request` to `addr` and waits up to `timeout` for the response with its opaque.
    /// The request's opaque is replaced by this client's next one.
    pub async fn invoke(
        &self,
        addr: &str,
        mut request: RemotingCommand,
        timeout: Duration,
    ) -> Result<RemotingCommand, ClientError> {
        let conn = self.connection(addr).await?;
        let opaque = self.inner.next_opaque.fetch_add(1, Ordering::Relaxed);
        request.opaque = opaque;
        let (tx, rx) = oneshot::channel();
        conn.pending.lock().insert(opaque, tx);
        if let Err(e) = conn.write(&request).await {
            conn.pending.lock().remove(&opaque);
            return Err(e);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(_)) => Err(ClientError::Closed {
                addr: addr.to_string(),
                opaque,
            }),
            Err(_) => {
                conn.pending.lock().remove(&opaque);
                Err(ClientError::Timeout {
                    addr: addr.to_string(),
                    opaque,
                    millis: timeout.as_millis(),
                })
            }
        }
    }

    /// Sends `request` with the oneway flag; no response is awaited.
    pub async fn invoke_oneway(
        &self,
        addr: &str,
        mut request: RemotingCommand,
    ) -> Result<(), ClientError> {
        let conn = self.connection(addr).await?;
        request.opaque = self.inner.next_opaque.fetch_add(1, Ordering::Relaxed);
        request.mark_oneway();
        conn.write(&request).await
    }

    /// Closes the connection to `addr`, if any.
    pub async fn close(&self, addr: &str) {
        let slot = self.inner.slots.lock().remove(addr);
        if let Some(slot) = slot {
            if let Some(conn) = slot.lock().await.take() {
                let _ = conn.writer.lock().await.shutdown().await;
            }
        }
    }

    /// The live connection to `addr`, opened (again) when there is none or it failed.
    async fn connection(&self, addr: &str) -> Result<Arc<Connection>, ClientError> {
        let slot = self
            .inner
            .slots
            .lock()
            .entry(addr.to_string())
            .or_default()
            .clone();
        let mut guard = slot.lock().await;
        if let Some(conn) = guard.as_ref().filter(|c| !c.is_closed()) {
            return Ok(conn.clone());
        }
        let conn = Connection::open(addr, self.inner.connect_timeout).await?;
        *guard = Some(conn.clone());
        Ok(conn)
    }
}
