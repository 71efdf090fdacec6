//! `verify`'s consume-queue pass: file names and sizes, units invalid amid valid ones, and each
//! unit against the record it points at.

use std::collections::HashMap;
use std::path::Path;

use super::commit_log::{is_empty_file, ZERO_LENGTH_LAST};
use crate::store::commitlog::record::{self, Decoded};
use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::{CqUnit, CQ_UNIT_SIZE};
use crate::store::dispatch::tags_code;
use crate::store::error::Result;
use crate::store::mapped_file::read_only::ReadOnlyMap;
use crate::store::paths::{self, StorePaths};
use crate::store::tools::{list_numeric, CommitLogView, Progress, Report};

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
pub(super) fn verify_consume_queues(
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
        let files = list_numeric(dir);
        let n = files.len();
        for (i, (name, path)) in files.into_iter().enumerate() {
            let Some(from) = paths::parse_offset_file_name(&name) else {
                rep.problem(&path, 0, "file name is not an offset");
                continue;
            };
            if i + 1 == n && is_empty_file(&path) {
                rep.warning(&path, 0, ZERO_LENGTH_LAST);
                continue;
            }
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
                rep.warning(path, at as u64, format!(
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
