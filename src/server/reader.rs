//! The read side of one connection: frames decoded from a buffer that grows with what arrives.
//! A frame up to [`OWN_FRAME`] bytes is read on the connection's own allowance; a larger one first
//! takes its announced size from the process-wide [`ReceiveBudget`], and until it gets it the
//! connection reads nothing more (the peer meets TCP back-pressure).

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{timeout_at, Duration, Instant};

use super::budget::ReceiveBudget;
use crate::remoting::{FrameCodec, RemotingCommand, RemotingError};

/// Frames up to this size (length field included) never wait for the budget: the normal traffic
/// (sends of a few KiB, pulls, heartbeats) stays off the shared semaphore, whose waiters are
/// served first. What a connection holds without budget is bounded by this and the buffer growth.
pub const OWN_FRAME: usize = 64 * 1024;

/// A connection's read buffer to start with: a few requests; it doubles as bursts need.
const READ_BUFFER: usize = 8 * 1024;

/// Above this, an emptied read buffer is replaced by a small one (idle connections stay cheap).
const RETAINED_READ_BUFFER: usize = 256 * 1024;

/// Why a connection stops reading.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadError {
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed frame: {0}")]
    Malformed(#[from] RemotingError),
    #[error("no complete frame for {0:?}")]
    Idle(Duration),
    #[error("no receive budget for a {length}-byte frame within {waited:?}")]
    BudgetWait { length: usize, waited: Duration },
    #[error(
        "frame of {length} bytes is larger than the whole receive budget ({budget} bytes, \
         rmqdReceiveBufferBudget)"
    )]
    OverBudget { length: usize, budget: usize },
}

pub(super) struct FrameReader {
    read: OwnedReadHalf,
    buf: BytesMut,
    codec: FrameCodec,
    budget: ReceiveBudget,
    /// `serverChannelMaxIdleTimeSeconds`: the most a frame may take to arrive, and to get budget.
    idle: Duration,
}

impl FrameReader {
    pub(super) fn new(
        read: OwnedReadHalf,
        codec: FrameCodec,
        budget: ReceiveBudget,
        idle: Duration,
    ) -> Self {
        Self {
            read,
            buf: BytesMut::with_capacity(READ_BUFFER),
            codec,
            budget,
            idle,
        }
    }

    /// The next frame; `Ok(None)` when the peer closed. A frame must arrive within the idle time
    /// (counted again once a large frame got its budget), so a peer that trickles a frame cannot
    /// hold budget longer than that.
    pub(super) async fn next(&mut self) -> Result<Option<RemotingCommand>, ReadError> {
        let mut deadline = Instant::now() + self.idle;
        let mut grant = None;
        loop {
            if grant.is_none() {
                if let Some(length) = self.codec.announced_length(&self.buf)? {
                    let frame = 4 + length;
                    if frame > OWN_FRAME {
                        grant = Some(self.admit(frame).await?);
                        deadline = Instant::now() + self.idle;
                    }
                }
            }
            if let Some(cmd) = self.codec.decode_frame(&mut self.buf)? {
                // a large frame grew the buffer: give it back once nothing is pending
                if self.buf.is_empty() && self.buf.capacity() > RETAINED_READ_BUFFER {
                    self.buf = BytesMut::with_capacity(READ_BUFFER);
                }
                return Ok(Some(cmd));
            }
            let read = timeout_at(deadline, self.read.read_buf(&mut self.buf)).await;
            match read.map_err(|_| ReadError::Idle(self.idle))?? {
                0 => return Ok(None),
                _ => continue,
            }
        }
    }

    /// Holds `frame` bytes of the budget, waiting at most the idle time for them.
    async fn admit(&self, frame: usize) -> Result<OwnedSemaphorePermit, ReadError> {
        let total = self.budget.total();
        let bytes = match u32::try_from(frame) {
            Ok(bytes) if frame <= total => bytes,
            _ => {
                return Err(ReadError::OverBudget {
                    length: frame,
                    budget: total,
                })
            }
        };
        match tokio::time::timeout(self.idle, self.budget.acquire(bytes)).await {
            Ok(Some(permit)) => Ok(permit),
            _ => Err(ReadError::BudgetWait {
                length: frame,
                waited: self.idle,
            }),
        }
    }
}
