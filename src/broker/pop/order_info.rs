//! Orderly POP state (Java `ConsumerOrderInfoManager`), kept in `config/consumerOrderInfo.json`:
//! per (topic, group, queue) the offsets of the last pop, which of them are acknowledged, when
//! each becomes visible again and how often each was handed out. A queue is blocked while a
//! message of its last pop is neither acknowledged nor visible again; the group's offset moves
//! only when the oldest message of the pop is acknowledged. No checkpoint is written: a message
//! comes back when its queue unblocks, read again from the group's offset.
//!
//! File shape (fastjson, names sorted, `a`/`i`/`oc`/`ot` left out when null):
//! `{"table":{"<topic>@<group>":{"<queueId>":{"a":…,"cm":<ack bits>,"i":<invisible>,"l":<last
//! pop ms>,"o":[<first offset>,<delta>,…],"oc":{"<offset>":<count>},"ot":{"<offset>":<ms>},"popTime":<ms>}}}}`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::records::retry_mark;
use crate::broker::metadata::persist::JsonFile;
use crate::broker::metadata::MetadataError;

/// Java `CLEAN_SPAN_FROM_LAST`: an entry nobody popped for a day is dropped when written.
const CLEAN_SPAN_MS: i64 = 24 * 3600 * 1000;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OrderInfo {
    #[serde(
        rename = "a",
        alias = "attemptId",
        skip_serializing_if = "Option::is_none"
    )]
    pub attempt_id: Option<String>,
    #[serde(rename = "cm", alias = "commitOffsetBit")]
    pub commit_offset_bit: i64,
    #[serde(
        rename = "i",
        alias = "invisibleTime",
        skip_serializing_if = "Option::is_none"
    )]
    pub invisible_time: Option<i64>,
    #[serde(rename = "l", alias = "lastConsumeTimestamp")]
    pub last_consume_timestamp: i64,
    /// The first offset, then the others as differences to it.
    #[serde(rename = "o", alias = "offsetList")]
    pub offset_list: Vec<i64>,
    #[serde(
        rename = "oc",
        alias = "offsetConsumedCount",
        skip_serializing_if = "Option::is_none"
    )]
    pub offset_consumed_count: Option<BTreeMap<String, i32>>,
    #[serde(
        rename = "ot",
        alias = "offsetNextVisibleTime",
        skip_serializing_if = "Option::is_none"
    )]
    pub offset_next_visible_time: Option<BTreeMap<String, i64>>,
    #[serde(rename = "popTime")]
    pub pop_time: i64,
}

impl OrderInfo {
    fn new(
        attempt_id: Option<&str>,
        pop_time: i64,
        invisible: i64,
        offsets: &[i64],
        now: i64,
    ) -> Self {
        let first = offsets.first().copied().unwrap_or(0);
        let offset_list = offsets
            .iter()
            .enumerate()
            .map(|(i, o)| if i == 0 { *o } else { o - first })
            .collect();
        Self {
            attempt_id: attempt_id.map(str::to_string),
            commit_offset_bit: 0,
            invisible_time: Some(invisible),
            last_consume_timestamp: now,
            offset_list,
            offset_consumed_count: None,
            offset_next_visible_time: None,
            pop_time,
        }
    }

    fn offset(&self, i: usize) -> i64 {
        if i == 0 {
            self.offset_list[0]
        } else {
            self.offset_list[0] + self.offset_list[i]
        }
    }

    fn offsets(&self) -> Vec<i64> {
        (0..self.offset_list.len())
            .map(|i| self.offset(i))
            .collect()
    }

    fn acked(&self, i: usize) -> bool {
        i < 64 && self.commit_offset_bit & (1 << i) != 0
    }

    /// When message `i` becomes visible again.
    fn next_visible(&self, i: usize) -> i64 {
        let own = self
            .offset_next_visible_time
            .as_ref()
            .and_then(|m| m.get(&self.offset(i).to_string()).copied());
        own.unwrap_or(
            self.pop_time
                .saturating_add(self.invisible_time.unwrap_or(0)),
        )
    }

    /// Java `needBlock`.
    fn blocks(&mut self, attempt_id: Option<&str>, invisible: i64, now: i64) -> bool {
        if self.offset_list.is_empty() {
            return false;
        }
        if self.attempt_id.is_some() && self.attempt_id.as_deref() == attempt_id {
            return false;
        }
        if self.invisible_time.is_none_or(|i| i <= 0) {
            self.invisible_time = Some(invisible);
        }
        (0..self.offset_list.len()).any(|i| !self.acked(i) && now < self.next_visible(i))
    }

    /// When the queue unblocks (Java `getLockFreeTimestamp`): `None` when nothing blocks it.
    fn lock_free_at(&self, now: i64) -> Option<i64> {
        (0..self.offset_list.len())
            .filter(|&i| !self.acked(i))
            .map(|i| self.next_visible(i))
            .find(|&t| now < t)
    }

    /// Java `getNextOffset`: the first unacknowledged offset, or one past the last.
    fn next_offset(&self) -> i64 {
        let n = self.offset_list.len();
        match (0..n).find(|&i| !self.acked(i)) {
            Some(i) => self.offset(i),
            None => self.offset(n - 1) + 1,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct OrderFile {
    table: BTreeMap<String, BTreeMap<String, OrderInfo>>,
}

/// `consumerOrderInfo.json`'s text as `topic@group` → queueId → order info (entries with no
/// offsets dropped).
pub fn parse(text: &str) -> Result<BTreeMap<String, BTreeMap<i32, OrderInfo>>, String> {
    let f = crate::remoting::body::fastjson::from_slice::<OrderFile>(text.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(f.table
        .into_iter()
        .map(|(k, qs)| {
            let qs = qs
                .into_iter()
                .filter_map(|(q, info)| Some((q.trim().parse::<i32>().ok()?, info)))
                .filter(|(_, info)| !info.offset_list.is_empty())
                .collect();
            (k, qs)
        })
        .collect())
}

pub struct ConsumerOrderInfoManager {
    /// `topic@group` → queueId → order info.
    table: Mutex<BTreeMap<String, BTreeMap<i32, OrderInfo>>>,
    file: JsonFile,
}

fn key(topic: &str, group: &str) -> String {
    format!("{topic}@{group}")
}

impl ConsumerOrderInfoManager {
    /// Memory only (Java `MemoryConsumerOrderInfoManager`, the lite queues' FIFO state): never
    /// loaded, never persisted.
    pub fn in_memory() -> Self {
        Self {
            table: Mutex::new(BTreeMap::new()),
            file: JsonFile::new(PathBuf::new()),
        }
    }

    /// Reads the file (or its `.bak`); one that does not parse is logged and ignored.
    pub fn load(path: PathBuf) -> Self {
        let file = JsonFile::new(path);
        let mut table = BTreeMap::new();
        if let Some(text) = file.load() {
            match parse(&text) {
                Ok(t) => table = t,
                Err(e) => tracing::error!(path = %file.path().display(), error = %e,
                    "consumerOrderInfo.json does not parse; orderly pops start unblocked"),
            }
        }
        Self {
            table: Mutex::new(table),
            file,
        }
    }

    /// Java `checkBlock`: the queue's last pop still has a message out (a request repeating that
    /// pop's attempt id is never blocked).
    pub fn check_block(
        &self,
        attempt_id: Option<&str>,
        topic: &str,
        group: &str,
        queue_id: i32,
        invisible: i64,
        now: i64,
    ) -> bool {
        let mut t = self.table.lock();
        t.get_mut(&key(topic, group))
            .and_then(|qs| qs.get_mut(&queue_id))
            .is_some_and(|info| info.blocks(attempt_id, invisible, now))
    }

    /// When the queue's block ends, if it is blocked now.
    pub fn lock_free_at(&self, topic: &str, group: &str, queue_id: i32, now: i64) -> Option<i64> {
        let t = self.table.lock();
        t.get(&key(topic, group))?.get(&queue_id)?.lock_free_at(now)
    }

    /// Java `update`: records a pop of `offsets`, carrying the handed-out counts over from the
    /// previous pop (unless it is the same attempt), and appends the `orderCountInfo` entries.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &self,
        attempt_id: Option<&str>,
        topic: &str,
        group: &str,
        queue_id: i32,
        pop_time: i64,
        invisible: i64,
        offsets: &[i64],
        now: i64,
        order_count_info: &mut String,
    ) {
        if offsets.is_empty() {
            return;
        }
        let mut t = self.table.lock();
        let qs = t.entry(key(topic, group)).or_default();
        let mut info = OrderInfo::new(attempt_id, pop_time, invisible, offsets, now);
        if let Some(prev) = qs.get(&queue_id) {
            let prev_counts = prev.offset_consumed_count.clone().unwrap_or_default();
            if prev.attempt_id.is_some() && prev.attempt_id == info.attempt_id {
                info.offset_consumed_count = Some(prev_counts);
            } else {
                let before: BTreeSet<i64> = prev.offsets().into_iter().collect();
                let counts = info
                    .offsets()
                    .into_iter()
                    .filter(|o| before.contains(o))
                    .map(|o| {
                        let k = o.to_string();
                        let n = prev_counts.get(&k).copied().unwrap_or(0) + 1;
                        (k, n)
                    })
                    .collect();
                info.offset_consumed_count = Some(counts);
            }
        }
        let mark = retry_mark(topic);
        let mut min = i32::MAX;
        let counts = info.offset_consumed_count.clone().unwrap_or_default();
        for (offset, n) in &counts {
            push(
                order_count_info,
                &format!("{mark} qo{queue_id}%{offset} {n}"),
            );
            min = min.min(*n);
        }
        if counts.len() != info.offset_list.len() {
            min = 0;
        }
        push(order_count_info, &format!("{mark} {queue_id} {min}"));
        qs.insert(queue_id, info);
    }

    /// Java `commitAndNext`: marks `offset` acknowledged; the offset the group may move to, or
    /// -1 (not in the last pop) / -2 (another pop's receipt).
    pub fn commit_and_next(
        &self,
        topic: &str,
        group: &str,
        queue_id: i32,
        offset: i64,
        pop_time: i64,
    ) -> i64 {
        let mut t = self.table.lock();
        let Some(info) = t
            .get_mut(&key(topic, group))
            .and_then(|qs| qs.get_mut(&queue_id))
        else {
            return offset + 1;
        };
        if info.offset_list.is_empty() {
            return -1;
        }
        if pop_time != info.pop_time {
            return -2;
        }
        let Some(i) = (0..info.offset_list.len()).find(|&i| info.offset(i) == offset) else {
            return -1;
        };
        if i < 64 {
            info.commit_offset_bit |= 1 << i;
        }
        info.next_offset()
    }

    /// Java `updateNextVisibleTime` (CHANGE_MESSAGE_INVISIBLETIME of an orderly receipt).
    pub fn update_next_visible_time(
        &self,
        topic: &str,
        group: &str,
        queue_id: i32,
        offset: i64,
        pop_time: i64,
        next_visible: i64,
    ) {
        let mut t = self.table.lock();
        if let Some(info) = t
            .get_mut(&key(topic, group))
            .and_then(|qs| qs.get_mut(&queue_id))
        {
            if info.pop_time == pop_time {
                info.offset_next_visible_time
                    .get_or_insert_with(BTreeMap::new)
                    .insert(offset.to_string(), next_visible);
            }
        }
    }

    /// Java 5.5 `suspendQueue` (a lite CHANGE_MESSAGE_INVISIBLETIME with `suspend`): the whole
    /// pop becomes visible at `visible_at`, this delivery not counted.
    pub fn suspend_queue(
        &self,
        topic: &str,
        group: &str,
        queue_id: i32,
        pop_time: i64,
        visible_at: i64,
    ) {
        let mut t = self.table.lock();
        if let Some(info) = t
            .get_mut(&key(topic, group))
            .and_then(|qs| qs.get_mut(&queue_id))
            .filter(|i| i.pop_time == pop_time)
        {
            if let Some(counts) = info.offset_consumed_count.as_mut() {
                for n in counts.values_mut() {
                    if *n > 0 {
                        *n -= 1;
                    }
                }
            }
            info.offset_next_visible_time = None;
            info.invisible_time = Some(visible_at - info.pop_time);
        }
    }

    /// (topic, group) entries kept (GET_BROKER_LITE_INFO's orderInfoCount).
    pub fn len(&self) -> usize {
        self.table.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.lock().is_empty()
    }

    /// Java `clearBlock` (an offset reset).
    pub fn clear_block(&self, topic: &str, group: &str, queue_id: i32) {
        if let Some(qs) = self.table.lock().get_mut(&key(topic, group)) {
            qs.remove(&queue_id);
        }
    }

    /// Writes the file, without the entries of topics or groups that are gone, of queues the
    /// topic no longer has, or popped more than a day ago (Java `autoClean`).
    pub fn persist(
        &self,
        read_queues: impl Fn(&str) -> Option<i32>,
        group_exists: impl Fn(&str) -> bool,
        now: i64,
    ) -> Result<(), MetadataError> {
        let snapshot = {
            let mut t = self.table.lock();
            t.retain(|k, qs| {
                let Some((topic, group)) = k.split_once('@') else {
                    return true;
                };
                let Some(n) = read_queues(topic) else {
                    return false;
                };
                qs.retain(|q, info| *q < n && now - info.last_consume_timestamp <= CLEAN_SPAN_MS);
                group_exists(group) && !qs.is_empty()
            });
            OrderFile {
                table: t
                    .iter()
                    .map(|(k, qs)| {
                        let qs = qs.iter().map(|(q, i)| (q.to_string(), i.clone())).collect();
                        (k.clone(), qs)
                    })
                    .collect(),
            }
        };
        self.file
            .persist(|| crate::store::config_files::to_fastjson_pretty(&snapshot))
    }
}

fn push(out: &mut String, entry: &str) {
    if !out.is_empty() {
        out.push(';');
    }
    out.push_str(entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pop_blocks_its_queue_until_acknowledged_or_visible_again() {
        let dir = tempfile::tempdir().unwrap();
        let m = ConsumerOrderInfoManager::load(dir.path().join("consumerOrderInfo.json"));
        let mut info = String::new();
        m.update(
            Some("a1"),
            "T",
            "G",
            0,
            1_000,
            5_000,
            &[3, 4, 6],
            1_000,
            &mut info,
        );
        assert_eq!(info, "0 0 0");
        assert!(m.check_block(Some("a2"), "T", "G", 0, 5_000, 2_000));
        assert!(
            !m.check_block(Some("a1"), "T", "G", 0, 5_000, 2_000),
            "same attempt"
        );
        assert!(
            !m.check_block(None, "T", "G", 0, 5_000, 6_000),
            "visible again"
        );
        assert_eq!(
            m.commit_and_next("T", "G", 0, 4, 1_000),
            3,
            "the oldest is still out"
        );
        assert_eq!(
            m.commit_and_next("T", "G", 0, 3, 999),
            -2,
            "another pop's receipt"
        );
        assert_eq!(m.commit_and_next("T", "G", 0, 5, 1_000), -1);
        assert_eq!(m.commit_and_next("T", "G", 0, 3, 1_000), 6);
        m.update_next_visible_time("T", "G", 0, 6, 1_000, 9_000);
        assert!(m.check_block(None, "T", "G", 0, 5_000, 8_000));
        assert_eq!(m.lock_free_at("T", "G", 0, 8_000), Some(9_000));
        assert_eq!(m.commit_and_next("T", "G", 0, 6, 1_000), 7);
        assert!(!m.check_block(None, "T", "G", 0, 5_000, 2_000));
        // popped again: counts carry over for the offsets handed out before
        let mut info = String::new();
        m.update(
            Some("a3"),
            "T",
            "G",
            0,
            10_000,
            5_000,
            &[6, 7],
            10_000,
            &mut info,
        );
        assert_eq!(info, "0 qo0%6 1;0 0 0");
        m.persist(|_| Some(1), |_| true, 10_000).unwrap();
        let text = std::fs::read_to_string(dir.path().join("consumerOrderInfo.json")).unwrap();
        assert!(text.contains("\"T@G\""), "{text}");
        let again = ConsumerOrderInfoManager::load(dir.path().join("consumerOrderInfo.json"));
        assert!(again.check_block(None, "T", "G", 0, 5_000, 11_000));
    }

    #[test]
    fn reads_the_java_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("consumerOrderInfo.json");
        std::fs::write(
            &path,
            r#"{"table":{"T@G":{0:{"cm":0,"i":60000,"l":1700000000000,"o":[5,1],"oc":{5:2},"popTime":1700000000000}}}}"#,
        )
        .unwrap();
        let m = ConsumerOrderInfoManager::load(path);
        assert!(m.check_block(None, "T", "G", 0, 60_000, 1_700_000_000_001));
        assert_eq!(m.commit_and_next("T", "G", 0, 6, 1_700_000_000_000), 5);
    }
}
