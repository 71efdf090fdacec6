//! Garbage inside the consume queues and the index of the Java-written fixtures (clean stop and
//! SIGKILL): a unit pointing past the commit-log end, a unit with a wrong size, a zeroed unit in
//! the middle of a queue; a bad slot value, a broken (cyclic) chain and wrong header counts in the
//! index file. Reads never panic, hang or return bytes that are not the record asked for; verify
//! names each problem's file and byte offset; recovery ends where Java's does, or rebuilds from
//! the commit log what Java loses (a superset Java reads back unchanged).
//!
//! Java's deciding methods: `ConsumeQueue.recover` (stops at the first unit with phyOffset < 0 or
//! size <= 0), `ConsumeQueue.truncateDirtyLogicFiles` (runs when some queue's max physical offset
//! reaches the recovered end, which holds whenever the newest record's unit exists; scans the last
//! file and cuts at the first unit whose phyOffset >= the end), `putMessagePositionInfo` (recovery
//! re-dispatch skips a record whose end is <= the queue's max physical offset),
//! `IndexService.load` (after an abnormal stop, index files newer than the checkpoint's
//! indexMsgTimestamp, 0 in both fixtures, are deleted and rebuilt) and `IndexFile.selectPhyOffset`.
//! The consume-queue outcomes were confirmed with the real Java 5.3.3 broker on the same twins
//! (`scripts/store-twin-oracle`, per-queue max offsets after recovery): unit past the end -> queue
//! ends at 5 in all three cases; zeroed unit -> 5 (clean, normal), restored (clean + abort, and
//! the SIGKILL fixture); wrong size -> kept, queue intact; first unit zeroed -> queue length kept.

mod store_common;

use std::path::PathBuf;

use rmqd::store::index::{key_hash, INDEX_HEADER_SIZE};
use rmqd::store::MessageStore;
use store_common::java_fixture::{CLEAN, KILLED};
use store_common::twin::{assert_reported, open_and_check, Expect, Stop, Twin};

/// Each fixture with the stops it is opened after (the SIGKILL one always has `abort`).
fn cases(case: impl Fn(&Twin, Stop)) {
    for (fixture, stop) in [
        (CLEAN, Stop::Normal),
        (CLEAN, Stop::Abnormal),
        (KILLED, Stop::Abnormal),
    ] {
        let Some(t) = Twin::new(fixture) else { return };
        case(&t, stop);
    }
}

/// Queue 0 of the fixture's J01 topic and its record at queue offset 5 (J01 topics hold 12+
/// messages per queue, so units follow it).
fn j01_q0(t: &Twin) -> (String, PathBuf, &store_common::java_fixture::FixtureRecord) {
    let topic = t.truth[0].topic.clone();
    assert!(topic.starts_with("J01_"));
    let file = t.path(&format!("consumequeue/{topic}/0/00000000000000000000"));
    let r = t.record(&topic, 0, 5);
    (topic, file, r)
}

#[test]
fn cq_unit_pointing_past_the_commit_log_end_is_rebuilt() {
    // Java keeps the unit on recover (it is "valid"), then truncateDirtyLogicFiles cuts queue 0
    // at it: units 5.. are lost in every mode (the abnormal re-dispatch ran before the cut and
    // skipped them as repeats). rmqd cuts there too, then re-dispatches from the last good unit,
    // restoring the queue as Java wrote it.
    cases(|t, stop| {
        let (_, file, _) = j01_q0(t);
        t.write_at(&file, 100, &(t.end() + 10_000_000).to_be_bytes());
        assert_reported(&t.verify(), &file, 100);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn cq_unit_with_a_wrong_size_is_skipped_by_pulls_and_kept_like_java() {
    // Java keeps the unit (recover and truncate only look at phyOffset and size > 0) and would
    // serve `size` bytes of the record; rmqd keeps it too but a pull skips it (the record is
    // not what the unit claims) and moves on; verify still names it.
    cases(|t, stop| {
        let (_, file, r) = j01_q0(t);
        t.write_at(&file, 108, &(r.bytes.len() as i32 - 7).to_be_bytes());
        assert_reported(&t.verify(), &file, 100);
        open_and_check(
            t,
            stop,
            Expect {
                end: t.end(),
                unserved: vec![r.phys],
                left: vec![(file.clone(), 100)],
                ..Expect::default()
            },
        );
    });
}

#[test]
fn cq_unit_zeroed_in_the_middle_is_rebuilt() {
    // Java's recover ends the queue at the zeroed unit; units 6.. are lost unless the abnormal
    // re-dispatch covers their records (the SIGKILL fixture, scanned from file 0, gets them
    // back). rmqd re-dispatches from the last good unit in every mode.
    cases(|t, stop| {
        let (_, file, _) = j01_q0(t);
        t.write_at(&file, 100, &[0u8; 20]);
        assert_reported(&t.verify(), &file, 100);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

#[test]
fn cq_first_unit_zeroed_is_rebuilt() {
    // Java's recover ends the queue at 0; after a normal stop truncateDirtyLogicFiles then keeps
    // the last file's first unit unchecked (phyOffset 0 < the end) and every valid unit after it,
    // so the queue keeps its length with a junk unit 0 (phyOffset 0, size 0); after the SIGKILL
    // the re-dispatch from file 0 rewrites it. rmqd re-dispatches from the commit log's start.
    cases(|t, stop| {
        let (_, file, _) = j01_q0(t);
        t.write_at(&file, 0, &[0u8; 20]);
        assert_reported(&t.verify(), &file, 0);
        open_and_check(t, stop, Expect::end(t.end()));
    });
}

/// Java's `IndexFile.selectPhyOffset` over the damaged file's bytes (a walk of at most indexCount
/// steps, where Java would loop forever on a cycle): the offsets a key's hash finds.
fn java_select(t: &Twin, hash: i32) -> Vec<i64> {
    let b = std::fs::read(t.index_file()).unwrap();
    let slots = t.cfg.max_hash_slot_num as usize;
    let i32_at = |p: usize| i32::from_be_bytes(b[p..p + 4].try_into().unwrap());
    let count = i32_at(36).max(1);
    let begin_ts = i64::from_be_bytes(b[0..8].try_into().unwrap());
    let mut out = Vec::new();
    let mut cur = i32_at(INDEX_HEADER_SIZE + (hash as usize % slots) * 4);
    if cur <= 0 || cur > count || count <= 1 {
        return out;
    }
    for _ in 0..count {
        let ep = INDEX_HEADER_SIZE + slots * 4 + cur as usize * 20;
        let phy = i64::from_be_bytes(b[ep + 4..ep + 12].try_into().unwrap());
        let diff = i32_at(ep + 12);
        let prev = i32_at(ep + 16);
        if diff < 0 {
            break;
        }
        if i32_at(ep) == hash && begin_ts + diff as i64 * 1000 >= 0 {
            out.push(phy);
        }
        if prev <= 0 || prev > count || prev == cur {
            break;
        }
        cur = prev;
    }
    out
}

/// The (record, key) pairs Java's walk no longer finds in the damaged index.
fn unfindable(t: &Twin) -> Vec<(i64, String)> {
    let mut v = Vec::new();
    for r in &t.truth {
        for k in &r.keys {
            let hash = key_hash(r.topic.as_bytes(), k.as_bytes());
            if !java_select(t, hash).contains(&r.phys) {
                v.push((r.phys, k.clone()));
            }
        }
    }
    v
}

/// After a normal stop Java keeps the damaged index as it is (keys it cannot find stay lost,
/// verify keeps naming the file); after an abnormal one both fixtures' checkpoints make
/// IndexService.load delete it, and the re-dispatch rebuilds every key.
fn index_outcome(t: &Twin, stop: Stop) -> Expect {
    if stop == Stop::Abnormal {
        return Expect::end(t.end());
    }
    let lost = unfindable(t);
    assert!(!lost.is_empty(), "the damage must cost Java some keys");
    Expect {
        end: t.end(),
        unindexed: lost,
        left: vec![(t.index_file(), u64::MAX)],
        ..Expect::default()
    }
}

/// Slot of the first record's UNIQ_KEY.
fn first_key_slot(t: &Twin) -> usize {
    let r = &t.truth[0];
    key_hash(r.topic.as_bytes(), r.keys[0].as_bytes()) as usize % t.cfg.max_hash_slot_num as usize
}

#[test]
fn index_slot_with_a_bad_value_is_reported_and_its_keys_lost_like_java() {
    cases(|t, stop| {
        let s = first_key_slot(t);
        let pos = (INDEX_HEADER_SIZE + s * 4) as u64;
        t.write_at(&t.index_file(), pos, &0x7fff_0000_i32.to_be_bytes());
        assert_reported(&t.verify(), &t.index_file(), pos);
        let want = index_outcome(t, stop);
        open_and_check(t, stop, want);
    });
}

#[test]
fn index_chain_pointing_forward_does_not_hang_a_query() {
    cases(|t, stop| {
        // A slot whose chain has at least three entries: head h -> p -> older; p now points back
        // to h. Java's walk for a key of that slot that is not there loops forever.
        let file = t.index_file();
        let slots = t.cfg.max_hash_slot_num as usize;
        let base = (INDEX_HEADER_SIZE + slots * 4) as u64;
        let i32_at = |p: u64| i32::from_be_bytes(t.read_at(&file, p, 4).try_into().unwrap());
        let prev_of = |n: i32| i32_at(base + n as u64 * 20 + 16);
        let (s, h, p) = (0..slots)
            .map(|s| (s, i32_at((INDEX_HEADER_SIZE + s * 4) as u64)))
            .filter(|&(_, h)| h > 0)
            .map(|(s, h)| (s, h, prev_of(h)))
            .find(|&(_, _, p)| p > 0 && prev_of(p) > 0)
            .expect("a chain of three entries");
        let at = base + p as u64 * 20;
        t.write_at(&file, at + 16, &h.to_be_bytes());
        assert_reported(&t.verify(), &file, at);
        let topic = t.truth[0].topic.clone();
        let absent = (0..)
            .map(|i| format!("absent-{i}"))
            .find(|k| key_hash(topic.as_bytes(), k.as_bytes()) as usize % slots == s)
            .unwrap();
        if stop == Stop::Normal {
            let store = MessageStore::open(t.cfg.clone()).unwrap();
            let q = store.query_message(&topic, &absent, 64, 0, i64::MAX);
            assert!(q.phy_offsets.is_empty());
            store.shutdown();
        }
        let want = index_outcome(t, stop);
        open_and_check(t, stop, want);
    });
}

#[test]
fn index_header_counts_wrong_are_reported() {
    cases(|t, stop| {
        let file = t.index_file();
        let hdr = t.read_at(&file, 32, 8);
        let count = i32::from_be_bytes(hdr[4..8].try_into().unwrap());
        t.write_at(&file, 32, &0_i32.to_be_bytes());
        t.write_at(&file, 36, &(count / 2).to_be_bytes());
        let rep = t.verify();
        assert_reported(&rep, &file, 32);
        assert_reported(&rep, &file, 36);
        let want = index_outcome(t, stop);
        open_and_check(t, stop, want);
    });
}
