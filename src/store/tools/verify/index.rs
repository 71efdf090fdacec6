//! `verify`'s index pass: file sizes, slot values and chains, header counts and offsets against
//! the entries, and each entry's hash against the keys of the record it points at.

use std::collections::HashSet;
use std::path::Path;

use super::commit_log::is_empty_file;
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::error::Result;
use crate::store::index::{self, IndexHeader, INDEX_HEADER_SIZE};
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::StorePaths;
use crate::store::tools::{
    index_entry, index_entry_pos, list_numeric, CommitLogView, Progress, Report,
};
use crate::store::util::{find_property, props_iter};

/// Every index file; returns the commit-log offset the newest entry covers (-1 without one).
pub(super) fn verify_index(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    cl: &CommitLogView,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<i64> {
    let mut covered_to = -1;
    let slots = cfg.max_hash_slot_num as usize;
    let max_entries = cfg.max_index_num as usize;
    let names = list_numeric(&sp.index_dir());
    let total = names.len() as u64;
    let cl_min = cl.files.first().map(|f| f.0).unwrap_or(0);
    for (i, (_, path)) in names.into_iter().enumerate() {
        progress("index", i as u64, total);
        if is_empty_file(&path) {
            let what =
                "zero-length index file (the broker stopped as it created it); recovery deletes it";
            rep.warning(&path, 0, what);
            continue;
        }
        let map = ReadOnlyMap::open(&path)?;
        let expected = index::index_file_size(slots, max_entries);
        if map.len() != expected {
            rep.problem(&path, 0, format!("size {} != {expected}", map.len()));
            continue;
        }
        rep.index_files += 1;
        let h = IndexHeader::decode(&map[..INDEX_HEADER_SIZE]);
        covered_to = covered_to.max(h.end_phy_offset);
        let file = IndexLayout::new(&path, &map, &h, slots, max_entries);
        file.structure(&h, rep);
        file.entries(&h, cl, cl_min, rep);
    }
    Ok(covered_to)
}

/// One index file being checked.
struct IndexLayout<'a> {
    path: &'a Path,
    map: &'a [u8],
    slots: usize,
    /// indexCount (at least 1: entry 0 is never used).
    count: usize,
    /// Entries that can hold data: `count`, at most the file's capacity.
    written: usize,
    max_entries: usize,
}

impl<'a> IndexLayout<'a> {
    fn new(
        path: &'a Path,
        map: &'a [u8],
        h: &IndexHeader,
        slots: usize,
        max_entries: usize,
    ) -> Self {
        let count = h.index_count.max(1) as usize;
        IndexLayout {
            path,
            map,
            slots,
            count,
            written: count.min(max_entries),
            max_entries,
        }
    }

    fn bad(&self, rep: &mut Report, offset: usize, what: String) {
        rep.problem(self.path, offset as u64, what);
    }

    fn entry_pos(&self, n: usize) -> usize {
        index_entry_pos(self.slots, n)
    }

    /// One entry: (keyHash, phyOffset, prevIndex).
    fn entry(&self, n: usize) -> Option<(i32, i64, i32)> {
        index_entry(self.map, self.slots, n).map(|e| (e.hash, e.phy_offset, e.prev))
    }

    /// Header counts, slot values and chains: a slot outside 1..indexCount-1, an entry in the
    /// wrong slot's chain, an entry no chain reaches (its key cannot be found), entries written
    /// past indexCount, and hashSlotCount / begin / end offsets that disagree with the entries.
    fn structure(&self, h: &IndexHeader, rep: &mut Report) {
        let used_slots = self.chains(rep);
        let count = self.count;
        if count < self.max_entries && self.entry(count).is_some_and(|e| e != (0, 0, 0)) {
            // the one entry written before the header's count moves on is a put cut short by a
            // crash (the dispatch thread writes entry, slot, then header); recovery re-indexes
            // past the checkpoint. More than that is damage.
            let next_empty = count + 1 >= self.max_entries
                || self.entry(count + 1).is_none_or(|e| e == (0, 0, 0));
            if next_empty {
                rep.warning(self.path, 36, format!("indexCount {count} but entry {count} holds data: an index write cut short (a crash); recovery rebuilds the index from the commit log"));
            } else {
                self.bad(rep, 36, format!("indexCount {count} but entry {count} holds data; entries past the count are overwritten and unreachable"));
            }
        }
        if h.hash_slot_count != used_slots {
            let what = format!(
                "hashSlotCount {} but {used_slots} slots are in use",
                h.hash_slot_count
            );
            self.bad(rep, 32, what);
        }
        if self.written > 1 {
            self.begin_end_offsets(h, rep);
        }
    }

    /// Walks every slot's chain; returns the slots in use. Reports slot values out of range,
    /// entries in the wrong chain and entries no chain reaches.
    fn chains(&self, rep: &mut Report) -> i32 {
        let mut reached = vec![false; self.written];
        let mut used_slots = 0;
        for s in 0..self.slots {
            let sp = INDEX_HEADER_SIZE + s * 4;
            let Some(v) = self
                .map
                .get(sp..sp + 4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            else {
                break;
            };
            if v == 0 {
                continue;
            }
            if v as usize == self.count
                && self.count < self.max_entries
                && self.entry(self.count).is_some_and(|e| e != (0, 0, 0))
            {
                // the slot of the entry a crash cut short (see `structure`): its chain goes on
                // from that entry's predecessor, and a slot it had just taken is not counted in
                // the header yet
                rep.warning(self.path, sp as u64, format!("slot {s}: value {v} is the entry written past indexCount (a crash); recovery rebuilds the index"));
                let prev = self.entry(self.count).map_or(0, |e| e.2);
                if prev > 0 && (prev as usize) < self.written {
                    used_slots += 1;
                    self.follow_chain(s, prev as usize, &mut reached, rep);
                }
                continue;
            }
            if v < 0 || v as usize >= self.written {
                self.bad(rep, sp, format!("slot {s}: value {v} outside 1..{} (indexCount {}); its keys cannot be found", self.written.saturating_sub(1), self.count));
                continue;
            }
            used_slots += 1;
            self.follow_chain(s, v as usize, &mut reached, rep);
        }
        for (n, r) in reached.iter().enumerate().skip(1) {
            if !r {
                self.bad(rep, self.entry_pos(n), format!("entry {n} is not reachable from its slot (broken chain); its key cannot be found"));
            }
        }
        used_slots
    }

    /// Marks the entries of slot `s`'s chain from entry `cur` as reached; reports those whose
    /// hash belongs to another slot.
    fn follow_chain(&self, s: usize, mut cur: usize, reached: &mut [bool], rep: &mut Report) {
        while let Some((hash, _, prev)) = self.entry(cur) {
            if reached[cur] {
                break;
            }
            reached[cur] = true;
            let home = hash.max(0) as usize % self.slots.max(1);
            if home != s {
                self.bad(rep, self.entry_pos(cur), format!("entry {cur} is in the chain of slot {s} but its hash {hash} belongs to slot {home}"));
            }
            if prev <= 0 || prev as usize >= cur {
                break;
            }
            cur = prev as usize;
        }
    }

    /// beginPhyOffset and endPhyOffset against the first and last entries.
    fn begin_end_offsets(&self, h: &IndexHeader, rep: &mut Report) {
        let first = self.entry(1).map(|e| e.1);
        let last = self.entry(self.written - 1).map(|e| e.1);
        if first.is_some_and(|p| p != h.begin_phy_offset) {
            let what = format!(
                "beginPhyOffset {} but entry 1 is at {}",
                h.begin_phy_offset,
                first.unwrap_or(0)
            );
            self.bad(rep, 16, what);
        }
        if last.is_some_and(|p| p != h.end_phy_offset) {
            let what = format!(
                "endPhyOffset {} but entry {} is at {}",
                h.end_phy_offset,
                self.written - 1,
                last.unwrap_or(0)
            );
            self.bad(rep, 24, what);
        }
    }

    /// Every entry below indexCount: chain order, and its hash against its record's keys.
    fn entries(&self, h: &IndexHeader, cl: &CommitLogView, cl_min: i64, rep: &mut Report) {
        for n in 1..h.index_count.max(1) {
            let Some((hash, phy, prev)) = self.entry(n as usize) else {
                break;
            };
            rep.index_entries += 1;
            let ep = self.entry_pos(n as usize);
            if prev < 0 || prev >= n {
                let what = format!("entry {n}: prevIndex {prev} out of chain order");
                self.bad(rep, ep, what);
            }
            if phy < cl_min {
                continue;
            }
            if let Some(what) = entry_against_record(cl, n, hash, phy, rep.commit_log_end) {
                self.bad(rep, ep, what);
            }
        }
    }
}

/// What is wrong with entry `n` (`hash` at commit-log offset `phy`) given the record there, if
/// anything.
fn entry_against_record(
    cl: &CommitLogView,
    n: i32,
    hash: i32,
    phy: i64,
    commit_log_end: i64,
) -> Option<String> {
    match cl.record_at(phy).map(|b| record::decode(b, false)) {
        Some(Ok(Decoded::Record(r))) => {
            let keys = props_iter(r.properties)
                .filter(|(k, _)| *k == b"UNIQ_KEY")
                .map(|(_, v)| v)
                .chain(
                    find_property(r.properties, "KEYS")
                        .into_iter()
                        .flat_map(|k| k.split(|&c| c == b' '))
                        .filter(|k| !k.is_empty()),
                );
            let mut hashes: HashSet<i32> = keys.map(|k| index::key_hash(r.topic, k)).collect();
            // Java 5.5 also indexes the tags as `topic#T#tags` (MessageConst.INDEX_TAG_TYPE)
            if let Some(tags) = find_property(r.properties, "TAGS").filter(|t| !t.is_empty()) {
                hashes.insert(index::tag_hash(r.topic, tags));
            }
            (!hashes.contains(&hash))
                .then(|| format!("entry {n}: hash {hash} matches no key of the record at {phy}"))
        }
        _ if phy >= commit_log_end => {
            Some(format!("entry {n} points past the commit-log end ({phy})"))
        }
        _ => Some(format!("entry {n} points at no record ({phy})")),
    }
}
