//! `MessageStoreConfig`: the store's settings under Java's `broker.conf` key names and defaults.
//!
//! Every key is a Java `MessageStoreConfig` field name; `set` accepts what Java's properties loader
//! accepts (trimmed strings, `true`/`false`, decimal numbers, enum names). Call `sanitize()` before
//! any file is opened.

use std::path::PathBuf;

use crate::common::config::config_table;
use crate::store::error::ConfigError;

/// `flushDiskType`: when an append counts as durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushDiskType {
    /// Flushed in the background every `flushIntervalCommitLog` ms (Java default).
    AsyncFlush,
    /// Appends with `WAIT=true` wait for a group-commit fsync (up to `syncFlushTimeout`).
    SyncFlush,
}

/// `brokerRole` as far as the store cares (slaves keep offsets on pull).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerRole {
    AsyncMaster,
    SyncMaster,
    Slave,
}

/// A value type a config key can hold: parsed from and rendered to the properties form.
pub trait ConfigValue: Sized {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError>;
    fn render(&self) -> String;
}

fn bad(key: &'static str, raw: &str, expected: &'static str) -> ConfigError {
    ConfigError::BadValue {
        key,
        value: raw.to_string(),
        expected,
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ConfigValue for $t {
            fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
                raw.trim().parse().map_err(|_| bad(key, raw, stringify!($t)))
            }
            fn render(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
int_value!(i32, i64);

impl ConfigValue for bool {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        // Java's Boolean.parseBoolean: "true" (any case) is true, anything else false.
        let _ = key;
        Ok(raw.trim().eq_ignore_ascii_case("true"))
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl ConfigValue for String {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok(raw.trim().to_string())
    }
    fn render(&self) -> String {
        self.clone()
    }
}

impl ConfigValue for Option<String> {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        let v = raw.trim();
        Ok((!v.is_empty()).then(|| v.to_string()))
    }
    fn render(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

impl ConfigValue for FlushDiskType {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        match raw.trim() {
            "ASYNC_FLUSH" | "0" => Ok(FlushDiskType::AsyncFlush),
            "SYNC_FLUSH" | "1" => Ok(FlushDiskType::SyncFlush),
            _ => Err(bad(key, raw, "ASYNC_FLUSH or SYNC_FLUSH")),
        }
    }
    fn render(&self) -> String {
        match self {
            FlushDiskType::AsyncFlush => "ASYNC_FLUSH",
            FlushDiskType::SyncFlush => "SYNC_FLUSH",
        }
        .to_string()
    }
}

impl ConfigValue for BrokerRole {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        match raw.trim() {
            "ASYNC_MASTER" => Ok(BrokerRole::AsyncMaster),
            "SYNC_MASTER" => Ok(BrokerRole::SyncMaster),
            "SLAVE" => Ok(BrokerRole::Slave),
            _ => Err(bad(key, raw, "ASYNC_MASTER, SYNC_MASTER or SLAVE")),
        }
    }
    fn render(&self) -> String {
        match self {
            BrokerRole::AsyncMaster => "ASYNC_MASTER",
            BrokerRole::SyncMaster => "SYNC_MASTER",
            BrokerRole::Slave => "SLAVE",
        }
        .to_string()
    }
}

fn default_root() -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| ".".to_string());
    format!("{home}/store")
}

config_table! {
    /// The store's configuration (Java `MessageStoreConfig`), field names snake_case of the keys.
    #[derive(Debug, Clone)]
    pub struct MessageStoreConfig: ConfigValue => ConfigError {
        /// ROOT of the store (`${user.home}/store`).
        "storePathRootDir" store_path_root_dir: String = default_root();
        /// Commit-log directory; empty = `ROOT/commitlog`. Multi-path (comma list) is not supported.
        "storePathCommitLog" store_path_commit_log: Option<String> = None;
        /// Bytes per commit-log file (1 GiB).
        "mappedFileSizeCommitLog" mapped_file_size_commit_log: i32 = 1024 * 1024 * 1024;
        /// Bytes per consume-queue file (300,000 units x 20); rounded up to a multiple of 20.
        "mappedFileSizeConsumeQueue" mapped_file_size_consume_queue: i32 = 300_000 * 20;
        /// Body size limit in bytes (4 MiB).
        "maxMessageSize" max_message_size: i32 = 4 * 1024 * 1024;
        /// Index slots per index file.
        "maxHashSlotNum" max_hash_slot_num: i32 = 5_000_000;
        /// Index entries per index file (entry 0 unused).
        "maxIndexNum" max_index_num: i32 = 20_000_000;
        /// Max results of one index query.
        "maxMsgsNumBatch" max_msgs_num_batch: i32 = 64;
        /// Build index files.
        "messageIndexEnable" message_index_enable: bool = true;
        /// Also index each message's TAGS as `topic#T#tags`, as Java 5.5 writes its index (5.3.3
        /// does not: off keeps the index files byte-identical to 5.3.3's). Queries by tag
        /// (QUERY_MESSAGE `indexType=T`) are answered either way from the entries there are.
        [unlisted] "rmqdIndexTags" index_tags: bool = false;
        /// Recovery also respects the index checkpoint.
        "messageIndexSafe" message_index_safe: bool = false;
        /// ASYNC_FLUSH or SYNC_FLUSH.
        "flushDiskType" flush_disk_type: FlushDiskType = FlushDiskType::AsyncFlush;
        /// ms between async commit-log flushes.
        "flushIntervalCommitLog" flush_interval_commit_log: i32 = 500;
        /// true = sleep the interval; false = wait (wakeable).
        "flushCommitLogTimed" flush_commit_log_timed: bool = true;
        /// Dirty 4 KiB pages needed before an async flush.
        "flushCommitLogLeastPages" flush_commit_log_least_pages: i32 = 4;
        /// ms after which an async flush ignores least pages.
        "flushCommitLogThoroughInterval" flush_commit_log_thorough_interval: i32 = 10_000;
        /// ms between consume-queue flushes.
        "flushIntervalConsumeQueue" flush_interval_consume_queue: i32 = 1000;
        /// Dirty pages needed before a consume-queue flush.
        "flushConsumeQueueLeastPages" flush_consume_queue_least_pages: i32 = 2;
        /// ms after which a consume-queue flush ignores least pages.
        "flushConsumeQueueThoroughInterval" flush_consume_queue_thorough_interval: i32 = 60_000;
        /// ms a SYNC_FLUSH put waits for its fsync before FLUSH_DISK_TIMEOUT.
        "syncFlushTimeout" sync_flush_timeout: i64 = 5000;
        /// Verify body CRCs during recovery.
        "checkCRCOnRecover" check_crc_on_recover: bool = true;
        /// Hours a commit-log file is kept after its last modification.
        "fileReservedTime" file_reserved_time: i32 = 72;
        /// Hours of day (`;`-separated) when expired files are deleted.
        "deleteWhen" delete_when: String = "04".to_string();
        /// % disk usage above which cleanup runs regardless of the hour (clamped 10..95).
        "diskMaxUsedSpaceRatio" disk_max_used_space_ratio: i32 = 75;
        /// % disk usage above which writes are refused (clamped 35..90).
        "diskSpaceWarningLevelRatio" disk_space_warning_level_ratio: i32 = 90;
        /// % disk usage above which unexpired files are deleted (clamped 30..85).
        "diskSpaceCleanForciblyRatio" disk_space_clean_forcibly_ratio: i32 = 85;
        /// ms between cleanup passes.
        "cleanResourceInterval" clean_resource_interval: i32 = 10_000;
        /// ms between two commit-log file deletions.
        "deleteCommitLogFilesInterval" delete_commit_log_files_interval: i32 = 100;
        /// ms between two consume-queue file deletions.
        "deleteConsumeQueueFilesInterval" delete_consume_queue_files_interval: i32 = 100;
        /// ms before a still-referenced file is force-closed (mapping stays valid for readers here).
        "destroyMapedFileIntervalForcibly" destroy_maped_file_interval_forcibly: i32 = 120_000;
        /// ms between retries of a hanged deletion.
        "redeleteHangedFileInterval" redelete_hanged_file_interval: i32 = 120_000;
        /// Commit-log files deleted per pass.
        "deleteFileBatchMax" delete_file_batch_max: i32 = 10;
        /// Allow deleting unexpired files above the clean-forcibly ratio.
        "cleanFileForciblyEnable" clean_file_forcibly_enable: bool = true;
        /// Pre-touch new commit-log files.
        "warmMapedFileEnable" warm_maped_file_enable: bool = false;
        /// Pages between flushes while warming a file.
        "flushLeastPagesWhenWarmMapedFile" flush_least_pages_when_warm_maped_file: i32 = 4096;
        /// Scan limit in CQ bytes of one pull (filtering).
        "maxFilterMessageSize" max_filter_message_size: i32 = 16_000;
        /// Pull batch byte limit when the data is in memory.
        "maxTransferBytesOnMessageInMemory" max_transfer_bytes_on_message_in_memory: i32 = 256 * 1024;
        /// Pull batch message limit when the data is in memory.
        "maxTransferCountOnMessageInMemory" max_transfer_count_on_message_in_memory: i32 = 32;
        /// Pull batch byte limit when the data is on disk.
        "maxTransferBytesOnMessageInDisk" max_transfer_bytes_on_message_in_disk: i32 = 64 * 1024;
        /// Pull batch message limit when the data is on disk.
        "maxTransferCountOnMessageInDisk" max_transfer_count_on_message_in_disk: i32 = 8;
        /// % of RAM the newest commit-log bytes are assumed to occupy in page cache.
        "accessMessageInMemoryMaxRatio" access_message_in_memory_max_ratio: i32 = 40;
        /// Consume-queue files visited by one pull.
        "travelCqFileNumWhenGetMessage" travel_cq_file_num_when_get_message: i32 = 1;
        /// Default result limit of a key query.
        "defaultQueryMaxNum" default_query_max_num: i32 = 32;
        /// ms a put may wait for the put lock before OS_PAGE_CACHE_BUSY.
        "osPageCacheBusyTimeOutMills" os_page_cache_busy_time_out_mills: i64 = 1000;
        /// ms, delay level table (Java syntax).
        "messageDelayLevel" message_delay_level: String = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".to_string();
        /// Accurate timer messages (TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS); off: refused.
        "timerWheelEnable" timer_wheel_enable: bool = true;
        /// Longest accepted timer delay, in seconds.
        "timerMaxDelaySec" timer_max_delay_sec: i64 = 259200;
        /// Timer delivery precision, ms (delivery times are rounded down to it).
        "timerPrecisionMs" timer_precision_ms: i64 = 1000;
        /// Keep incoming store timestamp/offsets (replication); not supported, must stay false.
        "duplicationEnable" duplication_enable: bool = false;
        /// v2 records for topics longer than 127 bytes.
        "autoMessageVersionOnTopicLen" auto_message_version_on_topic_len: bool = true;
        /// Max topic length accepted by the store.
        "maxTopicLength" max_topic_length: i32 = 127;
        /// Broker role; slaves keep the requested offset on pull errors.
        "brokerRole" broker_role: BrokerRole = BrokerRole::AsyncMaster;
        /// Slaves also correct offsets.
        "offsetCheckInSlave" offset_check_in_slave: bool = false;
        /// Start dispatch from the consume queues' max physical offset.
        "recheckReputOffsetFromCq" recheck_reput_offset_from_cq: bool = false;
        /// Transient store pool (accepted, ignored: no on-disk difference).
        "transientStorePoolEnable" transient_store_pool_enable: bool = false;
        /// Write through the channel instead of mmap (accepted, ignored).
        "writeWithoutMmap" write_without_mmap: bool = false;
        /// Append `__CRC32#` property (not supported; must stay false).
        "enabledAppendPropCRC" enabled_append_prop_crc: bool = false;
        /// Verify the `__CRC32#` property instead of the body CRC.
        "forceVerifyPropCRC" force_verify_prop_crc: bool = false;
        /// LMQ: a message naming `%LMQ%` queues in `INNER_MULTI_DISPATCH` gets their next offsets in
        /// `INNER_MULTI_QUEUE_OFFSET` at put (`store::lmq`).
        "enableLmq" enable_lmq: bool = false;
        /// Multi-dispatch: one more consume-queue unit per queue in `INNER_MULTI_DISPATCH`.
        "enableMultiDispatch" enable_multi_dispatch: bool = false;
        /// With `enableLmqQuota`: at most this many LMQ consume queues; a send naming a new one
        /// beyond it is refused with LMQ_QUOTA_EXCEEDED (2017) (Java 5.5 `HookUtils.handleLmqQuota`).
        "maxLmqConsumeQueueNum" max_lmq_consume_queue_num: i64 = 20000;
        "enableLmqQuota" enable_lmq_quota: bool = false;
        /// Consume-queue ext (not supported; must stay false).
        "enableConsumeQueueExt" enable_consume_queue_ext: bool = false;
        /// Store type: "default" (file consume queues) or "defaultRocksDB" (the RocksDB
        /// consume queue; needs a build with the `rocksdb-cq` feature).
        "storeType" store_type: String = "default".to_string();
        /// RocksDB consume queue in `ROOT/consumequeue_rocksdb` instead of `ROOT/consumequeue`.
        "useSeparateStorePathForRocksdbCQ" use_separate_store_path_for_rocksdb_cq: bool = false;
        /// DLedger commit log (not supported; must stay false).
        "enableDLegerCommitLog" enable_dleger_commit_log: bool = false;
    }
}

impl MessageStoreConfig {
    /// A config rooted at `root` with every other key at its default.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        MessageStoreConfig {
            store_path_root_dir: root.into().to_string_lossy().into_owned(),
            ..Default::default()
        }
    }

    /// Clamps and rounds values as Java's getters do and rejects combinations the store cannot
    /// honour. Call before opening any file.
    pub fn sanitize(&mut self) -> Result<(), ConfigError> {
        let cq = self.mapped_file_size_consume_queue.max(20);
        self.mapped_file_size_consume_queue = (cq + 19) / 20 * 20;
        self.disk_max_used_space_ratio = self.disk_max_used_space_ratio.clamp(10, 95);
        self.disk_space_warning_level_ratio = self.disk_space_warning_level_ratio.clamp(35, 90);
        self.disk_space_clean_forcibly_ratio = self.disk_space_clean_forcibly_ratio.clamp(30, 85);
        if self.mapped_file_size_commit_log < 4096 {
            return range("mappedFileSizeCommitLog", "must be at least 4096 bytes");
        }
        if self.max_message_size <= 0 {
            return range("maxMessageSize", "must be positive");
        }
        if self.max_hash_slot_num <= 0 || self.max_index_num <= 1 {
            return range(
                "maxHashSlotNum",
                "maxHashSlotNum > 0 and maxIndexNum > 1 required",
            );
        }
        if self.is_rocksdb_store() && !cfg!(feature = "rocksdb-cq") {
            return range(
                "storeType",
                "defaultRocksDB needs rmqd built with `--features rocksdb-cq` (see README, \
                 \"RocksDB consume queue\")",
            );
        }
        let unsupported = [
            (
                "storeType",
                !self.store_type.eq_ignore_ascii_case("default") && !self.is_rocksdb_store(),
            ),
            ("enableDLegerCommitLog", self.enable_dleger_commit_log),
            ("enableConsumeQueueExt", self.enable_consume_queue_ext),
            ("duplicationEnable", self.duplication_enable),
            ("enabledAppendPropCRC", self.enabled_append_prop_crc),
        ];
        for (key, on) in unsupported {
            if on {
                return range(key, "this value is not supported by the rmqd store");
            }
        }
        if let Some(p) = &self.store_path_commit_log {
            if p.contains(',') {
                return range(
                    "storePathCommitLog",
                    "multi-path commit logs are not supported",
                );
            }
        }
        Ok(())
    }

    /// `storeType=defaultRocksDB` (Java `isEnableRocksDBStore`, case-insensitive).
    pub fn is_rocksdb_store(&self) -> bool {
        self.store_type.eq_ignore_ascii_case("defaultRocksDB")
    }

    /// Delay of each level in ms (`messageDelayLevel`), level 1 first.
    pub fn delay_levels_ms(&self) -> Vec<i64> {
        self.message_delay_level
            .split_whitespace()
            .filter_map(|item| {
                let (num, unit) = item.split_at(item.len().saturating_sub(1));
                let n: i64 = num.parse().ok()?;
                let mult = match unit {
                    "s" => 1000,
                    "m" => 60_000,
                    "h" => 3_600_000,
                    "d" => 86_400_000,
                    _ => return None,
                };
                Some(n * mult)
            })
            .collect()
    }
}

fn range(key: &'static str, reason: &str) -> Result<(), ConfigError> {
    Err(ConfigError::OutOfRange {
        key,
        reason: reason.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_known_unknown_and_bad_keys() {
        let mut c = MessageStoreConfig::default();
        assert!(c.set("flushDiskType", "SYNC_FLUSH").unwrap());
        assert_eq!(c.flush_disk_type, FlushDiskType::SyncFlush);
        assert!(!c.set("brokerName", "x").unwrap());
        let err = c.set("maxMessageSize", "big").unwrap_err();
        assert!(err.to_string().contains("maxMessageSize"));
        assert!(c
            .keys_and_values()
            .iter()
            .any(|(k, v)| *k == "flushDiskType" && v == "SYNC_FLUSH"));
    }

    #[test]
    fn sanitize_rounds_cq_size_and_clamps_ratios() {
        let mut c = MessageStoreConfig {
            mapped_file_size_consume_queue: 1001,
            disk_max_used_space_ratio: 99,
            ..Default::default()
        };
        c.sanitize().unwrap();
        assert_eq!(c.mapped_file_size_consume_queue, 1020);
        assert_eq!(c.disk_max_used_space_ratio, 95);
        assert_eq!(c.delay_levels_ms()[2], 10_000);
    }
}
