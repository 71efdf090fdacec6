//! `verify`'s commit-log pass: file names, sizes and gaps, then every record up to the end of
//! data (PHYSICALOFFSET, STORETIMESTAMP order, CRC, garbage after the end).

use std::path::Path;

use super::Seen;
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::error::Result;
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::{self, StorePaths};
use crate::store::tools::{list_numeric, CommitLogView, Progress, Report};

/// A kill between creating the newest file and sizing it leaves it empty.
pub(super) const ZERO_LENGTH_LAST: &str =
    "zero-length newest file (the broker stopped as it created it); recovery deletes it, as Java's does";

/// How far the commit-log pass has got, across files.
#[derive(Default)]
struct CommitLogWalk {
    /// Where the next file should start.
    expect_next: Option<i64>,
    /// The data ended (END magic or an invalid record): later bytes are not records.
    ended: bool,
    last_ts: i64,
    /// Walking the newest file, where a crash tears the last write.
    last_file: bool,
}

/// Every commit-log file: names, sizes, gaps, then the records up to the end of data.
pub(super) fn verify_commit_log(
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
    // the newest file with data: files after it are empty ones created ahead (recovery drops them)
    let newest = names
        .iter()
        .rposition(|(_, p)| starts_with_data(p))
        .unwrap_or(0);
    let mut walk = CommitLogWalk::default();
    for (i, (name, path)) in names.into_iter().enumerate() {
        progress("commitlog", i as u64, total);
        let Some(from) = paths::parse_offset_file_name(&name) else {
            let what = "file name is not an offset (Java will refuse to start)";
            rep.problem(&path, 0, what);
            continue;
        };
        if i + 1 == total as usize && is_empty_file(&path) {
            rep.warning(&path, 0, ZERO_LENGTH_LAST);
            continue;
        }
        let map = ReadOnlyMap::open(&path)?;
        walk.last_file = i >= newest;
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
                    let what = format!(
                        "garbage after the last valid record (unknown magic, first non-zero byte at {}); recovery ends the data here",
                        pos + nz
                    );
                    tail_finding(rep, walk.last_file, path, pos, what);
                }
            }
            Err(e) => {
                let what = format!("invalid record: {e} (recovery truncates here)");
                tail_finding(rep, walk.last_file, path, pos, what);
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
        // the clock went back: recovery and reads do not care
        rep.warning(path, pos as u64, "STORETIMESTAMP decreases");
    }
    walk.last_ts = r.store_timestamp;
}

/// The end of data: in the newest file that is where a crash tore the last write, which
/// recovery cuts off as Java's does (a warning); in an older file the records after it are lost.
fn tail_finding(rep: &mut Report, last_file: bool, path: &Path, pos: usize, what: String) {
    if last_file {
        rep.warning(path, pos as u64, what);
    } else {
        rep.problem(
            path,
            pos as u64,
            format!("{what}; every later file is lost"),
        );
    }
}

/// Whether the file exists and has no bytes.
pub(super) fn is_empty_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == 0)
}

/// Whether the file's first record slot is not all zero (a file created ahead is).
fn starts_with_data(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .map(|_| head != [0u8; 8])
        .unwrap_or(false)
}
