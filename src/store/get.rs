//! Pull-side types: `GetMessageStatus`, `GetMessageResult`, `MessageFilter`, query results.

use bytes::Bytes;

use crate::common::java_format::java_double;

/// Java `GetMessageStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum GetMessageStatus {
    FOUND,
    NO_MATCHED_MESSAGE,
    MESSAGE_WAS_REMOVING,
    OFFSET_FOUND_NULL,
    OFFSET_OVERFLOW_BADLY,
    OFFSET_OVERFLOW_ONE,
    OFFSET_TOO_SMALL,
    NO_MATCHED_LOGIC_QUEUE,
    NO_MESSAGE_IN_QUEUE,
    OFFSET_RESET,
}

/// Result of a pull: records as zero-copy `Bytes` borrowing the mapped commit log.
#[derive(Debug, Clone)]
pub struct GetMessageResult {
    pub status: GetMessageStatus,
    pub next_begin_offset: i64,
    pub min_offset: i64,
    pub max_offset: i64,
    /// Whole records, in queue order.
    pub messages: Vec<Bytes>,
    /// Queue offset of each record.
    pub queue_offsets: Vec<i64>,
    pub buffer_total_size: usize,
    pub suggest_pulling_from_slave: bool,
}

impl GetMessageResult {
    pub(crate) fn new(status: GetMessageStatus, next: i64, min: i64, max: i64) -> Self {
        GetMessageResult {
            status,
            next_begin_offset: next,
            min_offset: min,
            max_offset: max,
            messages: Vec::new(),
            queue_offsets: Vec::new(),
            buffer_total_size: 0,
            suggest_pulling_from_slave: false,
        }
    }
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }
}

/// Two-stage pull filter (Java `MessageFilter`): first by the consume-queue tagsCode, then by the
/// record bytes (real tag / SQL92 property checks).
pub trait MessageFilter: Send + Sync {
    fn is_matched_by_consume_queue(&self, tags_code: i64) -> bool;
    fn is_matched_by_commit_log(&self, record: &[u8]) -> bool;
}

/// Java `BoundaryType` for time searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundaryType {
    /// First message stored at or after the time.
    Lower,
    /// Last message stored at or before the time.
    Upper,
}

/// Result of a key query.
#[derive(Debug, Clone, Default)]
pub struct QueryMessageResult {
    pub messages: Vec<Bytes>,
    pub phy_offsets: Vec<i64>,
    pub index_last_update_timestamp: i64,
    pub index_last_update_phyoffset: i64,
}

/// Figures for rmqd's own metrics (`MessageStore::observability`).
#[derive(Debug)]
pub struct StoreObservability<'a> {
    /// (path, used ratio as statvfs reports it, unrounded) of the store root and, when it lies
    /// elsewhere, the commit-log directory.
    pub path_usage: Vec<(String, f64)>,
    /// The configured ratios: expired files deleted (`diskMaxUsedSpaceRatio`), files deleted
    /// even if unexpired (`diskSpaceCleanForciblyRatio`), writes refused
    /// (`diskSpaceWarningLevelRatio`).
    pub watermarks: Vec<(&'static str, f64)>,
    /// Store time of the newest message minus that of the last dispatched one, while dispatch
    /// is behind; 0 when caught up.
    pub dispatch_behind_ms: i64,
    pub put_latency: &'a crate::common::histogram::Histogram,
    pub flush_latency: &'a crate::common::histogram::Histogram,
    pub recovery_ms: u64,
    pub recovery_scanned_bytes: u64,
}

/// Figures for GET_BROKER_RUNTIME_INFO.
#[derive(Debug, Clone, Default)]
pub struct StoreRuntimeInfo {
    pub commit_log_disk_ratio: f64,
    pub consume_queue_disk_ratio: f64,
    pub commit_log_min_offset: i64,
    pub commit_log_max_offset: i64,
    pub dispatch_behind_bytes: i64,
    /// Java `StoreStatsService.getRuntimeInfo()`'s pairs.
    pub stats: Vec<(&'static str, String)>,
    /// The commit-log directory (Java adds `commitLogDiskRatio_<path>` per path).
    pub commit_log_dir: String,
    /// (total, free) bytes of the store root's file system.
    pub root_dir_space: Option<(u64, u64)>,
    /// Bytes appended but not yet flushed.
    pub remain_to_flush: i64,
    pub group_commit_flushes: u64,
    pub group_commit_requests: u64,
    pub earliest_message_time: i64,
    pub disk_full: bool,
    /// The failed fsync's error once the commit log is poisoned.
    pub poisoned: Option<String>,
    /// Commit-log files deleted before they expired (disk pressure), and the messages in them.
    pub forced_deleted_files: u64,
    pub forced_deleted_messages: u64,
}

impl StoreRuntimeInfo {
    /// Java-ish key/value pairs.
    pub fn to_kv(&self) -> Vec<(String, String)> {
        let mut kv: Vec<(String, String)> = self
            .stats
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        kv.push((
            format!("commitLogDiskRatio_{}", self.commit_log_dir),
            java_double(self.commit_log_disk_ratio),
        ));
        let own: Vec<(&'static str, String)> = vec![
            (
                "commitLogDiskRatio",
                java_double(self.commit_log_disk_ratio),
            ),
            (
                "consumeQueueDiskRatio",
                java_double(self.consume_queue_disk_ratio),
            ),
            ("commitLogMinOffset", self.commit_log_min_offset.to_string()),
            ("commitLogMaxOffset", self.commit_log_max_offset.to_string()),
            (
                "dispatchBehindBytes",
                self.dispatch_behind_bytes.to_string(),
            ),
            (
                "earliestMessageTimeStamp",
                self.earliest_message_time.to_string(),
            ),
            ("rmqdDiskFull", self.disk_full.to_string()),
            (
                "rmqdCommitLogFsyncFailed",
                self.poisoned.clone().unwrap_or_default(),
            ),
            (
                "rmqdForcedDeletedCommitLogFiles",
                self.forced_deleted_files.to_string(),
            ),
            (
                "rmqdForcedDeletedMessages",
                self.forced_deleted_messages.to_string(),
            ),
        ];
        kv.extend(own.into_iter().map(|(k, v)| (k.to_string(), v)));
        kv
    }
}
