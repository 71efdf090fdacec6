//! `CommitLog`: the append-only log of all messages. Records are encoded outside the put lock;
//! the lock covers only offset assignment (physical + queue offset, store timestamp) and the copy.

pub mod page_release;
pub mod prefault;
pub mod record;
pub mod recovery;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::ConsumeQueueTable;
use crate::store::error::Result;
use crate::store::lmq;
use crate::store::mapped_file::{MappedFile, MappedFileQueue};
use crate::store::message::{
    decode_batch, offset_msg_id, sysflag, AppendMessageResult, AppendMessageStatus,
    MessageBatchInput, MessageInput, PutMessageStatus,
};
use crate::store::service::{FailureLatch, IdleWaker};
use crate::store::util::now_ms;
use record::{PatchPoints, RecordHeader, END_FILE_MIN_BLANK_LENGTH};

/// Where a put goes, and the table holding the LMQs' put offsets.
struct Target<'a> {
    topic: &'a str,
    queue_id: i32,
    sys_flag: i32,
    store_host: &'a std::net::SocketAddr,
    cqs: &'a ConsumeQueueTable,
}

/// An LMQ message whose record the put lock encodes again with its LMQ offsets.
struct LmqEncode<'a> {
    m: &'a MessageInput,
    names: &'a str,
    v2: bool,
}

/// Bytes a record may exceed the body limit by (Java: body limit + 64 KiB).
const RECORD_OVERHEAD_LIMIT: usize = 64 * 1024;

/// A writer pre-faults pages itself when fewer than this many populated bytes are left ahead.
const HELP_MARGIN: usize = 1024 * 1024;
/// ... and then this far ahead of the wrote position.
const HELP_AHEAD: usize = 4 * 1024 * 1024;

/// State serialised by the put lock, with the LMQs' put offsets: those live in their queues
/// (`ConsumeQueueTable::lmq_put_offset`), so a million lite queues add no entry here.
struct PutState {
    /// `topic -> queueId -> next queue offset` (Java topicQueueTable), LMQs' queue 0 left out.
    queue_offsets: HashMap<String, HashMap<i32, i64>>,
    current: Option<Arc<MappedFile>>,
    last_store_ts: i64,
}

/// The commit log.
pub struct CommitLog {
    pub(crate) queue: MappedFileQueue,
    file_size: usize,
    max_message_size: usize,
    max_topic_len: usize,
    auto_v2: bool,
    /// `enableLmq`: a message naming `%LMQ%` queues in `INNER_MULTI_DISPATCH` gets their offsets.
    enable_lmq: bool,
    busy_timeout: Duration,
    put: Mutex<PutState>,
    poisoned: AtomicBool,
    /// ms when the current put-lock holder took it (0 = free): Java's page-cache-busy signal.
    lock_since: AtomicI64,
    /// The file whose fsync failed and the error, once poisoned.
    poison_cause: Mutex<Option<(PathBuf, String)>>,
    last_store_ts: AtomicI64,
    /// Wakes the idle prefault service once the max offset reaches `prefault_wake_at`.
    pub(crate) prefault_waker: IdleWaker,
    pub(crate) prefault_wake_at: AtomicI64,
    /// Whether pre-allocating the next file fails (logged when that starts and ends).
    pub(crate) prealloc_failing: FailureLatch,
    /// Whether creating the file a put needs fails.
    create_failing: FailureLatch,
    /// Lowest offset read since the page-release service last took it (`i64::MAX`: none). A
    /// pull far behind the writer maps pages the service has already released; this tells it
    /// where, so they go again on its next tick instead of at its next full sweep.
    read_low: AtomicI64,
}

thread_local! {
    static ENCODE_BUF: RefCell<(Vec<u8>, Vec<PatchPoints>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Outcome of one append (single or batch) before flush handling.
pub(crate) struct Appended {
    pub status: PutMessageStatus,
    pub result: Option<AppendMessageResult>,
    /// End offset of the appended data (for group commit).
    pub end_offset: i64,
}

impl Appended {
    fn fail(status: PutMessageStatus) -> Self {
        Appended {
            status,
            result: None,
            end_offset: 0,
        }
    }
}

impl CommitLog {
    /// Maps the commit-log files of `dir`.
    pub fn load(cfg: &MessageStoreConfig, dir: &std::path::Path) -> Result<Self> {
        let file_size = cfg.mapped_file_size_commit_log as usize;
        Ok(CommitLog {
            queue: MappedFileQueue::load(dir, file_size)?,
            file_size,
            max_message_size: cfg.max_message_size as usize,
            max_topic_len: if cfg.auto_message_version_on_topic_len {
                32767
            } else {
                127
            },
            auto_v2: cfg.auto_message_version_on_topic_len,
            enable_lmq: cfg.enable_lmq,
            busy_timeout: Duration::from_millis(cfg.os_page_cache_busy_time_out_mills.max(1) as u64),
            put: Mutex::new(PutState {
                queue_offsets: HashMap::new(),
                current: None,
                last_store_ts: 0,
            }),
            poisoned: AtomicBool::new(false),
            lock_since: AtomicI64::new(0),
            poison_cause: Mutex::new(None),
            last_store_ts: AtomicI64::new(0),
            prefault_waker: IdleWaker::default(),
            prefault_wake_at: AtomicI64::new(i64::MAX),
            prealloc_failing: FailureLatch::default(),
            create_failing: FailureLatch::default(),
            read_low: AtomicI64::new(i64::MAX),
        })
    }

    pub fn file_size(&self) -> usize {
        self.file_size
    }
    pub fn min_offset(&self) -> i64 {
        self.queue.min_offset()
    }
    pub fn max_offset(&self) -> i64 {
        self.queue.max_offset()
    }
    pub fn flushed_offset(&self) -> i64 {
        self.queue.flushed_where()
    }
    /// STORETIMESTAMP of the newest record.
    pub fn last_store_timestamp(&self) -> i64 {
        self.last_store_ts.load(Ordering::Acquire)
    }

    /// Stops all further writes after a failed fsync: what the failed flush held may not be on
    /// disk, and a later flush that succeeds proves nothing about it (the kernel may have
    /// dropped those pages). Logged once, by the first failure.
    pub fn poison(&self, path: PathBuf, error: &dyn std::fmt::Display) {
        let mut cause = self.poison_cause.lock();
        if cause.is_some() {
            return;
        }
        tracing::error!(
            %error,
            flushed_offset = self.flushed_offset(),
            max_offset = self.max_offset(),
            "fsync of the commit log failed: every write is refused from now on (sends get \
             SERVICE_NOT_AVAILABLE), reads go on; fix the disk, then restart the broker"
        );
        *cause = Some((path, error.to_string()));
        self.poisoned.store(true, Ordering::Release);
    }
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }
    pub fn poison_path(&self) -> Option<PathBuf> {
        self.poison_cause.lock().as_ref().map(|(p, _)| p.clone())
    }
    /// The failed fsync's error (it names the file), once poisoned.
    pub fn poison_cause(&self) -> Option<String> {
        self.poison_cause.lock().as_ref().map(|(_, e)| e.clone())
    }

    /// Replaces the queue offset table (after recovery; LMQs' queue 0 excepted, see
    /// [`PutState`]) and the last store timestamp.
    pub fn set_queue_offsets(&self, table: HashMap<String, HashMap<i32, i64>>, last_ts: i64) {
        let mut st = self.put.lock();
        st.queue_offsets = table;
        st.last_store_ts = last_ts;
        self.last_store_ts.store(last_ts, Ordering::Release);
    }

    /// Forgets the queue offsets of `topic` (delete_topics).
    pub fn remove_topic(&self, topic: &str) {
        self.put.lock().queue_offsets.remove(topic);
    }

    /// Removes one queue's offset counter.
    pub fn remove_queue(&self, topic: &str, queue_id: i32) {
        let mut st = self.put.lock();
        if let Some(q) = st.queue_offsets.get_mut(topic) {
            q.remove(&queue_id);
            if q.is_empty() {
                st.queue_offsets.remove(topic);
            }
        }
    }

    /// Zero-copy bytes `[offset, offset+size)`, if published and in one file.
    pub fn get_message(&self, offset: i64, size: i32) -> Option<Bytes> {
        if size <= 0 {
            return None;
        }
        let file = self.queue.find_by_offset(offset)?;
        let pos = (offset - file.from_offset()) as usize;
        let bytes = file.slice_bytes(pos, size as usize)?;
        self.note_read(offset);
        Some(bytes)
    }

    /// The whole record starting at `offset` (size read from the record).
    pub fn lookup_message(&self, offset: i64) -> Option<Bytes> {
        let file = self.queue.find_by_offset(offset)?;
        let pos = (offset - file.from_offset()) as usize;
        let (size, magic) = record::peek_header(file.read(pos, 8)?)?;
        if magic != record::MAGIC_V1 && magic != record::MAGIC_V2 || size <= 0 {
            return None;
        }
        let bytes = file.slice_bytes(pos, size as usize)?;
        self.note_read(offset);
        Some(bytes)
    }

    /// Whether the record `rec` read at `offset` may be served. Always while the disk is
    /// healthy, and for records the flush reached. Past the flush of a poisoned commit log the
    /// bytes live only in pages whose writeback failed: the kernel marks them clean and may drop
    /// any of them, after which the file reads zeros there, so such a record is served only when
    /// it is whole (lengths add up, body CRC); Java serves the bytes as they are.
    pub fn servable(&self, offset: i64, rec: &[u8]) -> bool {
        !self.is_poisoned()
            || offset + rec.len() as i64 <= self.flushed_offset()
            || matches!(record::decode(rec, true), Ok(record::Decoded::Record(_)))
    }

    /// Lowers `read_low` to `offset`. Reads are mostly at or above it (consumers move forward),
    /// so this is usually one load, not a write to a line every reader shares.
    fn note_read(&self, offset: i64) {
        if offset < self.read_low.load(Ordering::Relaxed) {
            self.read_low.fetch_min(offset, Ordering::Relaxed);
        }
    }

    /// The lowest offset read since the last call (`None`: nothing read), for the page-release
    /// service.
    pub(crate) fn take_read_low(&self) -> Option<i64> {
        Some(self.read_low.swap(i64::MAX, Ordering::Relaxed)).filter(|&o| o != i64::MAX)
    }

    /// Start offset of the file after the one holding `offset`.
    pub fn roll_next_file(&self, offset: i64) -> i64 {
        let fs = self.file_size as i64;
        offset.saturating_add(fs - offset.rem_euclid(fs))
    }

    fn check_single(&self, m: &MessageInput) -> Option<PutMessageStatus> {
        if m.topic.is_empty() || m.topic.len() > self.max_topic_len {
            return Some(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        if m.body.len() > self.max_message_size {
            return Some(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        if m.properties.len() > i16::MAX as usize {
            return Some(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED);
        }
        None
    }

    fn use_v2(&self, topic: &str) -> bool {
        self.auto_v2 && topic.len() > 127
    }

    /// Appends one message; `cqs` holds the LMQs' put offsets.
    pub(crate) fn put_message(&self, m: &MessageInput, cqs: &ConsumeQueueTable) -> Appended {
        if let Some(st) = self.check_single(m) {
            return Appended::fail(st);
        }
        if self.is_poisoned() {
            return Appended::fail(PutMessageStatus::SERVICE_NOT_AVAILABLE);
        }
        ENCODE_BUF.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (buf, pps) = &mut *guard;
            buf.clear();
            pps.clear();
            let h = RecordHeader {
                queue_id: m.queue_id,
                flag: m.flag,
                sys_flag: m.sys_flag,
                born_timestamp: m.born_timestamp,
                born_host: &m.born_host,
                store_host: &m.store_host,
                reconsume_times: m.reconsume_times,
                prepared_transaction_offset: m.prepared_transaction_offset,
            };
            let v2 = self.use_v2(&m.topic);
            match record::encode_into(
                buf,
                &h,
                &m.body,
                m.topic.as_bytes(),
                m.properties.as_bytes(),
                &[],
                v2,
            ) {
                Ok(pp) => pps.push(pp),
                Err(_) => return Appended::fail(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED),
            }
            if buf.len() > self.max_message_size + RECORD_OVERHEAD_LIMIT {
                return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
            }
            let lmq = self
                .enable_lmq
                .then(|| lmq::dispatch_names(&m.topic, m.properties.as_bytes()))
                .flatten()
                .map(|names| LmqEncode { m, names, v2 });
            let to = Target {
                topic: &m.topic,
                queue_id: m.queue_id,
                sys_flag: m.sys_flag,
                store_host: &m.store_host,
                cqs,
            };
            self.append_encoded(&to, buf, pps, lmq.as_ref())
        })
    }

    /// Under the put lock: the LMQ message's record again, with the next offset of each of its
    /// `%LMQ%` queues in `INNER_MULTI_QUEUE_OFFSET` (Java `handlePropertiesForLmqMsg`). Returns
    /// the queues whose counters move on once the record is appended.
    fn encode_lmq(
        &self,
        cqs: &ConsumeQueueTable,
        l: &LmqEncode<'_>,
        buf: &mut Vec<u8>,
        pps: &mut Vec<PatchPoints>,
    ) -> Result<Vec<String>, PutMessageStatus> {
        let m = l.m;
        let put = lmq::assign_offsets(&m.properties, l.names, |name| cqs.lmq_put_offset(name));
        if put.properties.len() > i16::MAX as usize {
            return Err(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED);
        }
        let h = RecordHeader {
            queue_id: m.queue_id,
            flag: m.flag,
            sys_flag: m.sys_flag,
            born_timestamp: m.born_timestamp,
            born_host: &m.born_host,
            store_host: &m.store_host,
            reconsume_times: m.reconsume_times,
            prepared_transaction_offset: m.prepared_transaction_offset,
        };
        buf.clear();
        pps.clear();
        let pp = record::encode_into(
            buf,
            &h,
            &m.body,
            m.topic.as_bytes(),
            put.properties.as_bytes(),
            &[],
            l.v2,
        )
        .map_err(|_| PutMessageStatus::PROPERTIES_SIZE_EXCEEDED)?;
        pps.push(pp);
        if buf.len() > self.max_message_size + RECORD_OVERHEAD_LIMIT {
            return Err(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        Ok(put.advance)
    }

    /// Appends a classic batch: one record per inner message, contiguous, consecutive queue
    /// offsets.
    pub(crate) fn put_messages(&self, b: &MessageBatchInput, cqs: &ConsumeQueueTable) -> Appended {
        if b.topic.is_empty() || b.topic.len() > self.max_topic_len {
            return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        let tran = b.sys_flag & sysflag::TRANSACTION_MASK;
        if tran != sysflag::TRANSACTION_NOT_TYPE {
            return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        if self.is_poisoned() {
            return Appended::fail(PutMessageStatus::SERVICE_NOT_AVAILABLE);
        }
        let Ok(items) = decode_batch(&b.body) else {
            return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
        };
        if items.is_empty() {
            return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        ENCODE_BUF.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (buf, pps) = &mut *guard;
            buf.clear();
            pps.clear();
            let v2 = self.use_v2(&b.topic);
            for it in &items {
                if it.body.len() > self.max_message_size {
                    return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
                }
                let h = RecordHeader {
                    queue_id: b.queue_id,
                    flag: it.flag,
                    sys_flag: b.sys_flag,
                    born_timestamp: b.born_timestamp,
                    born_host: &b.born_host,
                    store_host: &b.store_host,
                    reconsume_times: b.reconsume_times,
                    prepared_transaction_offset: 0,
                };
                let extra = b.batch_properties.as_bytes();
                match record::encode_into(
                    buf,
                    &h,
                    it.body,
                    b.topic.as_bytes(),
                    it.properties,
                    extra,
                    v2,
                ) {
                    Ok(pp) => pps.push(pp),
                    Err(_) => return Appended::fail(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED),
                }
            }
            if buf.len() + END_FILE_MIN_BLANK_LENGTH > self.file_size {
                return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
            }
            let to = Target {
                topic: &b.topic,
                queue_id: b.queue_id,
                sys_flag: b.sys_flag,
                store_host: &b.store_host,
                cqs,
            };
            self.append_encoded(&to, buf, pps, None)
        })
    }

    /// The critical section: reserve space, assign offsets and timestamp, copy. An LMQ message
    /// (`lmq`) is encoded again under the lock, with its LMQ offsets.
    fn append_encoded(
        &self,
        to: &Target<'_>,
        buf: &mut Vec<u8>,
        pps: &mut Vec<PatchPoints>,
        lmq: Option<&LmqEncode<'_>>,
    ) -> Appended {
        if buf.len() + END_FILE_MIN_BLANK_LENGTH > self.file_size {
            return Appended::fail(PutMessageStatus::MESSAGE_ILLEGAL);
        }
        // Java isOSPageCacheBusy: the current holder has kept the lock longer than the limit.
        let since = self.lock_since.load(Ordering::Relaxed);
        if since != 0 && now_ms() - since > self.busy_timeout.as_millis() as i64 {
            return Appended::fail(PutMessageStatus::OS_PAGE_CACHE_BUSY);
        }
        let mut guard = self.put.lock();
        let st = &mut *guard;
        let now = now_ms();
        self.lock_since.store(now, Ordering::Relaxed);
        let advance = match lmq.map(|l| self.encode_lmq(to.cqs, l, buf, pps)) {
            Some(Err(status)) => {
                self.lock_since.store(0, Ordering::Relaxed);
                return Appended::fail(status);
            }
            Some(Ok(advance)) => advance,
            None => Vec::new(),
        };
        let total = buf.len();
        let result = if total + END_FILE_MIN_BLANK_LENGTH > self.file_size {
            Err(PutMessageStatus::MESSAGE_ILLEGAL)
        } else {
            self.append_locked(st, now, to, buf, pps)
        };
        if result.is_ok() {
            // Java `LmqDispatch.updateLmqOffsets`: each named LMQ moves on by one
            for name in advance {
                to.cqs.advance_lmq_put_offset(&name);
            }
        }
        self.lock_since.store(0, Ordering::Relaxed);
        // The prefault service is behind (starved of CPU, or the file just rolled): fault in the
        // next pages here, after unlocking, so no append under the lock takes the faults.
        let behind = st
            .current
            .as_ref()
            .filter(|f| f.needs_prefault(HELP_MARGIN))
            .map(Arc::clone);
        let end = st
            .current
            .as_ref()
            .map_or(0, |f| f.from_offset() + f.wrote_position() as i64);
        drop(guard);
        if let Some(f) = behind {
            f.prefault_to(f.wrote_position() + HELP_AHEAD);
        }
        self.prefault_waker
            .wake_if(|| end >= self.prefault_wake_at.load(Ordering::Relaxed));
        let (base_phys, store_ts, base_qo) = match result {
            Ok(v) => v,
            Err(status) => return Appended::fail(status),
        };
        let msg_id = if pps.len() == 1 {
            offset_msg_id(to.store_host, base_phys)
        } else {
            let ids: Vec<String> = pps
                .iter()
                .map(|pp| offset_msg_id(to.store_host, base_phys + pp.start as i64))
                .collect();
            ids.join(",")
        };
        Appended {
            status: PutMessageStatus::PUT_OK,
            end_offset: base_phys + total as i64,
            result: Some(AppendMessageResult {
                status: AppendMessageStatus::PUT_OK,
                wrote_offset: base_phys,
                wrote_bytes: total as i32,
                msg_id,
                store_timestamp: store_ts,
                logics_offset: base_qo,
                msg_num: pps.len() as i32,
            }),
        }
    }

    /// Under the put lock: reserve space, assign offsets and store time, copy. Returns
    /// (first physical offset, store timestamp, first queue offset).
    fn append_locked(
        &self,
        st: &mut PutState,
        now: i64,
        to: &Target<'_>,
        buf: &mut [u8],
        pps: &[PatchPoints],
    ) -> Result<(i64, i64, i64), PutMessageStatus> {
        let (topic, queue_id) = (to.topic, to.queue_id);
        let total = buf.len();
        if let Err(e) = self.writable_file(st, total) {
            // once per streak: every put meets it while the disk refuses
            if self.create_failing.failed() {
                tracing::error!(error = %e, "cannot create commit-log file: puts are refused \
                    (CREATE_MAPPED_FILE_FAILED) until the disk takes a new file");
            }
            return Err(PutMessageStatus::CREATE_MAPPED_FILE_FAILED);
        }
        if self.create_failing.succeeded() {
            tracing::warn!("creating commit-log files works again");
        }
        // Disjoint borrows of the state: the file stays borrowed (no Arc clone per append) and the
        // queue's counter is looked up once (one hash of the topic).
        let PutState {
            queue_offsets,
            current,
            last_store_ts,
        } = st;
        let Some(file) = current.as_ref() else {
            return Err(PutMessageStatus::CREATE_MAPPED_FILE_FAILED);
        };
        let store_ts = now.max(*last_store_ts);
        let tran = to.sys_flag & sysflag::TRANSACTION_MASK;
        let counts =
            tran == sysflag::TRANSACTION_NOT_TYPE || tran == sysflag::TRANSACTION_COMMIT_TYPE;
        let lmq_queue = lmq::is_lmq_queue(topic, queue_id);
        let slot = if counts && !lmq_queue {
            queue_offsets
                .get_mut(topic)
                .and_then(|q| q.get_mut(&queue_id))
        } else {
            None
        };
        let base_qo = match slot.as_deref() {
            Some(n) => *n,
            None if counts && lmq_queue => to.cqs.lmq_put_offset(topic),
            None => 0,
        };
        let base_phys = file.from_offset() + file.wrote_position() as i64;
        for (i, pp) in pps.iter().enumerate() {
            let qo = if counts { base_qo + i as i64 } else { 0 };
            let phys = base_phys + pp.start as i64;
            record::patch(
                &mut buf[pp.start..pp.start + pp.len],
                pp,
                qo,
                phys,
                store_ts,
            );
        }
        // The body's second copy (request -> encode buffer -> mapping). Writing it straight into
        // the mapping was tried and measured ("Writing the body once", benches/README.md): no
        // gain above this box's noise at 1 and 16 KiB, so the encode stays outside the lock.
        if file.append(buf).is_none() {
            return Err(PutMessageStatus::UNKNOWN_ERROR);
        }
        file.set_last_store_timestamp(store_ts);
        if counts {
            let next = base_qo + pps.len() as i64;
            match slot {
                Some(n) => *n = next,
                None if lmq_queue => to.cqs.set_lmq_put_offset(topic, next),
                // First message of this queue since start.
                None => {
                    queue_offsets
                        .entry(topic.to_string())
                        .or_default()
                        .insert(queue_id, next);
                }
            }
        }
        *last_store_ts = store_ts;
        self.last_store_ts.store(store_ts, Ordering::Release);
        Ok((base_phys, store_ts, base_qo))
    }

    /// Makes `st.current` a file with room for `len` bytes (plus the minimum blank); writes the
    /// blank record and rolls when needed.
    fn writable_file(&self, st: &mut PutState, len: usize) -> Result<()> {
        let file = match st.current.take() {
            Some(f) if !f.is_full() => f,
            _ => self.new_or_last_file()?,
        };
        let remaining = file.remaining();
        // files this store created are allocated whole; a loaded one (Java's, or sparse) is
        // allocated as appends reach it, so a full disk refuses the put instead of faulting
        if len + END_FILE_MIN_BLANK_LENGTH <= remaining {
            file.reserve(file.wrote_position() + len + END_FILE_MIN_BLANK_LENGTH)?;
            st.current = Some(file);
            return Ok(());
        }
        if remaining >= END_FILE_MIN_BLANK_LENGTH {
            file.reserve(file.size())?;
            file.append(&record::blank_record(remaining));
        }
        file.mark_full();
        st.current = Some(self.new_or_last_file()?);
        Ok(())
    }

    fn new_or_last_file(&self) -> Result<Arc<MappedFile>> {
        self.queue.last_file_or_create(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_report_their_lowest_offset_once_to_the_page_release_service() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = MessageStoreConfig {
            mapped_file_size_commit_log: 64 * 1024,
            ..MessageStoreConfig::default()
        };
        let log = CommitLog::load(&cfg, dir.path()).unwrap();
        let f = log.queue.last_file_or_create(0).unwrap();
        f.append(&[7u8; 4096]).unwrap();
        assert_eq!(log.take_read_low(), None, "nothing read yet");
        assert!(log.get_message(3000, 10).is_some());
        assert!(log.get_message(100, 10).is_some());
        assert!(log.get_message(2000, 10).is_some());
        assert_eq!(log.take_read_low(), Some(100));
        assert_eq!(log.take_read_low(), None, "taken");
        // A read past the data maps nothing and counts for nothing.
        assert!(log.get_message(5000, 10).is_none());
        assert!(log.get_message(1 << 20, 10).is_none());
        assert_eq!(log.take_read_low(), None);
    }
}
