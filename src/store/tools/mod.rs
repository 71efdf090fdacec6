//! Operator tools behind `rmqd store verify|dump <dir>`: offline checks and dumps of a store
//! directory (taken under the directory's lock, never modifying anything).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::store::checkpoint;
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::{CqUnit, CQ_UNIT_SIZE};
use crate::store::error::{Result, StoreError};
use crate::store::index::{IndexHeader, INDEX_HEADER_SIZE};
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::{self, StorePaths};
use crate::store::recovery::lock_store;
use crate::store::util::props_iter;

mod verify;
pub use verify::verify;

/// One finding: the file, the byte offset inside it, what is wrong, and how bad it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    pub offset: u64,
    pub what: String,
    pub severity: Severity,
}

/// How bad a finding is, measured by what recovery makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Recovery repairs it as Java's does (a torn tail after a crash, units or index entries
    /// still to dispatch, a checkpoint not yet written): nothing acknowledged is lost.
    Warning,
    /// Data would be lost or refused: a gap, a bad file size or name, records after corruption,
    /// units or index entries pointing at the wrong record.
    Error,
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
    /// No errors (warnings are what recovery repairs).
    pub fn is_ok(&self) -> bool {
        self.errors() == 0
    }

    pub fn errors(&self) -> usize {
        let errors = self.problems.iter();
        errors.filter(|p| p.severity == Severity::Error).count()
    }

    pub(crate) fn problem(&mut self, file: &Path, offset: u64, what: impl Into<String>) {
        self.push(file, offset, what.into(), Severity::Error);
    }

    pub(crate) fn warning(&mut self, file: &Path, offset: u64, what: impl Into<String>) {
        self.push(file, offset, what.into(), Severity::Warning);
    }

    fn push(&mut self, file: &Path, offset: u64, what: String, severity: Severity) {
        self.problems.push(Problem {
            file: file.to_path_buf(),
            offset,
            what,
            severity,
        });
    }
}

/// Progress callback: (phase, done, total).
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

pub(crate) struct CommitLogView {
    pub(crate) file_size: i64,
    pub(crate) files: Vec<(i64, PathBuf, ReadOnlyMap)>,
}

impl CommitLogView {
    pub(crate) fn record_at(&self, off: i64) -> Option<&[u8]> {
        let (from, _, map) = self
            .files
            .iter()
            .find(|(f, _, _)| *f <= off && off < f + self.file_size)?;
        map.get((off - from) as usize..)
    }
}

/// One index entry as stored (store-format.md §5): `keyHash | phyOffset | timeDiff | prevIndex`.
pub(crate) struct IndexEntry {
    pub(crate) hash: i32,
    pub(crate) phy_offset: i64,
    pub(crate) time_diff: i32,
    pub(crate) prev: i32,
}

/// Byte position of entry `n` in an index file with `slots` hash slots.
pub(crate) fn index_entry_pos(slots: usize, n: usize) -> usize {
    INDEX_HEADER_SIZE + slots * 4 + n * 20
}

/// Entry `n` of a mapped index file (`None` past its end).
pub(crate) fn index_entry(map: &[u8], slots: usize, n: usize) -> Option<IndexEntry> {
    let ep = index_entry_pos(slots, n);
    let e = map.get(ep..ep + 20)?;
    let mut p = [0u8; 8];
    p.copy_from_slice(&e[4..12]);
    Some(IndexEntry {
        hash: i32::from_be_bytes([e[0], e[1], e[2], e[3]]),
        phy_offset: i64::from_be_bytes(p),
        time_diff: i32::from_be_bytes([e[12], e[13], e[14], e[15]]),
        prev: i32::from_be_bytes([e[16], e[17], e[18], e[19]]),
    })
}

pub(crate) fn list_numeric(dir: &Path) -> Vec<(String, PathBuf)> {
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
    match what {
        DumpTarget::Checkpoint => dump_checkpoint(&sp, out),
        DumpTarget::CommitLog { from, limit } => dump_commit_log(cfg, &sp, *from, *limit, out),
        DumpTarget::ConsumeQueue { topic, queue_id } => {
            dump_consume_queue(&sp, topic, *queue_id, out)
        }
        DumpTarget::Index => dump_index(cfg, &sp, out),
    }
}

/// A failed write of the dump, reported against the store root.
fn dump_write_error(sp: &StorePaths) -> impl Fn(std::io::Error) -> StoreError + '_ {
    |e| StoreError::io(sp.root(), e)
}

fn dump_checkpoint(sp: &StorePaths, out: &mut dyn Write) -> Result<()> {
    let b = std::fs::read(sp.checkpoint()).map_err(|e| StoreError::io(sp.checkpoint(), e))?;
    let v = checkpoint::decode(&b);
    writeln!(out, "physicMsgTimestamp={}\nlogicsMsgTimestamp={}\nindexMsgTimestamp={}\nmasterFlushedOffset={}\nconfirmPhyOffset={}", v[0], v[1], v[2], v[3], v[4]).map_err(dump_write_error(sp))
}

/// Up to `limit` records from commit-log offset `from`, across files; stops at the end of data.
fn dump_commit_log(
    cfg: &MessageStoreConfig,
    sp: &StorePaths,
    from: i64,
    limit: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let io = dump_write_error(sp);
    let fs = cfg.mapped_file_size_commit_log as i64;
    let mut off = from;
    let mut n = 0;
    while n < limit {
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
                dump_record(off, &r, out).map_err(&io)?;
                off += r.total_size as i64;
                n += 1;
            }
            Ok(Decoded::Blank) => {
                writeln!(out, "offset={off} BLANK").map_err(&io)?;
                off = start + fs;
            }
            Ok(Decoded::End) => {
                writeln!(out, "offset={off} END").map_err(&io)?;
                break;
            }
            Err(e) => {
                writeln!(out, "offset={off} INVALID {e}").map_err(&io)?;
                break;
            }
        }
    }
    Ok(())
}

/// One record's line: its fields and properties.
fn dump_record(off: i64, r: &record::RecordView<'_>, out: &mut dyn Write) -> std::io::Result<()> {
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
        r.total_size, r.magic as u32, r.topic_str(), r.queue_id, r.queue_offset, r.sys_flag, r.born_timestamp, r.store_timestamp, r.body.len(), r.body_crc, props.join(", "))
}

/// The valid units of one consume queue, with their queue offsets.
fn dump_consume_queue(
    sp: &StorePaths,
    topic: &str,
    queue_id: i32,
    out: &mut dyn Write,
) -> Result<()> {
    let io = dump_write_error(sp);
    for (name, path) in list_numeric(&sp.consume_queue_dir(topic, queue_id)) {
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
            .map_err(&io)?;
        }
    }
    Ok(())
}

/// Header and entries of every index file.
fn dump_index(cfg: &MessageStoreConfig, sp: &StorePaths, out: &mut dyn Write) -> Result<()> {
    let io = dump_write_error(sp);
    let slots = cfg.max_hash_slot_num as usize;
    for (name, path) in list_numeric(&sp.index_dir()) {
        let map = ReadOnlyMap::open(&path)?;
        let h = IndexHeader::decode(map.get(..INDEX_HEADER_SIZE).unwrap_or(&[]));
        writeln!(out, "file={name} {h:?}").map_err(&io)?;
        for n in 1..h.index_count.max(1) {
            let Some(e) = index_entry(&map, slots, n as usize) else {
                break;
            };
            writeln!(
                out,
                "  entry={n} hash={} phyOffset={} timeDiff={} prev={}",
                e.hash, e.phy_offset, e.time_diff, e.prev
            )
            .map_err(&io)?;
        }
    }
    Ok(())
}
