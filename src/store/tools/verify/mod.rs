//! `verify`: reads a whole store directory and reports every inconsistency with its file and
//! byte offset — invalid or torn records and garbage after the end of data, consume-queue units
//! that are invalid amid valid ones, point past the end or disagree with their records, or are
//! missing for records; index slots out of range, broken or crossed chains, entries no chain
//! reaches, header counts and offsets that disagree with the entries, entries without a record;
//! and checkpoint values recovery would misread (including all zero on a store with records).

mod commit_log;
mod consume_queue;
mod index;

use std::collections::HashMap;

use super::{list_numeric, Progress, Report};
use crate::store::checkpoint;
use crate::store::commitlog::record;
use crate::store::config::MessageStoreConfig;
use crate::store::consumequeue::CQ_UNIT_SIZE;
use crate::store::error::Result;
use crate::store::paths::{self, StorePaths};
use crate::store::recovery::lock_store;
use crate::store::util::find_property;
use commit_log::verify_commit_log;
use consume_queue::verify_consume_queues;
use index::verify_index;

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
        let file = newest.clone().unwrap_or_else(|| sp.index_dir());
        rep.warning(
            &file,
            if newest.is_some() { 24 } else { 0 },
            format!(
                "records with keys up to commit-log offset {last_keyed} are not indexed (index ends at {index_end}); recovery rebuilds the index"
            ),
        );
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
        let file = sp
            .consume_queue_dir(topic, *qid)
            .join(paths::offset_file_name(file_start));
        rep.warning(
            &file,
            (have * CQ_UNIT_SIZE as i64 - file_start) as u64,
            format!(
                "consume queue {topic}/{qid} ends at unit {have} but the commit log has records up to queue offset {}; recovery dispatches them",
                next - 1
            ),
        );
    }
}

/// Checkpoint size and timestamps: negative or future values make abnormal recovery start at
/// the wrong file; an all-zero page with data present makes it rescan everything.
fn verify_checkpoint(sp: &StorePaths, rep: &mut Report) {
    let Ok(b) = std::fs::read(sp.checkpoint()) else {
        return;
    };
    rep.checkpoint = checkpoint::decode(&b);
    let path = sp.checkpoint();
    if b.len() != checkpoint::CHECKPOINT_SIZE {
        rep.problem(
            &path,
            0,
            format!("checkpoint is {} bytes, expected 4096", b.len()),
        );
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
            rep.problem(
                &path,
                (i * 8) as u64,
                format!("{name} {v} is not a plausible time"),
            );
        }
    }
    if rep.records > 0 && rep.checkpoint[..3].iter().all(|&v| v == 0) {
        // a store killed before its first checkpoint flush: recovery scans it all, as Java's
        rep.warning(
            &path,
            0,
            "checkpoint timestamps are all zero while the commit log has records; an abnormal recovery rescans the whole commit log",
        );
    }
}
