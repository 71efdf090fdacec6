//! The process-wide budget for bytes of frames being received: a frame larger than a connection
//! reads on its own holds its announced size of it from its first bytes until it is decoded.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// `rmqdReceiveBufferBudget`'s default: 32 frames of the 16 MiB maximum at once.
pub const DEFAULT_RECEIVE_BUDGET: usize = 512 * 1024 * 1024;

/// Bytes shared by every server of a process (the broker's ports and its embedded NameServer).
/// Admission is all-or-nothing per frame, so a frame that got its share always completes at its
/// sender's pace, and waiting frames are served in arrival order.
#[derive(Debug, Clone)]
pub struct ReceiveBudget {
    bytes: Arc<Semaphore>,
    total: usize,
}

impl ReceiveBudget {
    pub fn new(total: usize) -> Self {
        let total = total.min(Semaphore::MAX_PERMITS);
        Self {
            bytes: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// Bytes no frame holds right now.
    pub fn available(&self) -> usize {
        self.bytes.available_permits()
    }

    /// Waits until `bytes` (at most [`Self::total`]) are free and holds them. `None` only if the
    /// semaphore were closed, which nothing does.
    pub(super) async fn acquire(&self, bytes: u32) -> Option<OwnedSemaphorePermit> {
        self.bytes.clone().acquire_many_owned(bytes).await.ok()
    }
}
