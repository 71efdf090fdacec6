//! The message store: CommitLog / ConsumeQueue / IndexFile in the Java broker's on-disk format.
//!
//! A synchronous library with its own threads (dispatch, flush, cleanup). `MessageStore::open`
//! locks the directory, recovers and starts the services; the broker keeps it in an `Arc`.

pub mod checkpoint;
pub mod cleanup;
pub mod commitlog;
pub mod config;
pub mod config_files;
pub mod consumequeue;
pub mod dispatch;
pub mod error;
pub mod flush;
pub mod get;
mod get_message;
pub mod index;
pub mod lmq;
pub mod mapped_file;
pub mod message;
pub mod paths;
mod queue_api;
mod recovery;
mod service;
pub mod stats;
mod store_api;
pub mod tools;
pub mod util;

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tokio::sync::oneshot;

pub use checkpoint::StoreCheckpoint;
pub use cleanup::{CleanupListener, CleanupReport, ForcedDeletion};
pub use config::{BrokerRole, FlushDiskType, MessageStoreConfig};
pub use dispatch::{ArrivalListener, MessageArrival};
pub use error::{ConfigError, Result, StoreError};
pub use get::{
    BoundaryType, GetMessageResult, GetMessageStatus, MessageFilter, QueryMessageResult,
    StoreObservability, StoreRuntimeInfo,
};
pub use message::{
    AppendMessageResult, AppendMessageStatus, MessageBatchInput, MessageInput, PutMessageResult,
    PutMessageStatus,
};
pub use paths::StorePaths;

use commitlog::CommitLog;
use consumequeue::ConsumeQueueTable;
use flush::group_commit::GroupCommitQueue;
use index::IndexService;

/// State shared by the store's API and its service threads.
pub(crate) struct StoreInner {
    pub(crate) cfg: MessageStoreConfig,
    pub(crate) paths: StorePaths,
    pub(crate) commitlog: CommitLog,
    pub(crate) cqs: ConsumeQueueTable,
    pub(crate) index: Option<IndexService>,
    pub(crate) checkpoint: Arc<StoreCheckpoint>,
    pub(crate) reput_offset: AtomicI64,
    /// Wakes the dispatch thread when it sleeps and a put makes more records readable.
    pub(crate) reput_waker: service::IdleWaker,
    pub(crate) last_dispatched_ts: AtomicI64,
    pub(crate) listener: RwLock<Option<ArrivalListener>>,
    pub(crate) group_commit: Option<GroupCommitQueue>,
    pub(crate) delay_levels: Vec<i64>,
    pub(crate) disk_full: AtomicBool,
    /// Commit-log files deleted before they expired, and the messages that went with them.
    pub(crate) forced_deletions: std::sync::atomic::AtomicU64,
    pub(crate) forced_deleted_messages: std::sync::atomic::AtomicU64,
    pub(crate) cleanup_listener: RwLock<Option<cleanup::CleanupListener>>,
    pub(crate) manual_delete_passes: AtomicI32,
    pub(crate) shutdown: AtomicBool,
    pub(crate) group_commit_requests: AtomicU64,
    /// Java `StoreStatsService`: put/get counters and TPS for the runtime info.
    pub(crate) stats: stats::StoreStats,
    pub(crate) total_memory: u64,
    /// Serialises dispatch (the reput thread, recovery and shutdown): consume-queue and index
    /// appends assume a single writer.
    pub(crate) dispatch_lock: Mutex<()>,
    /// The LMQ unit dispatch cannot write now (commit-log offset, queue) and since when: given
    /// up after [`dispatch::LMQ_UNIT_RETRY`], as Java drops it after 30 tries.
    pub(crate) lmq_unit_failure: Mutex<Option<(i64, String, std::time::Instant)>>,
}

impl StoreInner {
    /// How far dispatch may read: flushed offset under SYNC_FLUSH, else everything appended.
    pub(crate) fn confirm_offset(&self) -> i64 {
        match self.cfg.flush_disk_type {
            FlushDiskType::SyncFlush => self.commitlog.flushed_offset(),
            FlushDiskType::AsyncFlush => self.commitlog.max_offset(),
        }
    }
}

/// Running service threads.
struct Services {
    reput: dispatch::reput::ReputMessageService,
    real_time: Option<flush::real_time::FlushRealTimeService>,
    group_commit: Option<flush::group_commit::GroupCommitService>,
    cq_flush: flush::consume_queue::ConsumeQueueFlushService,
    cleanup: cleanup::CleanupService,
    prefault: commitlog::prefault::PrefaultService,
    page_release: commitlog::page_release::PageReleaseService,
}

/// The message store. `Send + Sync`; share it with `Arc`.
pub struct MessageStore {
    inner: Arc<StoreInner>,
    services: Mutex<Option<Services>>,
    lock_file: Mutex<Option<File>>,
}

/// A put's outcome, plus the flush to await under SYNC_FLUSH.
#[derive(Debug)]
pub struct PutMessageHandle {
    result: PutMessageResult,
    flush: Option<(oneshot::Receiver<PutMessageStatus>, Instant)>,
}

impl PutMessageHandle {
    fn done(result: PutMessageResult) -> Self {
        PutMessageHandle {
            result,
            flush: None,
        }
    }

    /// The append outcome (status before any flush wait).
    pub fn result(&self) -> &PutMessageResult {
        &self.result
    }

    /// Whether awaiting is needed for the final status.
    pub fn needs_flush_wait(&self) -> bool {
        self.flush.is_some()
    }

    /// Waits (async) for the group-commit flush; FLUSH_DISK_TIMEOUT after `syncFlushTimeout`.
    pub async fn wait(self) -> PutMessageResult {
        let mut result = self.result;
        if let Some((rx, deadline)) = self.flush {
            let deadline = tokio::time::Instant::from_std(deadline);
            result.status = match tokio::time::timeout_at(deadline, rx).await {
                Ok(Ok(st)) => st,
                _ => PutMessageStatus::FLUSH_DISK_TIMEOUT,
            };
        }
        result
    }

    /// Waits on the calling thread (not for runtime threads).
    pub fn wait_blocking(self) -> PutMessageResult {
        let mut result = self.result;
        if let Some((mut rx, deadline)) = self.flush {
            result.status = loop {
                match rx.try_recv() {
                    Ok(st) => break st,
                    Err(oneshot::error::TryRecvError::Closed) => {
                        break PutMessageStatus::FLUSH_DISK_TIMEOUT
                    }
                    Err(oneshot::error::TryRecvError::Empty) => {
                        if Instant::now() >= deadline {
                            break PutMessageStatus::FLUSH_DISK_TIMEOUT;
                        }
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                }
            };
        }
        result
    }
}

impl MessageStore {
    /// Locks the directory, loads and recovers it, and starts the services.
    pub fn open(mut cfg: MessageStoreConfig) -> Result<Self> {
        cfg.sanitize()?;
        let (inner, lock_file) = recovery::load_and_recover(cfg)?;
        let inner = Arc::new(inner);
        let services =
            Self::start_services(&inner).map_err(|e| StoreError::io(inner.paths.root(), e))?;
        recovery::create_abort(&inner.paths)?;
        inner.checkpoint.flush()?;
        Ok(MessageStore {
            inner,
            services: Mutex::new(Some(services)),
            lock_file: Mutex::new(Some(lock_file)),
        })
    }

    fn start_services(inner: &Arc<StoreInner>) -> std::io::Result<Services> {
        let (real_time, group_commit) = match inner.cfg.flush_disk_type {
            FlushDiskType::AsyncFlush => (
                Some(flush::real_time::FlushRealTimeService::start(Arc::clone(
                    inner,
                ))?),
                None,
            ),
            FlushDiskType::SyncFlush => (
                None,
                Some(flush::group_commit::GroupCommitService::start(Arc::clone(
                    inner,
                ))?),
            ),
        };
        Ok(Services {
            reput: dispatch::reput::ReputMessageService::start(Arc::clone(inner))?,
            real_time,
            group_commit,
            cq_flush: flush::consume_queue::ConsumeQueueFlushService::start(Arc::clone(inner))?,
            cleanup: cleanup::CleanupService::start(Arc::clone(inner))?,
            prefault: commitlog::prefault::PrefaultService::start(Arc::clone(inner))?,
            page_release: commitlog::page_release::PageReleaseService::start(Arc::clone(inner))?,
        })
    }

    /// Flushes everything, writes the checkpoint, removes `abort` (if fully dispatched and
    /// writable) and releases the lock. Idempotent.
    pub fn shutdown(&self) {
        let Some(mut s) = self.services.lock().take() else {
            return;
        };
        let inner = &self.inner;
        inner.shutdown.store(true, Ordering::Release);
        s.cleanup.stop();
        s.prefault.stop();
        s.page_release.stop();
        if let Err(e) = inner.commitlog.queue.discard_preallocated() {
            tracing::warn!(error = %e, "cannot delete the pre-allocated commit-log file");
        }
        if let Some(mut rt) = s.real_time.take() {
            rt.stop();
        }
        if let (Some(mut gc), Some(q)) = (s.group_commit.take(), inner.group_commit.as_ref()) {
            gc.stop(q);
        }
        // Everything is flushed now; stop the dispatch thread (it drains to the confirm offset),
        // then dispatch whatever is left on this thread.
        let _ = flush::flush_commit_log(inner, 0, true);
        s.reput.stop();
        let _ = dispatch::reput::reput_until(inner, inner.commitlog.max_offset(), true);
        s.cq_flush.stop();
        if let Err(e) = flush::consume_queue::flush_all_logics(inner) {
            tracing::error!(error = %e, "consume-queue/index/checkpoint flush at shutdown failed");
        }
        let behind = self.dispatch_behind_bytes();
        if behind == 0 && !inner.commitlog.is_poisoned() {
            if let Err(e) = std::fs::remove_file(inner.paths.abort()) {
                tracing::warn!(error = %e, "cannot remove abort file");
            }
        } else {
            tracing::warn!(behind, "store not clean at shutdown; keeping abort file");
        }
        self.lock_file.lock().take();
        tracing::info!(root = %inner.paths.root().display(), "message store shut down");
    }

    /// Registers the listener told of every forced deletion (see `ForcedDeletion`).
    pub fn set_cleanup_listener(&self, listener: cleanup::CleanupListener) {
        *self.inner.cleanup_listener.write() = Some(listener);
    }

    /// Registers the listener called after each dispatched message.
    pub fn set_arrival_listener(&self, listener: ArrivalListener) {
        *self.inner.listener.write() = Some(listener);
    }

    pub fn config(&self) -> &MessageStoreConfig {
        &self.inner.cfg
    }
    pub fn paths(&self) -> &StorePaths {
        &self.inner.paths
    }
}

impl Drop for MessageStore {
    fn drop(&mut self) {
        self.shutdown();
    }
}
