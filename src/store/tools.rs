//! Operator tools behind `rmqd store verify|dump <dir>`: offline checks and dumps of a store
//! directory (taken under the directory's lock, never modifying anything).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::store::checkpoint;
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::{CqUnit, CQ_UNIT_SIZE};
use crate::store::dispatch::tags_code;
use crate::store::error::{Result, StoreError};
use crate::store::index::{self, IndexHeader, INDEX_HEADER_SIZE};
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::{self, StorePaths};
use crate::store::recovery::lock_store;
use crate::store::util::{find_property, props_iter};

/// One problem: the file, the byte offset inside it, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    pub offset: u64,
    pub what: String,
}

/// What `verify` found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub commit_log_files: usize,
    pub records: u64,
    pub record_bytes: u64,
    pub blank_records: u64,
    pub commit_log_end: i64,
    pub consume_queues: usize,
    pub cq_units: u64,
    pub index_files: usize,
    pub index_entries: u64,
    /// physic, logics, index timestamps, masterFlushedOffset, confirmPhyOffset.
    pub checkpoint: [i64; 5],
    pub abort_present: bool,
    pub problems: Vec<Problem>,
}

impl Report {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Progress callback: (phase, done, total).
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

struct CommitLogView {
    file_size: i64,
    files: Vec<(i64, PathBuf, ReadOnlyMap)>,
}

impl CommitLogView {
    fn record_at(&self, off: i64) -> Option<&[u8]> {
        let (from, _, map) = self
            .files
            .iter()
            .find(|(f, _, _)| *f <= off && off < f + self.file_size)?;
        map.get((off - from) as usize..)
    }
}

fn list_numeric(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

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
    let cl = verify_commit_log(cfg, &sp, &mut rep, progress)?;
    verify_consume_queues(cfg, &sp, &cl, &mut rep, progress)?;
    verify_index(cfg, &sp, &cl, &mut rep, progress)?;
    if let Ok(b) = std::fs::read(sp.checkpoint()) {
        rep.checkpoint = checkpoint::decode(&b);
        if b.len() != checkpoint::CHECKPOINT_SIZE {
            rep.problems.push(Problem {
                file: sp.checkpoint(),
                offset: 0,
                what: format!("checkpoint is {} bytes, expected 4096", b.len()),
            });
        }
    }
    Ok(rep)
}

fn verify_commit_log(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<CommitLogView> {
    let file_size = cfg.mapped_file_size_commit_log as i64;
    let mut view = CommitLogView {
        file_size,
        files: Vec::new(),
    };
    let names = list_numeric(sp.commit_log_dir());
    let total = names.len() as u64;
    let mut expect_next: Option<i64> = None;
    let mut ended = false;
    let mut last_ts = 0;
    for (i, (name, path)) in names.into_iter().enumerate() {
        progress("commitlog", i as u64, total);
        let Some(from) = paths::parse_offset_file_name(&name) else {
            rep.problems.push(Problem {
                file: path,
                offset: 0,
                what: "file name is not an offset (Java will refuse to start)".into(),
            });
            continue;
        };
        let map = ReadOnlyMap::open(&path)?;
        if map.len() as i64 != file_size {
            rep.problems.push(Problem {
                file: path.clone(),
                offset: 0,
                what: format!(
                    "size {} != mappedFileSizeCommitLog {}",
                    map.len(),
                    file_size
                ),
            });
        }
        if let Some(n) = expect_next.filter(|&n| n != from) {
            rep.problems.push(Problem {
                file: path.clone(),
                offset: 0,
                what: format!("gap: expected file {n}"),
            });
        }
        expect_next = Some(from + file_size);
        rep.commit_log_files += 1;
        let mut pos = 0usize;
        while !ended && pos < map.len() {
            match record::decode(&map[pos..], cfg.check_crc_on_recover) {
                Ok(Decoded::Record(r)) => {
                    let off = from + pos as i64;
                    if r.phys_offset != off {
                        rep.problems.push(Problem {
                            file: path.clone(),
                            offset: pos as u64,
                            what: format!("PHYSICALOFFSET {} != position {off}", r.phys_offset),
                        });
                    }
                    if r.store_timestamp < last_ts {
                        rep.problems.push(Problem {
                            file: path.clone(),
                            offset: pos as u64,
                            what: "STORETIMESTAMP decreases".into(),
                        });
                    }
                    last_ts = r.store_timestamp;
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
                    ended = true;
                }
                Err(e) => {
                    rep.problems.push(Problem {
                        file: path.clone(),
                        offset: pos as u64,
                        what: format!("invalid record: {e} (recovery truncates here)"),
                    });
                    ended = true;
                }
            }
        }
        view.files.push((from, path, map));
    }
    Ok(view)
}

fn verify_consume_queues(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    cl: &CommitLogView,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<()> {
    let delay = cfg.delay_levels_ms();
    let cl_min = cl.files.first().map(|f| f.0).unwrap_or(0);
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
            for (name, path) in list_numeric(&q.path()) {
                let Some(from) = paths::parse_offset_file_name(&name) else {
                    rep.problems.push(Problem {
                        file: path,
                        offset: 0,
                        what: "file name is not an offset".into(),
                    });
                    continue;
                };
                let map = ReadOnlyMap::open(&path)?;
                if map.len() != cfg.mapped_file_size_consume_queue as usize {
                    rep.problems.push(Problem {
                        file: path.clone(),
                        offset: 0,
                        what: format!("size {} != mappedFileSizeConsumeQueue", map.len()),
                    });
                }
                for (k, chunk) in map.chunks_exact(CQ_UNIT_SIZE).enumerate() {
                    let Some(u) = CqUnit::decode(chunk) else {
                        break;
                    };
                    if !u.is_valid() {
                        break;
                    }
                    rep.cq_units += 1;
                    if u.size == i32::MAX || u.phy_offset < cl_min {
                        continue;
                    }
                    let qo = (from + (k * CQ_UNIT_SIZE) as i64) / CQ_UNIT_SIZE as i64;
                    let at = (k * CQ_UNIT_SIZE) as u64;
                    let bad = |what: String| Problem {
                        file: path.clone(),
                        offset: at,
                        what,
                    };
                    if u.phy_offset + u.size as i64 > rep.commit_log_end {
                        rep.problems.push(bad(format!(
                            "unit points past the commit-log end ({})",
                            u.phy_offset
                        )));
                        continue;
                    }
                    match cl.record_at(u.phy_offset).map(|b| record::decode(b, false)) {
                        Some(Ok(Decoded::Record(r))) => {
                            if r.total_size != u.size
                                || r.topic != topic.as_bytes()
                                || r.queue_id != qid
                                || r.queue_offset != qo
                            {
                                rep.problems.push(bad(format!("unit {qo} does not match record at {} (size {}, topic/queue/offset)", u.phy_offset, r.total_size)));
                            } else if tags_code(&r, &delay) != u.tags_code {
                                rep.problems.push(bad(format!(
                                    "unit {qo} tagsCode {} != record's {}",
                                    u.tags_code,
                                    tags_code(&r, &delay)
                                )));
                            }
                        }
                        _ => rep.problems.push(bad(format!(
                            "unit {qo} points at no record ({})",
                            u.phy_offset
                        ))),
                    }
                }
            }
        }
    }
    Ok(())
}

fn verify_index(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    cl: &CommitLogView,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<()> {
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
    Ok(())
}

/// What `dump` prints.
#[derive(Debug, Clone)]
pub enum DumpTarget {
    /// Records from a commit-log offset, at most `limit`.
    CommitLog { from: i64, limit: usize },
    /// Units of one consume queue.
    ConsumeQueue { topic: String, queue_id: i32 },
    /// Header and entries of every index file.
    Index,
    /// The checkpoint fields.
    Checkpoint,
}

/// Dumps part of a store directory as text lines.
pub fn dump(cfg: &MessageStoreConfig, what: &DumpTarget, out: &mut dyn Write) -> Result<()> {
    let sp = StorePaths::new(
        &cfg.store_path_root_dir,
        cfg.store_path_commit_log.as_deref(),
    );
    let _lock = lock_store(&sp)?;
    let io = |e: std::io::Error| StoreError::io(sp.root(), e);
    match what {
        DumpTarget::Checkpoint => {
            let b =
                std::fs::read(sp.checkpoint()).map_err(|e| StoreError::io(sp.checkpoint(), e))?;
            let v = checkpoint::decode(&b);
            writeln!(out, "physicMsgTimestamp={}\nlogicsMsgTimestamp={}\nindexMsgTimestamp={}\nmasterFlushedOffset={}\nconfirmPhyOffset={}", v[0], v[1], v[2], v[3], v[4]).map_err(io)?;
        }
        DumpTarget::CommitLog { from, limit } => {
            let fs = cfg.mapped_file_size_commit_log as i64;
            let mut off = *from;
            let mut n = 0;
            while n < *limit {
                let start = off - off.rem_euclid(fs);
                let path = sp.commit_log_dir().join(paths::offset_file_name(start));
                let Ok(map) = ReadOnlyMap::open(&path) else {
                    break;
                };
                let Some(buf) = map.get((off - start) as usize..) else {
                    break;
                };
                match record::decode(buf, true) {
                    Ok(Decoded::Record(r)) => {
                        let props: Vec<String> = props_iter(r.properties)
                            .map(|(k, v)| {
                                format!(
                                    "{}={}",
                                    String::from_utf8_lossy(k),
                                    String::from_utf8_lossy(v)
                                )
                            })
                            .collect();
                        writeln!(out, "offset={off} size={} magic={:#x} topic={} queueId={} queueOffset={} sysFlag={} bornTs={} storeTs={} bodyLen={} bodyCrc={} props={{{}}}",
                            r.total_size, r.magic as u32, r.topic_str(), r.queue_id, r.queue_offset, r.sys_flag, r.born_timestamp, r.store_timestamp, r.body.len(), r.body_crc, props.join(", ")).map_err(io)?;
                        off += r.total_size as i64;
                        n += 1;
                    }
                    Ok(Decoded::Blank) => {
                        writeln!(out, "offset={off} BLANK").map_err(io)?;
                        off = start + fs;
                    }
                    Ok(Decoded::End) => {
                        writeln!(out, "offset={off} END").map_err(io)?;
                        break;
                    }
                    Err(e) => {
                        writeln!(out, "offset={off} INVALID {e}").map_err(io)?;
                        break;
                    }
                }
            }
        }
        DumpTarget::ConsumeQueue { topic, queue_id } => {
            for (name, path) in list_numeric(&sp.consume_queue_dir(topic, *queue_id)) {
                let from = paths::parse_offset_file_name(&name).unwrap_or(0);
                let map = ReadOnlyMap::open(&path)?;
                for (k, c) in map.chunks_exact(CQ_UNIT_SIZE).enumerate() {
                    let Some(u) = CqUnit::decode(c) else { break };
                    if !u.is_valid() {
                        break;
                    }
                    let qo = (from + (k * CQ_UNIT_SIZE) as i64) / CQ_UNIT_SIZE as i64;
                    writeln!(
                        out,
                        "queueOffset={qo} phyOffset={} size={} tagsCode={}",
                        u.phy_offset, u.size, u.tags_code
                    )
                    .map_err(io)?;
                }
            }
        }
        DumpTarget::Index => {
            let slots = cfg.max_hash_slot_num as usize;
            for (name, path) in list_numeric(&sp.index_dir()) {
                let map = ReadOnlyMap::open(&path)?;
                let h = IndexHeader::decode(map.get(..INDEX_HEADER_SIZE).unwrap_or(&[]));
                writeln!(out, "file={name} {h:?}").map_err(io)?;
                let base = INDEX_HEADER_SIZE + slots * 4;
                for n in 1..h.index_count.max(1) {
                    let ep = base + n as usize * 20;
                    let Some(e) = map.get(ep..ep + 20) else { break };
                    let mut p = [0u8; 8];
                    p.copy_from_slice(&e[4..12]);
                    writeln!(
                        out,
                        "  entry={n} hash={} phyOffset={} timeDiff={} prev={}",
                        i32::from_be_bytes([e[0], e[1], e[2], e[3]]),
                        i64::from_be_bytes(p),
                        i32::from_be_bytes([e[12], e[13], e[14], e[15]]),
                        i32::from_be_bytes([e[16], e[17], e[18], e[19]])
                    )
                    .map_err(io)?;
                }
            }
        }
    }
    Ok(())
}
