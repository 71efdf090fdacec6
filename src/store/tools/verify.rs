//! `verify`: reads a whole store directory and reports every inconsistency with its file and
//! byte offset — invalid or torn records and garbage after the end of data, consume-queue units
//! that are invalid amid valid ones, point past the end or disagree with their records, or are
//! missing for records; index slots out of range, broken or crossed chains, entries no chain
//! reaches, header counts and offsets that disagree with the entries, entries without a record;
//! and checkpoint values recovery would misread (including all zero on a store with records).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{list_numeric, CommitLogView, Problem, Progress, Report};
use crate::store::checkpoint;
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::{CqUnit, CQ_UNIT_SIZE};
use crate::store::dispatch::tags_code;
use crate::store::error::Result;
use crate::store::index::{self, IndexHeader, INDEX_HEADER_SIZE};
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::{self, StorePaths};
use crate::store::recovery::lock_store;
use crate::store::util::{find_property, props_iter};

/// Verifies a store directory: records and CRCs, consume-queue units against records, index
/// entries and chains, checkpoint. Sizes come from `cfg` (use the broker's config).
pub fn verify(cfg: &MessageStoreConfig, progress: Progress<'_>) -> Result<Report> {
    let sp = StorePaths::new(
        &cfg.store_path_root_dir,
        cfg.store_path_commit_log.as_deref(),
    );
    let _lock = lock_store(&sp)?;
    let mut rep = Report {
        abort_present: sp.abort().exists(),
        ..Default::default()
    };
    let mut seen = Seen::default();
    let cl = verify_commit_log(cfg, &sp, &mut rep, &mut seen, progress)?;
    let cq_ends = verify_consume_queues(cfg, &sp, &cl, &mut rep, progress)?;
    missing_units(cfg, &sp, &seen, &cq_ends, &mut rep);
    let index_end = verify_index(cfg, &sp, &cl, &mut rep, progress)?;
    let index_expected = cfg.message_index_enable;
    if let Some(last_keyed) = seen.last_keyed.filter(|&k| index_expected && k > index_end) {
        let newest = list_numeric(&sp.index_dir()).pop().map(|(_, p)| p);
        rep.problems.push(Problem {
            offset: if newest.is_some() { 24 } else { 0 },
            file: newest.unwrap_or_else(|| sp.index_dir()),
            what: format!(
                "records with keys up to commit-log offset {last_keyed} are not indexed (index ends at {index_end}); recovery must rebuild the index"
            ),
        });
    }
    verify_checkpoint(&sp, &mut rep);
    Ok(rep)
}

/// What the commit-log pass learnt for the later checks.
#[derive(Default)]
struct Seen {
    /// (topic, queue id) -> next queue offset per the records.
    next_queue_offset: HashMap<(String, i32), i64>,
    /// Offset of the newest record that carries an index key.
    last_keyed: Option<i64>,
}

impl Seen {
    fn record(&mut self, r: &record::RecordView<'_>, off: i64) {
        use crate::store::message::sysflag;
        let tran = r.tran_type();
        if tran != sysflag::TRANSACTION_ROLLBACK_TYPE
            && (find_property(r.properties, "UNIQ_KEY").is_some()
                || find_property(r.properties, "KEYS").is_some())
        {
            self.last_keyed = Some(off);
        }
        // Only plain one-unit records: not half/rollback, not inner batches (0x80).
        if (tran == sysflag::TRANSACTION_NOT_TYPE || tran == sysflag::TRANSACTION_COMMIT_TYPE)
            && r.sys_flag & 0x80 == 0
        {
            let next = self
                .next_queue_offset
                .entry((r.topic_str().to_string(), r.queue_id))
                .or_insert(0);
            *next = (*next).max(r.queue_offset + 1);
        }
    }
}

/// Records whose consume-queue unit is missing (cut or torn units): reported at the byte where
/// the first missing unit belongs. A queue without a directory is a deleted topic (recovery does
/// not bring it back either) unless `consumequeue/` is missing or empty as a whole.
fn missing_units(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    seen: &Seen,
    cq_ends: &HashMap<(String, i32), i64>,
    rep: &mut Report,
) {
    let file_size = cfg.mapped_file_size_consume_queue as i64;
    let per_file = (file_size / CQ_UNIT_SIZE as i64).max(1);
    let all_gone = std::fs::read_dir(sp.consume_queue_root())
        .map(|mut d| d.next().is_none())
        .unwrap_or(true);
    let mut queues: Vec<_> = seen.next_queue_offset.iter().collect();
    queues.sort();
    for ((topic, qid), &next) in queues {
        let have = cq_ends.get(&(topic.clone(), *qid)).copied().unwrap_or(0);
        if have >= next || !(all_gone || sp.consume_queue_dir(topic, *qid).exists()) {
            continue;
        }
        let file_start = have / per_file * per_file * CQ_UNIT_SIZE as i64;
        rep.problems.push(Problem {
            file: sp
                .consume_queue_dir(topic, *qid)
                .join(paths::offset_file_name(file_start)),
            offset: (have * CQ_UNIT_SIZE as i64 - file_start) as u64,
            what: format!(
                "consume queue {topic}/{qid} ends at unit {have} but the commit log has records up to queue offset {}",
                next - 1
            ),
        });
    }
}

/// Checkpoint size and timestamps: negative or future values make abnormal recovery start at
/// the wrong file; an all-zero page with data present makes it rescan everything.
fn verify_checkpoint(sp: &StorePaths, rep: &mut Report) {
    let Ok(b) = std::fs::read(sp.checkpoint()) else {
        return;
    };
    rep.checkpoint = checkpoint::decode(&b);
    let mut bad = |offset: u64, what: String| {
        rep.problems.push(Problem {
            file: sp.checkpoint(),
            offset,
            what,
        })
    };
    if b.len() != checkpoint::CHECKPOINT_SIZE {
        bad(0, format!("checkpoint is {} bytes, expected 4096", b.len()));
    }
    let horizon = crate::store::util::now_ms() + 86_400_000;
    let names = [
        "physicMsgTimestamp",
        "logicsMsgTimestamp",
        "indexMsgTimestamp",
    ];
    for (i, name) in names.iter().enumerate() {
        let v = rep.checkpoint[i];
        if !(0..=horizon).contains(&v) {
            bad(
                (i * 8) as u64,
                format!("{name} {v} is not a plausible time"),
            );
        }
    }
    if rep.records > 0 && rep.checkpoint[..3].iter().all(|&v| v == 0) {
        bad(
            0,
            "checkpoint timestamps are all zero while the commit log has records; an abnormal recovery rescans the whole commit log".into(),
        );
    }
}

/// How far the commit-log pass has got, across files.
#[derive(Default)]
struct CommitLogWalk {
    /// Where the next file should start.
    expect_next: Option<i64>,
    /// The data ended (END magic or an invalid record): later bytes are not records.
    ended: bool,
    last_ts: i64,
}

/// Every commit-log file: names, sizes, gaps, then the records up to the end of data.
fn verify_commit_log(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    rep: &mut Report,
    seen: &mut Seen,
    progress: Progress<'_>,
) -> Result<CommitLogView> {
    let file_size = cfg.mapped_file_size_commit_log as i64;
    let mut view = CommitLogView {
        file_size,
        files: Vec::new(),
    };
    let names = list_numeric(sp.commit_log_dir());
    let total = names.len() as u64;
    let mut walk = CommitLogWalk::default();
    for (i, (name, path)) in names.into_iter().enumerate() {
        progress("commitlog", i as u64, total);
        let Some(from) = paths::parse_offset_file_name(&name) else {
            let what = "file name is not an offset (Java will refuse to start)";
            rep.problem(&path, 0, what);
            continue;
        };
        let map = ReadOnlyMap::open(&path)?;
        check_commit_log_file(&path, from, map.len(), file_size, &mut walk, rep);
        rep.commit_log_files += 1;
        let crc = cfg.check_crc_on_recover;
        verify_records(&path, from, &map, crc, &mut walk, rep, seen);
        view.files.push((from, path, map));
    }
    Ok(view)
}

/// A commit-log file's size, and that it starts where the one before ended.
fn check_commit_log_file(
    path: &Path,
    from: i64,
    len: usize,
    file_size: i64,
    walk: &mut CommitLogWalk,
    rep: &mut Report,
) {
    if len as i64 != file_size {
        let what = format!("size {len} != mappedFileSizeCommitLog {file_size}");
        rep.problem(path, 0, what);
    }
    if let Some(n) = walk.expect_next.filter(|&n| n != from) {
        rep.problem(path, 0, format!("gap: expected file {n}"));
    }
    walk.expect_next = Some(from + file_size);
}

/// The records of one commit-log file, up to its blank record or the end of data.
fn verify_records(
    path: &Path,
    from: i64,
    map: &[u8],
    check_crc: bool,
    walk: &mut CommitLogWalk,
    rep: &mut Report,
    seen: &mut Seen,
) {
    let mut pos = 0usize;
    while !walk.ended && pos < map.len() {
        match record::decode(&map[pos..], check_crc) {
            Ok(Decoded::Record(r)) => {
                let off = from + pos as i64;
                check_record(path, pos, off, &r, walk, rep);
                seen.record(&r, off);
                rep.records += 1;
                rep.record_bytes += r.total_size as u64;
                pos += r.total_size as usize;
                rep.commit_log_end = from + pos as i64;
            }
            Ok(Decoded::Blank) => {
                rep.blank_records += 1;
                break;
            }
            Ok(Decoded::End) => {
                walk.ended = true;
                if let Some(nz) = map[pos..].iter().position(|&b| b != 0) {
                    rep.problem(path, pos as u64, format!(
                        "garbage after the last valid record (unknown magic, first non-zero byte at {}); recovery ends the data here",
                        pos + nz
                    ));
                }
            }
            Err(e) => {
                let what = format!("invalid record: {e} (recovery truncates here)");
                rep.problem(path, pos as u64, what);
                walk.ended = true;
            }
        }
    }
}

/// A valid record at file position `pos` (commit-log offset `off`): its PHYSICALOFFSET, and
/// STORETIMESTAMP never decreasing.
fn check_record(
    path: &Path,
    pos: usize,
    off: i64,
    r: &record::RecordView<'_>,
    walk: &mut CommitLogWalk,
    rep: &mut Report,
) {
    if r.phys_offset != off {
        let what = format!("PHYSICALOFFSET {} != position {off}", r.phys_offset);
        rep.problem(path, pos as u64, what);
    }
    if r.store_timestamp < walk.last_ts {
        rep.problem(path, pos as u64, "STORETIMESTAMP decreases");
    }
    walk.last_ts = r.store_timestamp;
}

/// What consume-queue units are checked against.
struct CqCheck<'a> {
    cfg: &'a MessageStoreConfig,
    cl: &'a CommitLogView,
    /// The commit log's first offset: units below it point at deleted files.
    cl_min: i64,
    delay: Vec<i64>,
}

/// Every consume queue: file names and sizes, units, and each unit against its record. Returns
/// each queue's end: the queue offset after the last unit recovery keeps.
fn verify_consume_queues(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    cl: &CommitLogView,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<HashMap<(String, i32), i64>> {
    let mut ends = HashMap::new();
    let check = CqCheck {
        cfg,
        cl,
        cl_min: cl.files.first().map(|f| f.0).unwrap_or(0),
        delay: cfg.delay_levels_ms(),
    };
    let topics = std::fs::read_dir(sp.consume_queue_root())
        .map(|rd| rd.filter_map(|e| e.ok()).collect::<Vec<_>>())
        .unwrap_or_default();
    let total = topics.len() as u64;
    for (ti, t) in topics.iter().enumerate() {
        progress("consumequeue", ti as u64, total);
        let topic = t.file_name().to_string_lossy().into_owned();
        let Ok(qs) = std::fs::read_dir(t.path()) else {
            continue;
        };
        for q in qs.filter_map(|e| e.ok()) {
            let Ok(qid) = q.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            rep.consume_queues += 1;
            if let Some(end) = check.queue(&topic, qid, &q.path(), rep)? {
                ends.insert((topic.clone(), qid), end);
            }
        }
    }
    Ok(ends)
}

impl CqCheck<'_> {
    /// The files of one queue; its end (`None` without a file holding units).
    fn queue(&self, topic: &str, qid: i32, dir: &Path, rep: &mut Report) -> Result<Option<i64>> {
        let file_size = self.cfg.mapped_file_size_consume_queue as usize;
        // Queue offset after the last unit recovery keeps (it stops at the first invalid unit).
        let mut end: Option<i64> = None;
        let mut stopped = false;
        for (name, path) in list_numeric(dir) {
            let Some(from) = paths::parse_offset_file_name(&name) else {
                rep.problem(&path, 0, "file name is not an offset");
                continue;
            };
            let map = ReadOnlyMap::open(&path)?;
            if map.len() != file_size {
                rep.problem(
                    &path,
                    0,
                    format!(
                        "size {} != mappedFileSizeConsumeQueue {} (Java refuses to load the store)",
                        map.len(),
                        self.cfg.mapped_file_size_consume_queue
                    ),
                );
            }
            if stopped {
                continue;
            }
            let first = from / CQ_UNIT_SIZE as i64;
            end = Some(end.unwrap_or(first));
            let full = self.units((topic, qid), &path, from, &map, &mut end, rep);
            stopped = !full;
        }
        Ok(end)
    }

    /// The units of one file from queue offset `from / 20`; whether the file is full (a queue
    /// ends in the first file that is not).
    fn units(
        &self,
        (topic, qid): (&str, i32),
        path: &Path,
        from: i64,
        map: &[u8],
        end: &mut Option<i64>,
        rep: &mut Report,
    ) -> bool {
        let first = from / CQ_UNIT_SIZE as i64;
        let mut full = map.len() == self.cfg.mapped_file_size_consume_queue as usize;
        for (k, chunk) in map.chunks_exact(CQ_UNIT_SIZE).enumerate() {
            let at = k * CQ_UNIT_SIZE;
            let Some(u) = CqUnit::decode(chunk).filter(|u| u.is_valid()) else {
                if map[at + CQ_UNIT_SIZE..].iter().all(|&b| b == 0) {
                    full = false;
                    break;
                }
                // Damage, not the end: Java's recover ends the queue here when it scans
                // this file (one of the last three); the units after it are checked on.
                rep.problem(path, at as u64, format!(
                    "unit {} is invalid (phyOffset {}, size {}) amid valid units; recovery ends the queue here if it scans this file",
                    first + k as i64,
                    i64::from_be_bytes(chunk[..8].try_into().unwrap_or_default()),
                    i32::from_be_bytes(chunk[8..12].try_into().unwrap_or_default()),
                ));
                continue;
            };
            *end = Some(first + k as i64 + 1);
            rep.cq_units += 1;
            if u.size == i32::MAX || u.phy_offset < self.cl_min {
                continue;
            }
            let qo = (from + at as i64) / CQ_UNIT_SIZE as i64;
            if let Some(what) = self.unit_against_record(topic, qid, qo, &u, rep.commit_log_end) {
                rep.problem(path, at as u64, what);
            }
        }
        full
    }

    /// What is wrong with unit `u` at queue offset `qo` given the record it points at, if
    /// anything.
    fn unit_against_record(
        &self,
        topic: &str,
        qid: i32,
        qo: i64,
        u: &CqUnit,
        commit_log_end: i64,
    ) -> Option<String> {
        if u.end() > commit_log_end {
            return Some(format!(
                "unit points past the commit-log end ({})",
                u.phy_offset
            ));
        }
        let Some(Ok(Decoded::Record(r))) = self
            .cl
            .record_at(u.phy_offset)
            .map(|b| record::decode(b, false))
        else {
            return Some(format!("unit {qo} points at no record ({})", u.phy_offset));
        };
        if r.total_size != u.size
            || r.topic != topic.as_bytes()
            || r.queue_id != qid
            || r.queue_offset != qo
        {
            return Some(format!(
                "unit {qo} does not match record at {} (size {}, topic/queue/offset)",
                u.phy_offset, r.total_size
            ));
        }
        let tags = tags_code(&r, &self.delay);
        (tags != u.tags_code)
            .then(|| format!("unit {qo} tagsCode {} != record's {tags}", u.tags_code))
    }
}

fn verify_index(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    cl: &CommitLogView,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<i64> {
    let mut covered_to = -1;
    let slots = cfg.max_hash_slot_num as usize;
    let names = list_numeric(&sp.index_dir());
    let total = names.len() as u64;
    let cl_min = cl.files.first().map(|f| f.0).unwrap_or(0);
    for (i, (_, path)) in names.into_iter().enumerate() {
        progress("index", i as u64, total);
        let map = ReadOnlyMap::open(&path)?;
        let expected = index::index_file_size(slots, cfg.max_index_num as usize);
        if map.len() != expected {
            rep.problems.push(Problem {
                file: path.clone(),
                offset: 0,
                what: format!("size {} != {expected}", map.len()),
            });
            continue;
        }
        rep.index_files += 1;
        let h = IndexHeader::decode(&map[..INDEX_HEADER_SIZE]);
        covered_to = covered_to.max(h.end_phy_offset);
        index_structure(&path, &map, &h, slots, cfg.max_index_num as usize, rep);
        let base = INDEX_HEADER_SIZE + slots * 4;
        for n in 1..h.index_count.max(1) {
            let ep = base + n as usize * 20;
            let Some(e) = map.get(ep..ep + 20) else { break };
            rep.index_entries += 1;
            let hash = i32::from_be_bytes([e[0], e[1], e[2], e[3]]);
            let mut p = [0u8; 8];
            p.copy_from_slice(&e[4..12]);
            let phy = i64::from_be_bytes(p);
            let prev = i32::from_be_bytes([e[16], e[17], e[18], e[19]]);
            let bad = |what: String| Problem {
                file: path.clone(),
                offset: ep as u64,
                what,
            };
            if prev < 0 || prev >= n {
                rep.problems.push(bad(format!(
                    "entry {n}: prevIndex {prev} out of chain order"
                )));
            }
            if phy < cl_min {
                continue;
            }
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
                    let hashes: HashSet<i32> = keys.map(|k| index::key_hash(r.topic, k)).collect();
                    if !hashes.contains(&hash) {
                        rep.problems.push(bad(format!(
                            "entry {n}: hash {hash} matches no key of the record at {phy}"
                        )));
                    }
                }
                _ if phy >= rep.commit_log_end => rep.problems.push(bad(format!(
                    "entry {n} points past the commit-log end ({phy})"
                ))),
                _ => rep
                    .problems
                    .push(bad(format!("entry {n} points at no record ({phy})"))),
            }
        }
    }
    Ok(covered_to)
}

/// One index entry: (keyHash, phyOffset, prevIndex).
fn index_entry(map: &[u8], slots: usize, n: usize) -> Option<(i32, i64, i32)> {
    let ep = INDEX_HEADER_SIZE + slots * 4 + n * 20;
    let e = map.get(ep..ep + 20)?;
    let mut p = [0u8; 8];
    p.copy_from_slice(&e[4..12]);
    Some((
        i32::from_be_bytes([e[0], e[1], e[2], e[3]]),
        i64::from_be_bytes(p),
        i32::from_be_bytes([e[16], e[17], e[18], e[19]]),
    ))
}

/// Header counts, slot values and chains of one index file: a slot outside 1..indexCount-1, an
/// entry in the wrong slot's chain, an entry no chain reaches (its key cannot be found), entries
/// written past indexCount, and hashSlotCount / begin / end offsets that disagree with the entries.
fn index_structure(
    path: &std::path::Path,
    map: &[u8],
    h: &IndexHeader,
    slots: usize,
    max_entries: usize,
    rep: &mut Report,
) {
    let count = h.index_count.max(1) as usize;
    let written = count.min(max_entries);
    let mut bad = |offset: usize, what: String| {
        rep.problems.push(Problem {
            file: path.to_path_buf(),
            offset: offset as u64,
            what,
        })
    };
    let entry_pos = |n: usize| INDEX_HEADER_SIZE + slots * 4 + n * 20;
    let mut reached = vec![false; written];
    let mut used_slots = 0;
    for s in 0..slots {
        let sp = INDEX_HEADER_SIZE + s * 4;
        let Some(v) = map
            .get(sp..sp + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        else {
            break;
        };
        if v == 0 {
            continue;
        }
        if v < 0 || v as usize >= written {
            bad(sp, format!("slot {s}: value {v} outside 1..{} (indexCount {count}); its keys cannot be found", written.saturating_sub(1)));
            continue;
        }
        used_slots += 1;
        let mut cur = v as usize;
        while let Some((hash, _, prev)) = index_entry(map, slots, cur) {
            if reached[cur] {
                break;
            }
            reached[cur] = true;
            let home = hash.max(0) as usize % slots.max(1);
            if home != s {
                bad(entry_pos(cur), format!("entry {cur} is in the chain of slot {s} but its hash {hash} belongs to slot {home}"));
            }
            if prev <= 0 || prev as usize >= cur {
                break;
            }
            cur = prev as usize;
        }
    }
    for (n, r) in reached.iter().enumerate().skip(1) {
        if !r {
            bad(entry_pos(n), format!("entry {n} is not reachable from its slot (broken chain); its key cannot be found"));
        }
    }
    if count < max_entries && index_entry(map, slots, count).is_some_and(|e| e != (0, 0, 0)) {
        bad(36, format!("indexCount {count} but entry {count} holds data; entries past the count are overwritten and unreachable"));
    }
    if h.hash_slot_count != used_slots {
        bad(
            32,
            format!(
                "hashSlotCount {} but {used_slots} slots are in use",
                h.hash_slot_count
            ),
        );
    }
    if written > 1 {
        let first = index_entry(map, slots, 1).map(|e| e.1);
        let last = index_entry(map, slots, written - 1).map(|e| e.1);
        if first.is_some_and(|p| p != h.begin_phy_offset) {
            bad(
                16,
                format!(
                    "beginPhyOffset {} but entry 1 is at {}",
                    h.begin_phy_offset,
                    first.unwrap_or(0)
                ),
            );
        }
        if last.is_some_and(|p| p != h.end_phy_offset) {
            bad(
                24,
                format!(
                    "endPhyOffset {} but entry {} is at {}",
                    h.end_phy_offset,
                    written - 1,
                    last.unwrap_or(0)
                ),
            );
        }
    }
}
