//! Corrupted twins of the store the Java broker left after a SIGKILL
//! (tests/fixtures/java-store-killed: `abort` present, checkpoint physicMsgTimestamp 0 and
//! indexMsgTimestamp 0), so every twin takes Java's abnormal-recovery path:
//!
//! * `CommitLog.recoverAbnormally` + `isMappedFileMatchedRecover`: the checkpoint's min timestamp
//!   is 0, no file's first record is older, so the scan starts at file 0 and dispatches every valid
//!   record to the consume queues and the index; it stops at the first invalid record (torn, bad
//!   CRC) and `MappedFileQueue.truncateDirtyFiles` cuts there (the pre-allocated empty file after
//!   it is deleted);
//! * `ConsumeQueueStore.truncateDirty` / `ConsumeQueue.truncateDirtyLogicFiles`: units at or past
//!   that end are cut;
//! * `IndexService.load(lastExitOK=false)`: the index file (endTimestamp > indexMsgTimestamp 0)
//!   is deleted and rebuilt by the dispatch.
//!
//! rmqd must recover the same records, byte for byte by queue offset and by key, never find a cut
//! record, take the next append at the same offset and verify clean afterwards.

mod store_common;

use rmqd::store::index::INDEX_HEADER_SIZE;
use store_common::java_fixture::KILLED;
use store_common::twin::{assert_reported, open_and_check, Expect, Stop, Twin};

/// A fresh twin of the SIGKILL fixture (56 records: J01 50 + J07 6).
fn twin() -> Option<Twin> {
    let t = Twin::new(KILLED)?;
    assert_eq!(t.truth.len(), 56, "J01 50 + J07 6 records");
    assert!(t.path("abort").exists());
    Some(t)
}

/// The consume-queue file and byte offset of a record's unit.
fn unit_of(t: &Twin, phys: i64) -> (std::path::PathBuf, u64) {
    let r = t.truth.iter().find(|r| r.phys == phys).unwrap();
    let per_file = t.cfg.mapped_file_size_consume_queue as i64 / 20;
    let start = r.queue_offset / per_file * per_file * 20;
    let file = t.path(&format!(
        "consumequeue/{}/{}/{start:020}",
        r.topic, r.queue_id
    ));
    (file, (r.queue_offset * 20 - start) as u64)
}

/// Byte offsets of the index entries pointing at or past `phys`.
fn index_entries_from(t: &Twin, phys: i64) -> Vec<u64> {
    let file = t.index_file();
    let hdr = t.read_at(&file, 0, INDEX_HEADER_SIZE);
    let count = i32::from_be_bytes([hdr[36], hdr[37], hdr[38], hdr[39]]) as u64;
    let base = (INDEX_HEADER_SIZE + t.cfg.max_hash_slot_num as usize * 4) as u64;
    (1..count)
        .map(|n| base + n * 20)
        .filter(|&ep| {
            let e = t.read_at(&file, ep + 4, 8);
            i64::from_be_bytes(e.try_into().unwrap()) >= phys
        })
        .collect()
}

#[test]
fn killed_torn_tail_is_truncated_at_the_record() {
    let Some(t) = twin() else { return };
    let last = t.truth.last().unwrap();
    let (file, pos) = t.locate(last.phys);
    t.write_at(&file, pos + 100, &vec![0u8; last.bytes.len() - 100]);
    assert_reported(&t.verify(), &file, pos);
    open_and_check(&t, Stop::Abnormal, Expect::end(last.phys));
    assert!(!t.path("commitlog/00000000000002097152").exists());
}

#[test]
fn killed_bad_crc_in_the_last_file_truncates_from_that_record() {
    let Some(t) = twin() else { return };
    let fs = t.cfg.mapped_file_size_commit_log as i64;
    let bad = t.truth.iter().filter(|r| r.phys >= fs).nth(10).unwrap();
    let (file, pos) = t.locate(bad.phys);
    t.write_at(&file, pos + 88, &[bad.bytes[88] ^ 0xFF]);
    assert_reported(&t.verify(), &file, pos);
    open_and_check(&t, Stop::Abnormal, Expect::end(bad.phys));
}

#[test]
fn killed_consume_queues_longer_than_the_commit_log_are_truncated() {
    // The last three records never reached the disk, their consume-queue units did.
    let Some(t) = twin() else { return };
    let cut = t.truth[t.truth.len() - 3].phys;
    t.zero_commit_log_from(cut);
    let rep = t.verify();
    for r in &t.truth[t.truth.len() - 3..] {
        let (file, off) = unit_of(&t, r.phys);
        assert_reported(&rep, &file, off);
    }
    open_and_check(&t, Stop::Abnormal, Expect::end(cut));
}

#[test]
fn killed_index_entries_past_the_end_never_find_a_record() {
    // The checkpoint's indexMsgTimestamp covers the index file, so Java's IndexService.load keeps
    // it: its entries for the three lost records stay, and Java's buildIndex skips every offset
    // below the file's endPhyOffset, so new messages stored there are not indexed either. rmqd
    // drops the index file that points past the recovered end and rebuilds it from the commit log
    // (a superset of Java's: every surviving key, no lost record).
    let Some(t) = twin() else { return };
    let file = t.index_file();
    let end_ts = t.read_at(&file, 8, 8);
    t.write_at(&t.path("checkpoint"), 16, &end_ts);
    let cut = t.truth[t.truth.len() - 3].phys;
    t.zero_commit_log_from(cut);
    let past = index_entries_from(&t, cut);
    assert!(!past.is_empty());
    let rep = t.verify();
    for ep in past {
        assert_reported(&rep, &file, ep);
    }
    open_and_check(&t, Stop::Abnormal, Expect::end(cut));
}
