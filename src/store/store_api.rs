//! `MessageStore` operations the broker calls: put, get, lookups, queries, admin.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use super::commitlog::record::{self, Decoded};
use super::dispatch::OwnRecord;
use super::flush::group_commit::FlushRequest;
use super::get::*;
use super::index::IndexKind;
use super::mapped_file::os::disk_used_ratio;
use super::message::*;
use super::util::{find_property, props_iter};
use super::{cleanup, CleanupReport, FlushDiskType, MessageStore, PutMessageHandle};

/// Java `getDiskPartitionSpaceUsedPercent`'s answer: the ratio rounded up to a whole percent,
/// -1 when the path cannot be measured.
fn java_percent(ratio: Option<f64>) -> f64 {
    ratio.map_or(-1.0, |r| (r * 100.0).ceil() / 100.0)
}

fn wants_wait(props: &[u8]) -> bool {
    find_property(props, "WAIT") != Some(b"false")
}

impl MessageStore {
    fn refuse_put(&self) -> Option<PutMessageStatus> {
        let i = &self.inner;
        (i.shutdown.load(Ordering::Acquire)
            || i.disk_full.load(Ordering::Acquire)
            || i.commitlog.is_poisoned())
        .then_some(PutMessageStatus::SERVICE_NOT_AVAILABLE)
    }

    /// Appends one message. Under SYNC_FLUSH (and `WAIT` not `false`) the handle must be awaited
    /// for the final status; otherwise `result()` is final.
    pub fn put_message(&self, msg: &MessageInput) -> PutMessageHandle {
        if let Some(st) = self.refuse_put() {
            return PutMessageHandle::done(PutMessageResult {
                status: st,
                append: None,
            });
        }
        let started = Instant::now();
        let a = self.inner.commitlog.put_message(msg, &self.inner.cqs);
        let own = a.result.as_ref().map(|r| OwnRecord {
            phy: r.wrote_offset,
            tags_code: msg.tags_code,
        });
        self.after_append(a, own, started, || msg.wait_store_msg_ok)
    }

    /// Appends a classic batch (one record per inner message).
    pub fn put_messages(&self, batch: &MessageBatchInput) -> PutMessageHandle {
        if let Some(st) = self.refuse_put() {
            return PutMessageHandle::done(PutMessageResult {
                status: st,
                append: None,
            });
        }
        let started = Instant::now();
        let a = self.inner.commitlog.put_messages(batch, &self.inner.cqs);
        self.after_append(a, None, started, || {
            wants_wait(batch.batch_properties.as_bytes())
        })
    }

    fn after_append(
        &self,
        a: super::commitlog::Appended,
        own: Option<OwnRecord>,
        started: Instant,
        wait: impl FnOnce() -> bool,
    ) -> PutMessageHandle {
        let stats = &self.inner.stats;
        let ok = a.status == PutMessageStatus::PUT_OK;
        if let Some(r) = a.result.as_ref().filter(|_| ok) {
            stats.stored(r.msg_num.max(1) as u64, r.wrote_bytes.max(0) as u64);
        }
        let result = PutMessageResult {
            status: a.status,
            append: a.result,
        };
        if a.status == PutMessageStatus::CREATE_MAPPED_FILE_FAILED {
            // most likely the disk is full: the next puts get SERVICE_NOT_AVAILABLE
            super::cleanup::check_disk(&self.inner);
        }
        if !ok || self.inner.cfg.flush_disk_type != FlushDiskType::SyncFlush {
            if ok {
                super::dispatch::reput::dispatch_after_put(&self.inner, own);
            }
            stats.put_done(started.elapsed(), ok);
            return PutMessageHandle::done(result);
        }
        let Some(q) = self.inner.group_commit.as_ref() else {
            stats.put_done(started.elapsed(), ok);
            return PutMessageHandle::done(result);
        };
        if !wait() {
            q.wake();
            stats.put_done(started.elapsed(), ok);
            return PutMessageHandle::done(result);
        }
        let (tx, rx) = oneshot::channel();
        let deadline =
            Instant::now() + Duration::from_millis(self.inner.cfg.sync_flush_timeout.max(1) as u64);
        self.inner
            .group_commit_requests
            .fetch_add(1, Ordering::Relaxed);
        q.submit(FlushRequest {
            next_offset: a.end_offset,
            deadline,
            started,
            tx,
        });
        PutMessageHandle {
            result,
            flush: Some((rx, deadline)),
        }
    }

    /// The whole record at commit-log offset `phys_offset` (zero copy); `None` for one torn after
    /// a failed fsync (`CommitLog::servable`).
    pub fn lookup_message_by_offset(&self, phys_offset: i64) -> Option<Bytes> {
        let cl = &self.inner.commitlog;
        cl.lookup_message(phys_offset)
            .filter(|rec| cl.servable(phys_offset, rec))
    }

    /// Records whose `UNIQ_KEY` equals `key` or whose `KEYS` contain it, stored in [begin, end].
    pub fn query_message(
        &self,
        topic: &str,
        key: &str,
        max_num: usize,
        begin: i64,
        end: i64,
    ) -> QueryMessageResult {
        self.query_message_by(IndexKind::Key, topic, key, max_num, begin, end)
    }

    /// Records found through the index: by key as `query_message`, or (`IndexKind::Tag`) those
    /// whose TAGS equal `key`, through Java 5.5's tag entries (`rmqdIndexTags`, or an index a Java
    /// 5.5 broker wrote).
    pub fn query_message_by(
        &self,
        kind: IndexKind,
        topic: &str,
        key: &str,
        max_num: usize,
        begin: i64,
        end: i64,
    ) -> QueryMessageResult {
        let mut out = QueryMessageResult::default();
        let Some(index) = &self.inner.index else {
            return out;
        };
        let max = max_num.min(self.inner.cfg.max_msgs_num_batch.max(1) as usize);
        for phy in index.query(kind, topic, key, max, begin, end) {
            let Some(b) = self.lookup_message_by_offset(phy) else {
                continue;
            };
            let Ok(Decoded::Record(r)) = record::decode(&b, false) else {
                continue;
            };
            let key = key.as_bytes();
            let has_key = |(k, v): (&[u8], &[u8])| match kind {
                IndexKind::Key => {
                    (k == b"UNIQ_KEY" && v == key)
                        || (k == b"KEYS" && v.split(|&c| c == b' ').any(|w| w == key))
                }
                IndexKind::Tag => k == b"TAGS" && v == key,
            };
            if r.topic == topic.as_bytes()
                && r.phys_offset == phy
                && props_iter(r.properties).any(has_key)
            {
                out.phy_offsets.push(phy);
                out.messages.push(b);
            }
        }
        out.index_last_update_phyoffset = index.end_phy_offset();
        out.index_last_update_timestamp = self.inner.checkpoint.values()[2];
        out
    }

    /// Java `getMinOffsetInQueue` (0 if the queue does not exist).
    pub fn min_offset_in_queue(&self, topic: &str, queue_id: i32) -> i64 {
        self.inner
            .cqs
            .find(topic, queue_id)
            .map_or(0, |q| q.min_offset_in_queue())
    }

    /// Topics with a consume queue whose name starts with `prefix` (the lite queues of a parent).
    pub fn queue_topics_with_prefix(&self, prefix: &str) -> Vec<String> {
        let mut t: Vec<String> = self
            .inner
            .cqs
            .topics()
            .into_iter()
            .filter(|t| t.starts_with(prefix))
            .collect();
        t.sort();
        t
    }

    /// Calls `f` with each topic starting with `prefix` (the lite queues of a parent, or of all
    /// parents) and its queue 0's max offset, until `f` breaks. Walks a list of queue handles
    /// taken first, so a million lite queues cost 8 bytes each for the walk, not a copy of every
    /// name.
    pub fn for_each_topic_with_prefix(
        &self,
        prefix: &str,
        mut f: impl FnMut(&str, i64) -> std::ops::ControlFlow<()>,
    ) {
        let (lmqs, others) = self.inner.cqs.with_prefix(prefix);
        for q in &lmqs {
            if f(q.topic(), q.max_offset_in_queue()).is_break() {
                return;
            }
        }
        for t in &others {
            if f(t, self.max_offset_in_queue(t, 0)).is_break() {
                return;
            }
        }
    }

    /// How many topics have consume queues (Java's consume-queue table size).
    pub fn queue_topic_count(&self) -> usize {
        self.inner.cqs.topic_count()
    }

    /// How many LMQ consume queues exist (Java `getLmqNum`).
    pub fn lmq_count(&self) -> usize {
        self.inner.cqs.lmq_count()
    }

    /// LMQs with a queue or named by a put not dispatched yet (the LMQ quota's count).
    pub fn lmq_count_named(&self) -> usize {
        self.inner.cqs.lmq_count_named()
    }

    /// Whether LMQ `name` has a queue or is named by a put not dispatched yet.
    pub fn lmq_named(&self, name: &str) -> bool {
        self.inner.cqs.lmq_named(name)
    }

    /// Whether the LMQ (or any topic) has a consume queue (Java `isLmqExist`).
    pub fn queue_exists(&self, topic: &str) -> bool {
        self.inner.cqs.find_topic(topic)
    }

    /// Java `getMaxOffsetInQueue` (0 if the queue does not exist).
    pub fn max_offset_in_queue(&self, topic: &str, queue_id: i32) -> i64 {
        self.inner
            .cqs
            .find(topic, queue_id)
            .map_or(0, |q| q.max_offset_in_queue())
    }

    /// STORETIMESTAMP of the record at commit-log `phy` (-1 if unreadable).
    fn pickup_store_timestamp(&self, phy: i64, size: i32) -> i64 {
        match self.inner.commitlog.get_message(phy, size) {
            Some(b) => match record::decode(&b, false) {
                Ok(Decoded::Record(r)) => r.store_timestamp,
                _ => -1,
            },
            None => -1,
        }
    }

    /// Store time of the message at `offset` of a queue (-1 if none).
    pub fn message_store_timestamp(&self, topic: &str, queue_id: i32, offset: i64) -> i64 {
        let Some(cq) = self.inner.cqs.find(topic, queue_id) else {
            return -1;
        };
        cq.get_unit(offset)
            .map_or(-1, |u| self.pickup_store_timestamp(u.phy_offset, u.size))
    }

    /// Store time of the earliest message of a queue (-1 if none).
    pub fn earliest_message_time(&self, topic: &str, queue_id: i32) -> i64 {
        let min = self.min_offset_in_queue(topic, queue_id);
        self.message_store_timestamp(topic, queue_id, min)
    }

    /// Store time of the first record of the commit log (-1 if empty).
    pub fn earliest_message_time_store(&self) -> i64 {
        let min = self.inner.commitlog.min_offset();
        self.lookup_message_by_offset(min)
            .and_then(|b| match record::decode(&b, false) {
                Ok(Decoded::Record(r)) => Some(r.store_timestamp),
                _ => None,
            })
            .unwrap_or(-1)
    }

    /// Java `getOffsetInQueueByTime` over the whole queue.
    pub fn offset_in_queue_by_time(
        &self,
        topic: &str,
        queue_id: i32,
        ts: i64,
        boundary: BoundaryType,
    ) -> i64 {
        let Some(cq) = self.inner.cqs.find(topic, queue_id) else {
            return 0;
        };
        let (min, max) = (cq.min_offset_in_queue(), cq.max_offset_in_queue());
        if max <= min {
            return max;
        }
        let cl_min = self.inner.commitlog.min_offset();
        let time_at = |i: i64| -> i64 {
            match cq.get_unit(i) {
                Some(u) if u.phy_offset >= cl_min => {
                    self.pickup_store_timestamp(u.phy_offset, u.size)
                }
                _ => i64::MIN,
            }
        };
        // First index whose time is > ts (Upper) or >= ts (Lower).
        let (mut lo, mut hi) = (min, max);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let t = time_at(mid);
            let go_right = match boundary {
                BoundaryType::Lower => t < ts,
                BoundaryType::Upper => t <= ts,
            };
            if go_right {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        match boundary {
            BoundaryType::Lower => lo,
            BoundaryType::Upper => (lo - 1).max(min),
        }
    }

    pub fn min_phy_offset(&self) -> i64 {
        self.inner.commitlog.min_offset()
    }
    pub fn max_phy_offset(&self) -> i64 {
        self.inner.commitlog.max_offset()
    }
    /// Commit-log bytes not yet dispatched to consume queues/index.
    pub fn dispatch_behind_bytes(&self) -> i64 {
        (self.inner.commitlog.max_offset() - self.inner.reput_offset.load(Ordering::Acquire)).max(0)
    }

    /// Deletes the consume queues (and offset counters) of `topics`.
    pub fn delete_topics(&self, topics: &[&str]) -> super::Result<usize> {
        let mut n = 0;
        for t in topics {
            if self.inner.cqs.find_topic(t) {
                n += 1;
            }
            self.inner.cqs.remove_topic(t)?;
            self.inner.commitlog.remove_topic(t);
        }
        Ok(n)
    }

    /// Java `cleanExpiredConsumerQueue`: destroys non-system queues whose last message is below
    /// the commit log's min offset.
    pub fn clean_expired_consume_queue(&self) -> super::Result<usize> {
        let min = self.inner.commitlog.min_offset();
        let mut n = 0;
        for cq in self.inner.cqs.all() {
            let t = cq.topic();
            if t.starts_with("rmq_sys_")
                || super::dispatch::SCHEDULE_TOPIC == t
                || t.starts_with("RMQ_SYS_")
            {
                continue;
            }
            let last = cq.max_offset_in_queue() - 1;
            let expired = match cq.get_unit(last) {
                Some(u) => u.end() <= min,
                None => true,
            };
            if expired {
                self.inner.cqs.remove_queue(t, cq.queue_id())?;
                self.inner.commitlog.remove_queue(t, cq.queue_id());
                n += 1;
            }
        }
        Ok(n)
    }

    /// Arms 20 cleanup passes that delete expired files regardless of `deleteWhen` (admin).
    pub fn execute_delete_files_manually(&self) {
        self.inner.manual_delete_passes.store(20, Ordering::Release);
    }

    /// Runs one cleanup pass now; `force` deletes unexpired files too (never the last one).
    pub fn delete_expired_files_now(&self, force: bool) -> CleanupReport {
        cleanup::run_pass(&self.inner, true, force)
    }

    /// Flushes the commit log, consume queues, index and checkpoint now.
    pub fn flush_all(&self) -> super::Result<()> {
        super::flush::flush_commit_log(&self.inner, 0, true).map_err(|_| {
            super::StoreError::Poisoned {
                path: self.inner.commitlog.poison_path().unwrap_or_default(),
            }
        })?;
        super::flush::consume_queue::flush_all_logics(&self.inner)
    }

    /// Blocks until dispatch has caught up with everything confirmed (tests, admin).
    pub fn wait_dispatched(&self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            let confirm = self.inner.confirm_offset();
            if self.inner.reput_offset.load(Ordering::Acquire) >= confirm {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// Once a second: the store's TPS sample (Java `StoreStatsService`'s own thread).
    pub fn sample_stats(&self) {
        self.inner.stats.sample();
    }

    /// Messages stored and messages transferred to readers since start (Java BrokerStats's
    /// `msgPutTotalTodayNow` and `msgGetTotalTodayNow`).
    pub fn message_totals(&self) -> (u64, u64) {
        let s = &self.inner.stats;
        (s.put_times_total(), s.get_transferred_total())
    }

    /// The failed fsync's error once the commit log is poisoned (writes refused until restart).
    pub fn poisoned(&self) -> Option<String> {
        self.inner.commitlog.poison_cause()
    }

    /// Used ratios (0..1, -1 when unknown) of the partitions holding the commit log, the consume
    /// queues and the index, as Java's send refusal reports them.
    pub fn disk_used_ratios(&self) -> [f64; 3] {
        let p = &self.inner.paths;
        [
            p.commit_log_dir().to_path_buf(),
            p.consume_queue_root(),
            p.index_dir(),
        ]
        .map(|d| disk_used_ratio(&d).unwrap_or(-1.0))
    }

    /// Whether puts are refused because the disk is over `diskSpaceWarningLevelRatio`.
    pub fn is_disk_full(&self) -> bool {
        self.inner.disk_full.load(Ordering::Acquire)
    }

    /// What rmqd's own metrics read (README "Metrics"): usage of each store path next to the
    /// ratios cleanup and refusal start at, dispatch lag in time, put and flush latencies, the
    /// last recovery.
    pub fn observability(&self) -> StoreObservability<'_> {
        let i = &self.inner;
        let mut paths = vec![i.paths.root().to_path_buf()];
        let cl = i.commitlog.queue.dir().to_path_buf();
        if !cl.starts_with(i.paths.root()) {
            paths.push(cl);
        }
        let path_usage = paths
            .into_iter()
            .filter_map(|p| disk_used_ratio(&p).map(|r| (p.display().to_string(), r)))
            .collect();
        let pct = |v: i32| v as f64 / 100.0;
        let behind = self.dispatch_behind_bytes() > 0;
        let last_put = i.commitlog.last_store_timestamp();
        let last_dispatched = i.last_dispatched_ts.load(Ordering::Acquire);
        StoreObservability {
            path_usage,
            watermarks: vec![
                ("clean_expired", pct(i.cfg.disk_max_used_space_ratio)),
                ("clean_forcibly", pct(i.cfg.disk_space_clean_forcibly_ratio)),
                ("refuse_writes", pct(i.cfg.disk_space_warning_level_ratio)),
            ],
            dispatch_behind_ms: if behind && last_dispatched > 0 {
                (last_put - last_dispatched).max(0)
            } else {
                0
            },
            put_latency: &i.stats.put_latency,
            flush_latency: &i.stats.flush_latency,
            recovery_ms: i.stats.recovery_ms.load(Ordering::Relaxed),
            recovery_scanned_bytes: i.stats.recovery_scanned_bytes.load(Ordering::Relaxed),
        }
    }

    /// Figures for GET_BROKER_RUNTIME_INFO.
    pub fn runtime_info(&self) -> StoreRuntimeInfo {
        let i = &self.inner;
        StoreRuntimeInfo {
            commit_log_disk_ratio: java_percent(disk_used_ratio(i.commitlog.queue.dir())),
            // Java: the consume-queue directory (-1 until it exists)
            consume_queue_disk_ratio: java_percent(disk_used_ratio(&i.paths.consume_queue_root())),
            commit_log_min_offset: i.commitlog.min_offset(),
            commit_log_max_offset: i.commitlog.max_offset(),
            dispatch_behind_bytes: self.dispatch_behind_bytes(),
            stats: i.stats.runtime_info(),
            commit_log_dir: i.commitlog.queue.dir().display().to_string(),
            root_dir_space: super::mapped_file::os::disk_space(i.paths.root()),
            remain_to_flush: (i.commitlog.max_offset() - i.commitlog.flushed_offset()).max(0),
            group_commit_flushes: i.commitlog.queue.flush_count(),
            group_commit_requests: i.group_commit_requests.load(Ordering::Relaxed),
            earliest_message_time: self.earliest_message_time_store(),
            disk_full: i.disk_full.load(Ordering::Acquire),
            poisoned: i.commitlog.poison_cause(),
            forced_deleted_files: i.forced_deletions.load(Ordering::Acquire),
            forced_deleted_messages: i.forced_deleted_messages.load(Ordering::Acquire),
        }
    }
}
