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

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmqd::store::{tools, GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus};
use store_common::java_fixture::{read_records, unpack_from, FixtureRecord, CLEAN};

const CL1: &str = "commitlog/00000000000001048576";
const CL0: &str = "commitlog/00000000000000000000";

/// A fresh copy of the clean Java store and its records as Java wrote them.
struct Twin {
    dir: tempfile::TempDir,
    cfg: MessageStoreConfig,
    truth: Vec<FixtureRecord>,
}

impl Twin {
    fn new() -> Option<Twin> {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = unpack_from(CLEAN, dir.path())?;
        cfg.check_crc_on_recover = true;
        let truth = read_records(dir.path(), cfg.mapped_file_size_commit_log as usize);
        assert_eq!(truth.len(), 88, "J01 50 + J04 32 + J07 6 records");
        Some(Twin { dir, cfg, truth })
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn end(&self) -> i64 {
        let last = self.truth.last().unwrap();
        last.phys + last.bytes.len() as i64
    }
    /// The commit-log file and in-file position of a physical offset.
    fn locate(&self, phys: i64) -> (PathBuf, u64) {
        let fs = self.cfg.mapped_file_size_commit_log as i64;
        let start = phys - phys % fs;
        (
            self.path(&format!("commitlog/{start:020}")),
            (phys - start) as u64,
        )
    }
    fn record(&self, topic: &str, queue_id: i32, queue_offset: i64) -> &FixtureRecord {
        self.truth
            .iter()
            .find(|r| r.topic == topic && r.queue_id == queue_id && r.queue_offset == queue_offset)
            .unwrap()
    }
    fn write_at(&self, file: &Path, pos: u64, bytes: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        f.write_all_at(bytes, pos).unwrap();
    }
    fn verify(&self) -> tools::Report {
        tools::verify(&self.cfg, &mut |_, _, _| {}).unwrap()
    }
}

/// Deterministic garbage (xorshift), never starting with a valid magic.
fn garbage(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

fn assert_reported(rep: &tools::Report, file: &Path, offset: u64) {
    assert!(
        rep.problems
            .iter()
            .any(|p| p.file == file && p.offset == offset),
        "verify must report {}@{offset}; got {:#?}",
        file.display(),
        rep.problems
    );
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    Normal,
    Abnormal,
}

/// What Java's recovery leaves: records below `end` survive; `served_as_is` is a damaged record
/// Java does not look at (so it stays and is served with its damage).
struct Expect {
    end: i64,
    served_as_is: Option<i64>,
}

/// Opens the twin, checks every surviving record by queue offset and by key, every lost one
/// gone, one new append at the truncation point, a clean shutdown and a clean verify.
fn open_and_check(t: &Twin, stop: Stop, want: Expect) {
    if stop == Stop::Abnormal {
        std::fs::write(t.path("abort"), b"12345").unwrap();
    }
    let store = MessageStore::open(t.cfg.clone()).unwrap();
    assert_eq!(
        store.max_phy_offset(),
        want.end,
        "{stop:?}: truncation point"
    );
    assert!(store.wait_dispatched(Duration::from_secs(10)));
    let mut per_queue = std::collections::HashMap::<(&str, i32), i64>::new();
    for r in &t.truth {
        let (topic, q, qo) = (r.topic.as_str(), r.queue_id, r.queue_offset);
        let g = store.get_message(topic, q, qo, 1, 4 << 20, None);
        if r.phys >= want.end {
            assert_ne!(
                g.status,
                GetMessageStatus::FOUND,
                "{stop:?}: {topic}/{q}@{qo} must be gone"
            );
            for k in &r.keys {
                let hits = store.query_message(topic, k, 64, 0, i64::MAX).phy_offsets;
                assert!(
                    !hits.contains(&r.phys),
                    "{stop:?}: key {k} still finds a cut record"
                );
            }
            continue;
        }
        *per_queue.entry((topic, q)).or_default() += 1;
        assert_eq!(
            g.status,
            GetMessageStatus::FOUND,
            "{stop:?}: {topic}/{q}@{qo}"
        );
        let got = &g.messages[0];
        if want.served_as_is == Some(r.phys) {
            assert_eq!(got.len(), r.bytes.len());
            assert_ne!(
                &got[..],
                &r.bytes[..],
                "the damaged record is served as it is on disk"
            );
        } else {
            assert_eq!(
                &got[..],
                &r.bytes[..],
                "{stop:?}: {topic}/{q}@{qo} byte for byte"
            );
        }
        for k in &r.keys {
            let hits = store.query_message(topic, k, 64, 0, i64::MAX).phy_offsets;
            assert!(
                hits.contains(&r.phys),
                "{stop:?}: key {topic}#{k} must find {}",
                r.phys
            );
        }
    }
    for ((topic, q), n) in &per_queue {
        assert_eq!(
            store.max_offset_in_queue(topic, *q),
            *n,
            "{stop:?}: {topic}/{q} units"
        );
    }
    // The store takes appends where the valid data ends, with the next queue offset.
    let next = per_queue.get(&("J01_fixture_t", 0)).copied().unwrap_or(0);
    let mut m = store_common::msg("J01_fixture_t", 0, b"after recovery", "T", "k", "U1");
    m.born_host = "127.0.0.1:40000".parse().unwrap();
    m.store_host = "127.0.0.1:30911".parse().unwrap();
    let r = store.put_message(&m).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    let a = r.append.unwrap();
    assert_eq!(
        (a.wrote_offset, a.logics_offset),
        (want.end, next),
        "{stop:?}"
    );
    assert!(
        a.store_timestamp <= rmqd::store::util::now_ms() + 1000,
        "{stop:?}: store time {} comes from the clock, not the checkpoint",
        a.store_timestamp
    );
    store.shutdown();
    drop(store);
    assert!(!t.path("abort").exists());
    let after = t.verify();
    let damage_left = want.served_as_is.is_some();
    assert_eq!(
        after.is_ok(),
        !damage_left,
        "{stop:?}: {:#?}",
        after.problems
    );
}

/// Runs `case` on a fresh twin for both stop modes.
fn both_stops(case: impl Fn(&Twin, Stop)) {
    for stop in [Stop::Normal, Stop::Abnormal] {
        let Some(t) = Twin::new() else {
            eprintln!("fixture {CLEAN} missing; run scripts/store-fixtures");
            return;
        };
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
        open_and_check(
            t,
            stop,
            Expect {
                end: last.phys,
                served_as_is: None,
            },
        );
    });
}

#[test]
fn garbage_after_the_last_record_is_not_data() {
    both_stops(|t, stop| {
        let (file, pos) = t.locate(t.end());
        t.write_at(&file, pos, &garbage(300, 7));
        assert_reported(&t.verify(), &file, pos);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
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
        open_and_check(
            t,
            stop,
            Expect {
                end: bad.phys,
                served_as_is: None,
            },
        );
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
            },
        );
    });
}

#[test]
fn bad_body_crc_in_an_older_file_with_a_zeroed_checkpoint_truncates_there() {
    // Abnormal stop + checkpoint 0: Java scans from file 0, stops at the bad record and deletes
    // the newer file.
    let Some(t) = Twin::new() else { return };
    let bad = t.record("J01_fixture_t", 0, 1);
    let (file, pos) = t.locate(bad.phys);
    t.write_at(&file, pos + 88, &[bad.bytes[88] ^ 0xFF]);
    t.write_at(&t.path("checkpoint"), 0, &[0u8; 4096]);
    open_and_check(
        &t,
        Stop::Abnormal,
        Expect {
            end: bad.phys,
            served_as_is: None,
        },
    );
    assert!(!t.path(CL1).exists(), "the file past the end is deleted");
}

#[test]
fn consume_queue_units_cut_are_rebuilt_from_the_commit_log() {
    // Java rebuilds them only after an abnormal stop; rmqd re-dispatches the scanned range.
    both_stops(|t, stop| {
        let file = t.path("consumequeue/J01_fixture_t/1/00000000000000000000");
        t.write_at(&file, 200, &[0u8; 60]);
        assert_reported(&t.verify(), &file, 200);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
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
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
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
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
    });
}

#[test]
fn missing_index_file_is_rebuilt_and_every_key_found() {
    both_stops(|t, stop| {
        for e in std::fs::read_dir(t.path("index")).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        assert_reported(&t.verify(), &t.path("index"), 0);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
    });
}

#[test]
fn zeroed_checkpoint_loses_nothing() {
    both_stops(|t, stop| {
        t.write_at(&t.path("checkpoint"), 0, &[0u8; 4096]);
        assert_reported(&t.verify(), &t.path("checkpoint"), 0);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
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
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                served_as_is: None,
            },
        );
    });
}

#[test]
fn one_topic_directory_missing_stays_deleted_after_a_normal_stop_like_java() {
    // A topic whose consume queues were deleted (admin deleteTopic) is not brought back by a
    // clean restart: Java re-dispatches nothing at or below the other queues' max (J07's records
    // come after J04's). After an abnormal stop Java re-dispatches the newest file, so J04's
    // records there come back.
    for stop in [Stop::Normal, Stop::Abnormal] {
        let Some(t) = Twin::new() else { return };
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
