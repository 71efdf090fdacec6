//! Accept loop and per-connection read loop. A malformed frame closes only its connection, with a
//! log line naming the peer and the reason; an overloaded server answers SYSTEM_BUSY.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::budget::{ReceiveBudget, DEFAULT_RECEIVE_BUDGET};
use super::connection::Connection;
use super::reader::{FrameReader, ReadError};
use super::{writer, RequestHandler};
use crate::remoting::{FrameCodec, RemotingCommand, ResponseCode};

/// Connection ids are unique in the process, across every server (the broker's client port and
/// VIP channel share registrations and locks keyed by them).
static NEXT_CONNECTION_ID: AtomicU64 = AtomicU64::new(1);

/// How long a closing connection waits for its requests still running before its write side closes.
const REQUESTS_DRAIN: Duration = Duration::from_secs(5);

/// Limits of one server. Java's names where Java has the knob.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: SocketAddr,
    /// Connections beyond this are closed at accept.
    pub max_connections: usize,
    /// Requests being processed at once, server-wide; beyond it requests get SYSTEM_BUSY.
    pub max_in_flight: usize,
    /// `serverChannelMaxIdleTimeSeconds`: a connection with nothing to read this long is closed.
    pub idle_timeout: Duration,
    pub max_frame_length: usize,
    /// `serverSocketBacklog`: connections the kernel queues before they are accepted (1024).
    pub backlog: u32,
    /// Limits shared with another server (the broker's VIP channel counts against the client
    /// port's): (connections, requests in flight). `None`: this server's own.
    pub shared_limits: Option<SharedLimits>,
    /// `rmqdReceiveBufferBudget`: bytes of large frames being received, process-wide.
    pub receive_budget: ReceiveBudget,
}

/// Connection and in-flight budgets several servers draw from.
#[derive(Debug, Clone)]
pub struct SharedLimits {
    connections: Arc<Semaphore>,
    in_flight: Arc<Semaphore>,
}

impl SharedLimits {
    pub fn new(max_connections: usize, max_in_flight: usize) -> Self {
        Self {
            connections: Arc::new(Semaphore::new(max_connections)),
            in_flight: Arc::new(Semaphore::new(max_in_flight)),
        }
    }
}

impl ServerConfig {
    pub fn new(bind: SocketAddr) -> Self {
        Self {
            bind,
            max_connections: 10_000,
            max_in_flight: 65_536,
            idle_timeout: Duration::from_secs(120),
            max_frame_length: crate::remoting::MAX_FRAME_LENGTH,
            backlog: 1024,
            shared_limits: None,
            receive_budget: ReceiveBudget::new(DEFAULT_RECEIVE_BUDGET),
        }
    }
}

/// A running server: its address, and a way to stop it.
pub struct ServerHandle {
    pub local_addr: SocketAddr,
    shutdown: CancellationToken,
    tasks: TaskTracker,
}

impl ServerHandle {
    /// Stops accepting and reading, lets in-flight requests finish and flush, then returns.
    pub async fn shutdown(&self, grace: Duration) {
        self.shutdown.cancel();
        self.tasks.close();
        if tokio::time::timeout(grace, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(addr = %self.local_addr, "shutdown grace period over with requests still running");
        }
    }
}

/// Binds `config.bind` and serves `handler` until shut down.
pub async fn serve<H: RequestHandler>(
    config: ServerConfig,
    handler: Arc<H>,
) -> std::io::Result<ServerHandle> {
    let socket = if config.bind.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // as std's bind does on Unix: a restarted broker can listen while old connections linger
    socket.set_reuseaddr(true)?;
    socket.bind(config.bind)?;
    let listener = socket.listen(config.backlog)?;
    let local_addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let tasks = TaskTracker::new();
    let limits = config
        .shared_limits
        .clone()
        .unwrap_or_else(|| SharedLimits::new(config.max_connections, config.max_in_flight));
    let server = Arc::new(Server {
        config,
        handler,
        shutdown: shutdown.clone(),
        tasks: tasks.clone(),
        connections: limits.connections,
        in_flight: limits.in_flight,
    });
    tasks.spawn(server.accept_loop(listener));
    Ok(ServerHandle {
        local_addr,
        shutdown,
        tasks,
    })
}

struct Server<H> {
    config: ServerConfig,
    handler: Arc<H>,
    shutdown: CancellationToken,
    tasks: TaskTracker,
    connections: Arc<Semaphore>,
    in_flight: Arc<Semaphore>,
}

impl<H: RequestHandler> Server<H> {
    async fn accept_loop(self: Arc<Self>, listener: TcpListener) {
        loop {
            let accepted = tokio::select! {
                _ = self.shutdown.cancelled() => return,
                a = listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(permit) = self.connections.clone().try_acquire_owned() else {
                tracing::warn!(%peer, limit = self.config.max_connections, "connection limit reached, closing");
                continue;
            };
            let server = self.clone();
            self.tasks.spawn(async move {
                server.serve_connection(stream, peer).await;
                drop(permit);
            });
        }
    }

    async fn serve_connection(self: Arc<Self>, stream: TcpStream, peer: SocketAddr) {
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().unwrap_or(self.config.bind);
        let (read, write) = stream.into_split();
        let (tx, rx) = mpsc::unbounded_channel();
        let id = NEXT_CONNECTION_ID.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Connection::new(id, peer, local, tx));
        // Objects elsewhere (client registry, held pulls) may keep the connection alive; the writer
        // is told explicitly when this connection is done.
        let closed = CancellationToken::new();
        let writer = tokio::spawn(writer::run(write, rx, closed.clone(), peer));
        let requests = TaskTracker::new();
        let codec = FrameCodec::with_max_frame_length(self.config.max_frame_length);
        let budget = self.config.receive_budget.clone();
        let mut frames = FrameReader::new(read, codec, budget, self.config.idle_timeout);
        let reason = loop {
            let next = tokio::select! {
                _ = self.shutdown.cancelled() => break "server shutting down".to_string(),
                n = frames.next() => n,
            };
            match next {
                Ok(Some(cmd)) => self.on_frame(&conn, &requests, cmd),
                Ok(None) => break "closed by the peer".to_string(),
                Err(e @ ReadError::Io(_)) => break e.to_string(),
                Err(e @ ReadError::Idle(_)) => {
                    tracing::info!(%peer, "closing idle connection");
                    break e.to_string();
                }
                Err(e) => {
                    tracing::warn!(%peer, reason = %e, "closing connection");
                    break e.to_string();
                }
            }
        };
        tracing::debug!(%peer, %local, conn = id, %reason, "connection closing");
        conn.fail_pending();
        self.handler.on_close(&conn);
        drop(conn);
        // answer what was read before closing the write side (bounded: a held pull may wait long)
        requests.close();
        let _ = tokio::time::timeout(REQUESTS_DRAIN, requests.wait()).await;
        closed.cancel();
        let _ = writer.await;
    }

    fn on_frame(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        requests: &TaskTracker,
        cmd: RemotingCommand,
    ) {
        if cmd.is_response() {
            if !conn.complete(cmd) {
                tracing::debug!(peer = %conn.peer, "response with an unknown opaque dropped");
            }
            return;
        }
        conn.note_client(&cmd);
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            if !cmd.is_oneway() {
                let busy =
                    RemotingCommand::response_to(&cmd, ResponseCode::SYSTEM_BUSY.code(), None)
                        .with_remark("[OVERLOAD]system busy, start flow control for a while");
                conn.send(busy);
            }
            return;
        };
        // The request is polled once right here, in the read loop. Most requests (a send under
        // ASYNC_FLUSH, an offset update, a pull that finds messages) finish in that poll: no task
        // is spawned for them, and the answers to every frame of one read are queued before the
        // writer runs, so they leave in one writev. A request that has to wait (SYNC_FLUSH, a held
        // pull, a broker→client call) becomes a task; its first poll used a no-op waker, so the
        // task's own first poll registers the real one.
        let oneway = cmd.is_oneway();
        let mut request = Box::pin(self.handler.clone().handle(conn.clone(), cmd));
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(response) = request.as_mut().poll(&mut cx) {
            if let (Some(r), false) = (response, oneway) {
                conn.send(r);
            }
            return;
        }
        let conn = conn.clone();
        self.tasks.spawn(requests.track_future(async move {
            let response = request.await;
            if let (Some(r), false) = (response, oneway) {
                conn.send(r);
            }
            drop(permit);
        }));
    }
}
