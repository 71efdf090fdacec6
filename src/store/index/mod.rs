//! Index files (`index/yyyyMMddHHmmssSSS`): a hash index from `topic#key` to commit-log offsets
//! (store-format.md §5).
//!
//! ```text
//! header (40): beginTs i64 | endTs i64 | beginPhy i64 | endPhy i64 | hashSlotCount i32 | indexCount i32
//! slots: maxHashSlotNum x i32 (newest entry number, 0 = empty)
//! entries (20): keyHash i32 | phyOffset i64 | timeDiff(s) i32 | prevIndex i32 ; entry 0 unused
//! ```

pub mod service;

use std::path::Path;

use crate::store::error::Result;
use crate::store::mapped_file::mut_map::MutMap;

pub use service::{IndexKind, IndexService};

pub const INDEX_HEADER_SIZE: usize = 40;
pub const HASH_SLOT_SIZE: usize = 4;
pub const INDEX_ENTRY_SIZE: usize = 20;

/// Size of an index file for the given limits.
pub fn index_file_size(slots: usize, entries: usize) -> usize {
    INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE + entries * INDEX_ENTRY_SIZE
}

/// `abs(String.hashCode("topic#key"))`, `Integer.MIN_VALUE` -> 0.
pub fn key_hash(topic: &[u8], key: &[u8]) -> i32 {
    positive(continue_hash(topic_prefix_hash(topic), key))
}

/// The hash of Java 5.5's tag entry, `topic#T#tags` (`MessageConst.INDEX_TAG_TYPE`): the same as
/// `key_hash(topic, "T#" + tags)`, without building that string.
pub fn tag_hash(topic: &[u8], tags: &[u8]) -> i32 {
    positive(continue_hash(
        continue_hash(topic_prefix_hash(topic), TAG_KEY_PREFIX),
        tags,
    ))
}

/// What Java 5.5 puts between the topic's `#` and the tags of a tag entry.
pub const TAG_KEY_PREFIX: &[u8] = b"T#";

/// `String.hashCode` of `topic#`.
fn topic_prefix_hash(topic: &[u8]) -> i32 {
    let h = crate::store::util::java_hash_bytes(topic);
    h.wrapping_mul(31).wrapping_add(b'#' as i32)
}

/// `Math.abs` of a hash, `Integer.MIN_VALUE` -> 0 (Java's index keeps it as 0).
fn positive(h: i32) -> i32 {
    if h == i32::MIN {
        0
    } else {
        h.abs()
    }
}

fn continue_hash(mut h: i32, s: &[u8]) -> i32 {
    match std::str::from_utf8(s) {
        Ok(st) => {
            for u in st.encode_utf16() {
                h = h.wrapping_mul(31).wrapping_add(u as i32);
            }
        }
        Err(_) => {
            for &c in s {
                h = h.wrapping_mul(31).wrapping_add(c as i32);
            }
        }
    }
    h
}

/// The 40-byte header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexHeader {
    pub begin_timestamp: i64,
    pub end_timestamp: i64,
    pub begin_phy_offset: i64,
    pub end_phy_offset: i64,
    pub hash_slot_count: i32,
    pub index_count: i32,
}

impl IndexHeader {
    pub fn decode(b: &[u8]) -> IndexHeader {
        let i64_at = |p: usize| {
            let mut a = [0u8; 8];
            if let Some(s) = b.get(p..p + 8) {
                a.copy_from_slice(s);
            }
            i64::from_be_bytes(a)
        };
        let i32_at = |p: usize| {
            let mut a = [0u8; 4];
            if let Some(s) = b.get(p..p + 4) {
                a.copy_from_slice(s);
            }
            i32::from_be_bytes(a)
        };
        IndexHeader {
            begin_timestamp: i64_at(0),
            end_timestamp: i64_at(8),
            begin_phy_offset: i64_at(16),
            end_phy_offset: i64_at(24),
            hash_slot_count: i32_at(32),
            index_count: i32_at(36),
        }
    }

    pub fn encode(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.begin_timestamp.to_be_bytes());
        b[8..16].copy_from_slice(&self.end_timestamp.to_be_bytes());
        b[16..24].copy_from_slice(&self.begin_phy_offset.to_be_bytes());
        b[24..32].copy_from_slice(&self.end_phy_offset.to_be_bytes());
        b[32..36].copy_from_slice(&self.hash_slot_count.to_be_bytes());
        b[36..40].copy_from_slice(&self.index_count.to_be_bytes());
    }
}

/// One index file, used under the index service's mutex.
pub struct IndexFile {
    map: MutMap,
    slots: usize,
    entries: usize,
    pub header: IndexHeader,
}

impl IndexFile {
    /// Creates a new file; `prev_end` = (endPhyOffset, endTimestamp) of the previous full file.
    pub fn create(
        path: &Path,
        slots: usize,
        entries: usize,
        prev_end: Option<(i64, i64)>,
    ) -> Result<Self> {
        let mut map = MutMap::open(path, index_file_size(slots, entries), true)?;
        // the header and every hash slot (written at random), then entries as they come
        if let Err(e) = map.reserve(INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE) {
            drop(map);
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        let mut f = IndexFile {
            map,
            slots,
            entries,
            header: IndexHeader {
                index_count: 1,
                ..Default::default()
            },
        };
        if let Some((phy, ts)) = prev_end {
            f.header.begin_phy_offset = phy;
            f.header.end_phy_offset = phy;
            f.header.begin_timestamp = ts;
            f.header.end_timestamp = ts;
        }
        f.write_header();
        Ok(f)
    }

    /// Maps an existing file.
    pub fn load(path: &Path, slots: usize, entries: usize) -> Result<Self> {
        let map = MutMap::open(path, index_file_size(slots, entries), false)?;
        let mut header = IndexHeader::decode(&map[..INDEX_HEADER_SIZE]);
        if header.index_count <= 0 {
            header.index_count = 1;
        }
        Ok(IndexFile {
            map,
            slots,
            entries,
            header,
        })
    }

    pub fn path(&self) -> &Path {
        self.map.path()
    }

    pub fn is_full(&self) -> bool {
        self.header.index_count as usize >= self.entries
    }

    fn write_header(&mut self) {
        let h = self.header;
        h.encode(&mut self.map[..INDEX_HEADER_SIZE]);
    }

    fn read_i32(&self, pos: usize) -> i32 {
        self.map
            .get(pos..pos + 4)
            .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
            .unwrap_or(0)
    }

    /// End of the entries `keys` more puts would write (clamped to the file).
    fn entries_end(&self, keys: usize) -> usize {
        let n = (self.header.index_count.max(0) as usize + keys).min(self.entries);
        self.entry_pos(n)
    }

    /// Whether the next `keys` entries are allocated already (no `fallocate` to write them).
    pub fn has_reserved(&self, keys: usize) -> bool {
        self.map.is_reserved(self.entries_end(keys))
    }

    /// Allocates the next `keys` entries at once, so a record's keys are written all or none.
    pub fn reserve_entries(&mut self, keys: usize) -> Result<()> {
        let end = self.entries_end(keys);
        self.map.reserve(end)
    }

    fn entry_pos(&self, n: usize) -> usize {
        INDEX_HEADER_SIZE + self.slots * HASH_SLOT_SIZE + n * INDEX_ENTRY_SIZE
    }

    /// Adds one key (Java `IndexFile.putKey`). False when the file is full; an error when the
    /// disk has no block for the entry (nothing is written then).
    pub fn put_key(&mut self, hash: i32, phy: i64, store_ts: i64) -> Result<bool> {
        if self.is_full() {
            return Ok(false);
        }
        // a loaded file may be sparse anywhere: the first put reserves it from 0
        let end = self.entry_pos(self.header.index_count as usize) + INDEX_ENTRY_SIZE;
        self.map.reserve(end)?;
        let slot_pos = INDEX_HEADER_SIZE + (hash as usize % self.slots) * HASH_SLOT_SIZE;
        let mut slot_value = self.read_i32(slot_pos);
        if slot_value <= 0 || slot_value > self.header.index_count {
            slot_value = 0;
        }
        let mut diff = store_ts.saturating_sub(self.header.begin_timestamp);
        diff /= 1000;
        if self.header.begin_timestamp <= 0 {
            diff = 0;
        }
        let diff = diff.clamp(0, i32::MAX as i64) as i32;
        let n = self.header.index_count as usize;
        let ep = self.entry_pos(n);
        let e = &mut self.map[ep..ep + INDEX_ENTRY_SIZE];
        e[0..4].copy_from_slice(&hash.to_be_bytes());
        e[4..12].copy_from_slice(&phy.to_be_bytes());
        e[12..16].copy_from_slice(&diff.to_be_bytes());
        e[16..20].copy_from_slice(&slot_value.to_be_bytes());
        self.map[slot_pos..slot_pos + 4].copy_from_slice(&(n as i32).to_be_bytes());
        if self.header.index_count <= 1 {
            self.header.begin_phy_offset = phy;
            self.header.begin_timestamp = store_ts;
        }
        if slot_value == 0 {
            self.header.hash_slot_count += 1;
        }
        self.header.index_count += 1;
        self.header.end_phy_offset = phy;
        self.header.end_timestamp = store_ts;
        self.write_header();
        Ok(true)
    }

    /// Collects offsets whose entry hash is `hash` and time is within [begin, end] (§5.5).
    pub fn select(&self, hash: i32, max: usize, begin: i64, end: i64, out: &mut Vec<i64>) {
        let count = self.header.index_count;
        if count <= 1 {
            return;
        }
        let slot_pos = INDEX_HEADER_SIZE + (hash as usize % self.slots) * HASH_SLOT_SIZE;
        let mut cur = self.read_i32(slot_pos);
        if cur <= 0 || cur > count {
            return;
        }
        while out.len() < max {
            let ep = self.entry_pos(cur as usize);
            let Some(e) = self.map.get(ep..ep + INDEX_ENTRY_SIZE) else {
                return;
            };
            let h = i32::from_be_bytes([e[0], e[1], e[2], e[3]]);
            let mut p = [0u8; 8];
            p.copy_from_slice(&e[4..12]);
            let phy = i64::from_be_bytes(p);
            let diff = i32::from_be_bytes([e[12], e[13], e[14], e[15]]) as i64;
            let prev = i32::from_be_bytes([e[16], e[17], e[18], e[19]]);
            if diff < 0 {
                return;
            }
            let time = self.header.begin_timestamp.saturating_add(diff * 1000);
            if h == hash && time >= begin && time <= end {
                out.push(phy);
            }
            // Entries are numbered in write order, so a chain only goes back. Java stops on
            // `prev == cur` only; a damaged prevIndex pointing forward makes its walk loop
            // forever (or collect one offset `max` times). Stopping at `prev >= cur` costs
            // nothing on an intact file.
            if prev <= 0 || prev > count || prev >= cur || time < begin {
                return;
            }
            cur = prev;
        }
    }

    pub fn flush(&self) -> Result<()> {
        self.map.flush()
    }

    /// Every entry (for verify/dump): (number, hash, phy, timeDiff, prev).
    pub fn entries(&self) -> impl Iterator<Item = (i32, i32, i64, i32, i32)> + '_ {
        (1..self.header.index_count.max(1)).filter_map(move |n| {
            let ep = self.entry_pos(n as usize);
            let e = self.map.get(ep..ep + INDEX_ENTRY_SIZE)?;
            let mut p = [0u8; 8];
            p.copy_from_slice(&e[4..12]);
            Some((
                n,
                i32::from_be_bytes([e[0], e[1], e[2], e[3]]),
                i64::from_be_bytes(p),
                i32::from_be_bytes([e[12], e[13], e[14], e[15]]),
                i32::from_be_bytes([e[16], e[17], e[18], e[19]]),
            ))
        })
    }

    /// Slot value for a hash (verify).
    pub fn slot(&self, s: usize) -> i32 {
        self.read_i32(INDEX_HEADER_SIZE + s * HASH_SLOT_SIZE)
    }
    pub fn slot_count(&self) -> usize {
        self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_hash_is_the_hash_of_the_t_key_java_builds() {
        for tags in [&b"t1"[..], "标签".as_bytes(), b"a||b", b"", &[0xff, 0x41]] {
            assert_eq!(
                tag_hash(b"TopicA", tags),
                key_hash(b"TopicA", &[TAG_KEY_PREFIX, tags].concat())
            );
        }
    }

    #[test]
    fn select_stops_on_a_prev_index_pointing_forward() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = IndexFile::create(&dir.path().join("1"), 4, 16, None).unwrap();
        // Hashes 4, 8, 12 share slot 0: the chain is 3 -> 2 -> 1.
        for (h, phy) in [(4, 100), (8, 200), (12, 300)] {
            assert!(f.put_key(h, phy, 1_000_000).unwrap());
        }
        // Entry 2 now points forward to 3: a cycle 3 -> 2 -> 3 (Java's walk never ends).
        let ep = f.entry_pos(2) + 16;
        f.map[ep..ep + 4].copy_from_slice(&3_i32.to_be_bytes());
        let mut out = Vec::new();
        f.select(16, 64, 0, i64::MAX, &mut out);
        assert!(out.is_empty(), "hash 16 (slot 0) matches no entry");
        f.select(12, 64, 0, i64::MAX, &mut out);
        assert_eq!(out, vec![300], "found once, not 64 times");
        f.select(8, 64, 0, i64::MAX, &mut out);
        assert_eq!(out, vec![300, 200]);
    }
}
