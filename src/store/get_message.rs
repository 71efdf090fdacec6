//! `MessageStore::get_message` (Java `DefaultMessageStore.getMessage`): the consume-queue units
//! from an offset, filtered, read from the commit log as zero-copy records.

use bytes::Bytes;

use super::commitlog::record;
use super::consumequeue::{ConsumeQueue, CqUnit, CQ_UNIT_SIZE};
use super::get::*;
use super::{BrokerRole, MessageStore};

/// Java `MAX_PULL_MSG_SIZE` (128 MiB).
const MAX_PULL_MSG_SIZE: usize = 128 * 1024 * 1024;

/// The bounds of one read, fixed before its first unit.
struct PullBounds {
    /// The requested queue offset.
    offset: i64,
    /// The queue's max offset.
    max: i64,
    max_msg_nums: usize,
    /// Bytes of units looked at (`maxFilterMessageSize`, at least one unit per wanted message).
    max_filter: usize,
    max_pull: usize,
    /// The commit log's max offset.
    max_phy: i64,
    /// How far behind `max_phy` a record still counts as in memory.
    mem: i64,
}

/// Where a read has got to.
struct Cursor {
    next: i64,
    max_phy_pulling: i64,
}

/// What one unit gives.
enum UnitRead {
    Found(Bytes),
    /// No message: the status it leaves while nothing was found, and for a unit of a deleted
    /// commit-log file, where the next file starts.
    Skipped {
        status: GetMessageStatus,
        next_file: Option<i64>,
    },
}

impl UnitRead {
    const FILTERED: UnitRead = UnitRead::Skipped {
        status: GetMessageStatus::NO_MATCHED_MESSAGE,
        next_file: None,
    };
}

impl MessageStore {
    /// Java `getMessage`: reads up to `max_msg_nums` records from `offset` (statuses and
    /// next-offset rules as Java's DefaultMessageStore).
    pub fn get_message(
        &self,
        topic: &str,
        queue_id: i32,
        offset: i64,
        max_msg_nums: i32,
        max_total_bytes: i32,
        filter: Option<&dyn MessageFilter>,
    ) -> GetMessageResult {
        let started = std::time::Instant::now();
        let r = self.get_message_unrecorded(
            topic,
            queue_id,
            offset,
            max_msg_nums,
            max_total_bytes,
            filter,
        );
        let found = if r.status == GetMessageStatus::FOUND {
            r.messages.len() as u64
        } else {
            0
        };
        self.inner.stats.get_done(found, started.elapsed());
        r
    }

    fn get_message_unrecorded(
        &self,
        topic: &str,
        queue_id: i32,
        offset: i64,
        max_msg_nums: i32,
        max_total_bytes: i32,
        filter: Option<&dyn MessageFilter>,
    ) -> GetMessageResult {
        let Some(cq) = self.inner.cqs.find(topic, queue_id) else {
            // Java's store creates the queue on first look (`findConsumeQueue`), so a queue never
            // written answers as an empty one: NO_MESSAGE_IN_QUEUE
            let next = self.correct_offset(offset, 0);
            return GetMessageResult::new(GetMessageStatus::NO_MESSAGE_IN_QUEUE, next, 0, 0);
        };
        let (min, max) = (cq.min_offset_in_queue(), cq.max_offset_in_queue());
        if let Some((status, next)) = self.offset_outside_queue(offset, min, max) {
            return GetMessageResult::new(status, next, min, max);
        }
        let bounds = self.pull_bounds(offset, max, max_msg_nums, max_total_bytes);
        self.read_queue(&cq, min, &bounds, filter)
    }

    /// The next offset a pull is told: `new`, except on a slave without `offsetCheckInSlave`.
    fn correct_offset(&self, old: i64, new: i64) -> i64 {
        let cfg = &self.inner.cfg;
        if cfg.broker_role != BrokerRole::Slave || cfg.offset_check_in_slave {
            new
        } else {
            old
        }
    }

    /// Java's status and next offset for an `offset` that has no unit (`None` when it has one).
    fn offset_outside_queue(
        &self,
        offset: i64,
        min: i64,
        max: i64,
    ) -> Option<(GetMessageStatus, i64)> {
        use GetMessageStatus::*;
        let (status, next) = if max == 0 {
            (NO_MESSAGE_IN_QUEUE, 0)
        } else if offset < min {
            (OFFSET_TOO_SMALL, min)
        } else if offset == max {
            (OFFSET_OVERFLOW_ONE, offset)
        } else if offset > max {
            (OFFSET_OVERFLOW_BADLY, max)
        } else {
            return None;
        };
        Some((status, self.correct_offset(offset, next)))
    }

    fn pull_bounds(
        &self,
        offset: i64,
        max: i64,
        max_msg_nums: i32,
        max_total_bytes: i32,
    ) -> PullBounds {
        let inner = &self.inner;
        let cfg = &inner.cfg;
        let max_msg_nums = max_msg_nums.max(0) as usize;
        PullBounds {
            offset,
            max,
            max_msg_nums,
            max_filter: (cfg.max_filter_message_size.max(0) as usize)
                .max(max_msg_nums * CQ_UNIT_SIZE),
            max_pull: (max_total_bytes.max(100) as usize).min(MAX_PULL_MSG_SIZE),
            max_phy: inner.commitlog.max_offset(),
            mem: (inner.total_memory as f64 * cfg.access_message_in_memory_max_ratio as f64 / 100.0)
                as i64,
        }
    }

    /// Reads from `b.offset` on, going on to the next consume-queue file while nothing was found
    /// (at most `travelCqFileNumWhenGetMessage` files).
    fn read_queue(
        &self,
        cq: &ConsumeQueue,
        min: i64,
        b: &PullBounds,
        filter: Option<&dyn MessageFilter>,
    ) -> GetMessageResult {
        let travel = self.inner.cfg.travel_cq_file_num_when_get_message.max(1);
        let mut res =
            GetMessageResult::new(GetMessageStatus::NO_MATCHED_MESSAGE, b.offset, min, b.max);
        let mut at = Cursor {
            next: b.offset,
            max_phy_pulling: 0,
        };
        let mut cq_files = 0;
        while res.buffer_total_size == 0 && at.next < b.max && cq_files < travel {
            cq_files += 1;
            // a file queue gives the rest of its file; RocksDB `maxMsgNums` units (Java's
            // `iterateFrom(offset, maxMsgNums)`)
            let Some(units) = cq.units_from(at.next, b.max_msg_nums) else {
                res.status = GetMessageStatus::OFFSET_FOUND_NULL;
                at.next = self.correct_offset(at.next, cq.roll_next_file(at.next));
                break;
            };
            let base = at.next;
            self.read_units(units.bytes(), base, b, filter, &mut at, &mut res);
        }
        res.suggest_pulling_from_slave = b.max_phy.saturating_sub(at.max_phy_pulling) > b.mem;
        res.next_begin_offset = at.next;
        res
    }

    /// Reads the units of one consume-queue file into `res`; `base` is the first one's queue
    /// offset.
    fn read_units(
        &self,
        units: &[u8],
        base: i64,
        b: &PullBounds,
        filter: Option<&dyn MessageFilter>,
        at: &mut Cursor,
        res: &mut GetMessageResult,
    ) {
        let mut next_phy_file_start = i64::MIN;
        for (i, chunk) in units.chunks_exact(CQ_UNIT_SIZE).enumerate() {
            if at.next >= b.max {
                break;
            }
            let Some(u) = CqUnit::decode(chunk) else {
                break;
            };
            let qo = base + i as i64;
            if self.pull_full(&u, qo, b, res) {
                break;
            }
            at.max_phy_pulling = u.phy_offset;
            at.next = qo + 1;
            if next_phy_file_start != i64::MIN && u.phy_offset < next_phy_file_start {
                continue;
            }
            match self.read_unit(&u, filter) {
                UnitRead::Found(bytes) => {
                    res.buffer_total_size += bytes.len();
                    res.messages.push(bytes);
                    res.queue_offsets.push(qo);
                    res.status = GetMessageStatus::FOUND;
                    next_phy_file_start = i64::MIN;
                }
                UnitRead::Skipped { status, next_file } => {
                    if res.buffer_total_size == 0 {
                        res.status = status;
                    }
                    if let Some(start) = next_file {
                        next_phy_file_start = start;
                    }
                }
            }
        }
    }

    /// Whether the batch ends before unit `u` at queue offset `qo`: the span of units looked
    /// at, then the count and byte limits.
    fn pull_full(&self, u: &CqUnit, qo: i64, b: &PullBounds, res: &GetMessageResult) -> bool {
        let in_mem = b.max_phy.saturating_sub(u.phy_offset) <= b.mem;
        ((qo - b.offset) as usize) * CQ_UNIT_SIZE >= b.max_filter
            || self.batch_full(u.size, b.max_msg_nums, b.max_pull, res, in_mem)
            || res.buffer_total_size >= b.max_pull
    }

    /// The record unit `u` points at, when it passes `filter`.
    fn read_unit(&self, u: &CqUnit, filter: Option<&dyn MessageFilter>) -> UnitRead {
        if filter.is_some_and(|f| !f.is_matched_by_consume_queue(u.tags_code)) {
            return UnitRead::FILTERED;
        }
        let cl = &self.inner.commitlog;
        let Some(bytes) = cl.get_message(u.phy_offset, u.size) else {
            // Units of a deleted commit-log file are skipped up to the next file. A unit
            // pointing past the end (damage) is skipped alone: rolling from it would
            // skip every unit after it (Java's roll overflows instead).
            let next_file =
                (u.phy_offset < cl.min_offset()).then(|| cl.roll_next_file(u.phy_offset));
            return UnitRead::Skipped {
                status: GetMessageStatus::MESSAGE_WAS_REMOVING,
                next_file,
            };
        };
        if !record::is_unit_record(&bytes, u.phy_offset, u.size) {
            // A damaged unit (verify names it): skipped like a filtered message, so the
            // consumer moves past it instead of receiving bytes that are not a record.
            return UnitRead::FILTERED;
        }
        if !cl.servable(u.phy_offset, &bytes) {
            // torn after a failed fsync: skipped rather than served with a hole in it
            return UnitRead::FILTERED;
        }
        if filter.is_some_and(|f| !f.is_matched_by_commit_log(&bytes)) {
            return UnitRead::FILTERED;
        }
        UnitRead::Found(bytes)
    }

    fn batch_full(
        &self,
        size: i32,
        max_nums: usize,
        max_pull: usize,
        res: &GetMessageResult,
        in_mem: bool,
    ) -> bool {
        let (bytes, count) = (res.buffer_total_size, res.messages.len());
        if bytes == 0 || count == 0 {
            return false;
        }
        let size = size.max(0) as usize;
        if count + 1 > max_nums || bytes + size > max_pull {
            return true;
        }
        let cfg = &self.inner.cfg;
        let (lim_bytes, lim_count) = if in_mem {
            (
                cfg.max_transfer_bytes_on_message_in_memory,
                cfg.max_transfer_count_on_message_in_memory,
            )
        } else {
            (
                cfg.max_transfer_bytes_on_message_in_disk,
                cfg.max_transfer_count_on_message_in_disk,
            )
        };
        bytes + size > lim_bytes.max(0) as usize || count as i64 > lim_count as i64 - 1
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;
    use std::time::Duration;

    use super::*;
    use crate::store::{MessageInput, MessageStoreConfig};

    fn put(store: &MessageStore, body: &[u8]) -> i64 {
        let addr = "127.0.0.1:10911".parse().unwrap();
        let m = MessageInput {
            topic: "T".into(),
            queue_id: 0,
            flag: 0,
            sys_flag: 0,
            body: Bytes::copy_from_slice(body),
            properties: String::new(),
            tags_code: 0,
            wait_store_msg_ok: true,
            born_timestamp: 1,
            born_host: addr,
            store_host: addr,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        };
        store
            .put_message(&m)
            .wait_blocking()
            .append
            .unwrap()
            .wrote_offset
    }

    fn queue_offsets(store: &MessageStore) -> Vec<i64> {
        store
            .get_message("T", 0, 0, 32, 1 << 20, None)
            .queue_offsets
    }

    /// Past the flush of a poisoned commit log the kernel may have dropped a page (it reads
    /// zeros): such a record is skipped whole, not served torn; before the poison (and Java)
    /// the bytes are served as they are.
    #[test]
    fn a_torn_record_past_the_flush_of_a_poisoned_commit_log_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = MessageStore::open(MessageStoreConfig::with_root(dir.path())).unwrap();
        let body = [b'x'; 600];
        let at: Vec<i64> = (0..3).map(|_| put(&store, &body)).collect();
        assert!(store.wait_dispatched(Duration::from_secs(5)));
        let cl = &store.inner.commitlog;
        assert!(
            cl.flushed_offset() <= at[0],
            "ASYNC_FLUSH waits for 4 pages"
        );
        // a dropped page in the middle of the second record's body
        let file = dir.path().join("commitlog").join("00000000000000000000");
        let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.write_all_at(&[0; 64], at[1] as u64 + 300).unwrap();
        assert_eq!(
            queue_offsets(&store),
            [0, 1, 2],
            "a healthy broker serves as is"
        );
        assert!(store.lookup_message_by_offset(at[1]).is_some());
        cl.poison(file, &"test");
        assert_eq!(queue_offsets(&store), [0, 2]);
        assert!(store.lookup_message_by_offset(at[1]).is_none());
        assert!(store.lookup_message_by_offset(at[2]).is_some());
    }
}
