//! Recovery after damage: torn tail, bad CRC, truncated consume queue, missing index.

mod store_common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::{GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus};
use store_common::*;

/// Writes `n` messages to queue 0 of `T` and returns (config, record offsets, sizes).
fn fill(dir: &Path, n: usize) -> (MessageStoreConfig, Vec<(i64, i32)>) {
    let cfg = small_config(dir);
    let store = MessageStore::open(cfg.clone()).unwrap();
    let mut recs = Vec::new();
    for i in 0..n {
        let body = format!("message-{i}-{}", "y".repeat(300));
        let r = store
            .put_message(&msg(
                "T",
                0,
                body.as_bytes(),
                "tag",
                &format!("key{i}"),
                &format!("UNIQ{i:05}"),
            ))
            .wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK);
        let a = r.append.unwrap();
        recs.push((a.wrote_offset, a.wrote_bytes));
    }
    store.shutdown();
    (cfg, recs)
}

fn commitlog_file(dir: &Path, cfg: &MessageStoreConfig, offset: i64) -> (std::path::PathBuf, u64) {
    let size = cfg.mapped_file_size_commit_log as i64;
    let start = offset / size * size;
    (
        dir.join("commitlog").join(format!("{start:020}")),
        (offset - start) as u64,
    )
}

fn write_at(path: &Path, pos: u64, data: &[u8]) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, pos).unwrap();
}

fn check_all(store: &MessageStore, recs: &[(i64, i32)], n: usize) {
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("T", 0), n as i64);
    for (i, (off, _)) in recs.iter().take(n).enumerate() {
        let b = store.lookup_message_by_offset(*off).unwrap();
        let Ok(Decoded::Record(r)) = record::decode(&b, true) else {
            panic!("record {i}")
        };
        assert_eq!(r.queue_offset, i as i64);
        let g = store.get_message("T", 0, i as i64, 1, 1 << 20, None);
        assert_eq!(g.status, GetMessageStatus::FOUND, "queue offset {i}");
        assert_eq!(&g.messages[0][..], &b[..]);
        let q = store.query_message("T", &format!("UNIQ{i:05}"), 4, 0, i64::MAX);
        assert_eq!(q.phy_offsets, vec![*off], "index for {i}");
    }
}

#[test]
fn torn_tail_after_crash_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 400);
    let (last_off, last_size) = recs[399];
    let (path, pos) = commitlog_file(dir.path(), &cfg, last_off);
    write_at(
        &path,
        pos + last_size as u64 / 2,
        &vec![0u8; last_size as usize / 2],
    );
    std::fs::write(dir.path().join("abort"), b"1").unwrap();
    let store = MessageStore::open(cfg).unwrap();
    assert_eq!(store.max_phy_offset(), last_off);
    check_all(&store, &recs, 399);
    let r = store
        .put_message(&msg("T", 0, b"new", "tag", "k", "NEW"))
        .wait_blocking();
    assert_eq!(r.append.unwrap().logics_offset, 399);
}

#[test]
fn bad_crc_truncates_from_the_bad_record() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 400);
    let (off, _) = recs[390];
    let (path, pos) = commitlog_file(dir.path(), &cfg, off);
    write_at(&path, pos + 100, b"Z");
    let store = MessageStore::open(cfg.clone()).unwrap();
    assert_eq!(store.max_phy_offset(), off);
    check_all(&store, &recs, 390);
    // The stale records after the cut were zeroed: a short append followed by a restart must not
    // resurrect them.
    let r = store
        .put_message(&msg("T", 0, b"short", "tag", "k", "NEW"))
        .wait_blocking();
    assert_eq!(r.append.unwrap().logics_offset, 390);
    store.shutdown();
    drop(store);
    let store = MessageStore::open(cfg.clone()).unwrap();
    assert_eq!(store.max_offset_in_queue("T", 0), 391);
    store.shutdown();
    drop(store);
    let rep = rmqd::store::tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(rep.is_ok(), "{:?}", rep.problems);
    assert_eq!(rep.records, 391);
}

#[test]
fn truncated_consume_queue_is_rebuilt_after_abnormal_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 400);
    let cq_dir = dir.path().join("consumequeue/T/0");
    let mut files: Vec<_> = std::fs::read_dir(&cq_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let last = files.last().unwrap();
    // 400 units in files of 100 units: the last file holds units 300..399; drop the last 30.
    write_at(last, 70 * 20, &[0u8; 30 * 20]);
    std::fs::write(dir.path().join("abort"), b"1").unwrap();
    let store = MessageStore::open(cfg).unwrap();
    check_all(&store, &recs, 400);
}

#[test]
fn missing_index_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 300);
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    let store = MessageStore::open(cfg).unwrap();
    check_all(&store, &recs, 300);
}

#[test]
fn missing_consume_queue_dir_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 300);
    std::fs::remove_dir_all(dir.path().join("consumequeue")).unwrap();
    let store = MessageStore::open(cfg).unwrap();
    check_all(&store, &recs, 300);
}

#[test]
fn garbage_units_in_a_consume_queue_file_recovery_does_not_scan_never_panic_a_pull() {
    // 400 units = 4 files of 100; recovery (like Java's) scans from the third-from-last file, so
    // damage in file 0 stays: extreme offsets a pull must not overflow on.
    let dir = tempfile::tempdir().unwrap();
    let (cfg, recs) = fill(dir.path(), 400);
    let cq = dir.path().join("consumequeue/T/0/00000000000000000000");
    let f = OpenOptions::new().write(true).open(&cq).unwrap();
    f.write_all_at(&(i64::MAX - 10).to_be_bytes(), 5 * 20)
        .unwrap();
    f.write_all_at(&i64::MIN.to_be_bytes(), 6 * 20).unwrap();
    f.write_all_at(&(recs[7].0 + 1).to_be_bytes(), 7 * 20)
        .unwrap();
    drop(f);
    let rep = rmqd::store::tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    for unit in [5, 7] {
        assert!(
            rep.problems
                .iter()
                .any(|p| p.file == cq && p.offset == unit * 20),
            "unit {unit}: {:#?}",
            rep.problems
        );
    }
    let store = MessageStore::open(cfg).unwrap();
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("T", 0), 400);
    let mut served = Vec::new();
    let mut next = 0;
    while next < 400 {
        let g = store.get_message("T", 0, next, 32, 4 << 20, None);
        assert!(g.next_begin_offset > next, "a pull always moves on");
        for (b, qo) in g.messages.iter().zip(&g.queue_offsets) {
            let Ok(Decoded::Record(r)) = record::decode(b, true) else {
                panic!("{qo}: not a record")
            };
            assert_eq!((r.queue_offset, r.phys_offset), (*qo, recs[*qo as usize].0));
            served.push(*qo);
        }
        next = g.next_begin_offset;
    }
    let expect: Vec<i64> = (0..400).filter(|q| ![5, 6, 7].contains(q)).collect();
    assert_eq!(
        served, expect,
        "every intact unit is served, no damaged one"
    );
    assert!(!store.check_in_mem_by_consume_offset("T", 0, 6, 1));
    store.shutdown();
}

/// A store whose checkpoint never got a logics time (killed before its first consume-queue
/// flush) and whose queues are complete: recovery re-dispatches nothing, and the next flush
/// still records logicsMsgTimestamp, so the next abnormal recovery does not rescan everything.
#[test]
fn logics_timestamp_is_set_after_a_recovery_that_dispatched_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, _recs) = fill(dir.path(), 50);
    let ckpt = dir.path().join("checkpoint");
    let logics = |p: &Path| {
        let b = std::fs::read(p).unwrap();
        i64::from_be_bytes(b[8..16].try_into().unwrap())
    };
    assert!(logics(&ckpt) > 0);
    write_at(&ckpt, 8, &0i64.to_be_bytes());
    assert_eq!(logics(&ckpt), 0);
    let store = MessageStore::open(cfg).unwrap();
    store.flush_all().unwrap();
    store.shutdown();
    drop(store);
    assert!(
        logics(&ckpt) > 0,
        "logicsMsgTimestamp still 0 after recovery and a flush"
    );
}
