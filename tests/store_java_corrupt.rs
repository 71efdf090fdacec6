//! Corrupted twins of the Java-written store (tests/fixtures/java-store-clean), made at test time:
//! torn CommitLog tail (zeroed mid-record, garbage after the end, file cut short), a bad body CRC
//! in the newest and in an older file, ConsumeQueue units cut / torn / file cut short, the whole
//! ConsumeQueue directory or the index file missing, a zeroed and a garbage checkpoint.
//!
//! Each twin is opened by rmqd's `MessageStore` after a normal and after an abnormal stop (`abort`
//! present), `checkCRCOnRecover=true`, and must end as the Java broker (5.3.x/head recovery:
//! `CommitLog.recoverNormally/recoverAbnormally`, `ConsumeQueue.recover`) would leave it: the
//! same messages readable byte for byte (body, properties, queue offset, store timestamp: the
//! whole record) by queue offset and by key, the store truncated at the same offset. Where Java
//! loses consume-queue units or index keys of surviving records (a cut queue or a missing index
//! or queue directory on a normal start), rmqd rebuilds them from the CommitLog instead; that is
//! a superset Java reads back unchanged. Before opening, `tools::verify` must name the injected
//! problem's file and byte offset; after rmqd's recovery the store must verify clean.

mod store_common;

use std::time::Duration;

use rmqd::store::{GetMessageStatus, MessageStore};
use store_common::java_fixture::CLEAN;
use store_common::twin::{assert_reported, garbage, open_and_check, Expect, Stop, Twin};

const CL1: &str = "commitlog/00000000000001048576";
const CL0: &str = "commitlog/00000000000000000000";

/// A fresh twin of the clean fixture (88 records: J01 50 + J04 32 + J07 6).
fn twin() -> Option<Twin> {
    let t = Twin::new(CLEAN)?;
    assert_eq!(t.truth.len(), 88, "J01 50 + J04 32 + J07 6 records");
    Some(t)
}

/// Runs `case` on a fresh twin for both stop modes.
fn both_stops(case: impl Fn(&Twin, Stop)) {
    for stop in [Stop::Normal, Stop::Abnormal] {
        let Some(t) = twin() else { return };
        case(&t, stop);
    }
}

#[test]
fn torn_tail_zeroed_mid_record_is_truncated_at_the_record() {
    both_stops(|t, stop| {
        let last = t.truth.last().unwrap();
        let (file, pos) = t.locate(last.phys);
        let n = last.bytes.len() - 100;
        t.write_at(&file, pos + 100, &vec![0u8; n]);
        assert_reported(&t.verify(), &file, pos);
        open_and_check(t, stop, Expect::end(last.phys));
    });
}

#[test]
fn garbage_after_the_last_record_is_not_data() {
    both_stops(|t, stop| {
        let (file, pos) = t.locate(t.end());
        t.write_at(&file, pos, &garbage(300, 7));
        assert_reported(&t.verify(), &file, pos);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn commit_log_file_cut_short_mid_record_is_refused_like_java() {
    both_stops(|t, stop| {
        // Java's MappedFileQueue.load refuses a file whose length is not mappedFileSizeCommitLog.
        let last = t.truth.last().unwrap();
        let (file, pos) = t.locate(last.phys);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(pos + 100)
            .unwrap();
        let rep = t.verify();
        assert_reported(&rep, &file, 0);
        assert_reported(&rep, &file, pos);
        if stop == Stop::Abnormal {
            std::fs::write(t.path("abort"), b"1").unwrap();
        }
        let err = MessageStore::open(t.cfg.clone())
            .err()
            .expect("must refuse");
        assert!(err.to_string().contains(CL1), "{err}");
    });
}

#[test]
fn bad_body_crc_in_the_newest_file_truncates_from_that_record() {
    both_stops(|t, stop| {
        let bad = t.record("J04_fixture_t", 3, 10);
        let (file, pos) = t.locate(bad.phys);
        t.write_at(&file, pos + 88, &[bad.bytes[88] ^ 0xFF]);
        assert_reported(&t.verify(), &file, pos);
        // Everything from the bad record on is lost, J07's queues included.
        open_and_check(t, stop, Expect::end(bad.phys));
    });
}

#[test]
fn bad_body_crc_in_an_older_file_is_kept_when_recovery_does_not_scan_it() {
    // Java scans only the newest file here (normal: its first record <= the queues' max;
    // abnormal: its first record is older than the checkpoint), so the damaged record stays.
    both_stops(|t, stop| {
        let bad = t.record("J01_fixture_t", 0, 1);
        let (file, pos) = t.locate(bad.phys);
        t.write_at(&file, pos + 88, &[bad.bytes[88] ^ 0xFF]);
        assert_eq!(file, t.path(CL0));
        assert_reported(&t.verify(), &file, pos);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: Some(bad.phys),
                ..Expect::default()
            },
        );
    });
}

#[test]
fn bad_body_crc_in_an_older_file_with_a_zeroed_checkpoint_truncates_there() {
    // Abnormal stop + checkpoint 0: Java scans from file 0, stops at the bad record and deletes
    // the newer file.
    let Some(t) = twin() else { return };
    let bad = t.record("J01_fixture_t", 0, 1);
    let (file, pos) = t.locate(bad.phys);
    t.write_at(&file, pos + 88, &[bad.bytes[88] ^ 0xFF]);
    t.write_at(&t.path("checkpoint"), 0, &[0u8; 4096]);
    open_and_check(&t, Stop::Abnormal, Expect::end(bad.phys));
    assert!(!t.path(CL1).exists(), "the file past the end is deleted");
}

#[test]
fn consume_queue_units_cut_are_rebuilt_from_the_commit_log() {
    // Java rebuilds them only after an abnormal stop; rmqd re-dispatches the scanned range.
    both_stops(|t, stop| {
        let file = t.path("consumequeue/J01_fixture_t/1/00000000000000000000");
        t.write_at(&file, 200, &[0u8; 60]);
        assert_reported(&t.verify(), &file, 200);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn torn_consume_queue_unit_of_the_newest_record_is_rebuilt() {
    // Only the unit's phyOffset made it to disk. (Java's normal start misses this record: it
    // re-dispatches offsets strictly greater than the queues' new max, which is this record's.)
    both_stops(|t, stop| {
        let file = t.path("consumequeue/J07_fixture_t/0/00000000000000000000");
        t.write_at(&file, 28, &[0u8; 12]);
        assert_reported(&t.verify(), &file, 20);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn consume_queue_file_cut_short_is_refused_like_java() {
    both_stops(|t, stop| {
        let rel = "consumequeue/J01_fixture_t/1/00000000000000000000";
        let file = t.path(rel);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(250)
            .unwrap();
        assert_reported(&t.verify(), &file, 0);
        if stop == Stop::Abnormal {
            std::fs::write(t.path("abort"), b"1").unwrap();
        }
        let err = MessageStore::open(t.cfg.clone())
            .err()
            .expect("must refuse");
        assert!(err.to_string().contains(rel), "{err}");
    });
}

#[test]
fn missing_consume_queue_directory_is_rebuilt_from_the_commit_log() {
    both_stops(|t, stop| {
        std::fs::remove_dir_all(t.path("consumequeue")).unwrap();
        assert_reported(
            &t.verify(),
            &t.path("consumequeue/J01_fixture_t/0/00000000000000000000"),
            0,
        );
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn missing_index_file_is_rebuilt_and_every_key_found() {
    both_stops(|t, stop| {
        for e in std::fs::read_dir(t.path("index")).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        assert_reported(&t.verify(), &t.path("index"), 0);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn zeroed_checkpoint_loses_nothing() {
    both_stops(|t, stop| {
        t.write_at(&t.path("checkpoint"), 0, &[0u8; 4096]);
        assert_reported(&t.verify(), &t.path("checkpoint"), 0);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn garbage_checkpoint_loses_nothing_and_does_not_set_the_clock() {
    both_stops(|t, stop| {
        let mut page = garbage(4096, 99);
        // physicMsgTimestamp far in the future, logicsMsgTimestamp negative.
        page[..8].copy_from_slice(&0x7000_0000_0000_0000_i64.to_be_bytes());
        page[8..16].copy_from_slice(&(-5_i64).to_be_bytes());
        t.write_at(&t.path("checkpoint"), 0, &page);
        let rep = t.verify();
        assert_reported(&rep, &t.path("checkpoint"), 0);
        assert_reported(&rep, &t.path("checkpoint"), 8);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn one_topic_directory_missing_stays_deleted_after_a_normal_stop_like_java() {
    // A topic whose consume queues were deleted (admin deleteTopic) is not brought back by a
    // clean restart: Java re-dispatches nothing at or below the other queues' max (J07's records
    // come after J04's). After an abnormal stop Java re-dispatches the newest file, so J04's
    // records there come back.
    for stop in [Stop::Normal, Stop::Abnormal] {
        let Some(t) = twin() else { return };
        std::fs::remove_dir_all(t.path("consumequeue/J04_fixture_t")).unwrap();
        let rep = t.verify();
        assert!(
            rep.is_ok(),
            "a deleted topic is no damage: {:#?}",
            rep.problems
        );
        if stop == Stop::Abnormal {
            std::fs::write(t.path("abort"), b"1").unwrap();
        }
        let store = MessageStore::open(t.cfg.clone()).unwrap();
        assert!(store.wait_dispatched(Duration::from_secs(10)));
        assert_eq!(store.max_phy_offset(), t.end());
        for r in &t.truth {
            let g = store.get_message(&r.topic, r.queue_id, r.queue_offset, 1, 1 << 20, None);
            let back = r.topic != "J04_fixture_t" || stop == Stop::Abnormal;
            assert_eq!(g.status == GetMessageStatus::FOUND, back, "{stop:?} {r:?}");
            if back {
                assert_eq!(&g.messages[0][..], &r.bytes[..]);
            }
        }
    }
}
