//! Corrupted twins of a Java-written store fixture, made at test time: a fresh copy of the
//! fixture, its records as Java wrote them (the ground truth), byte-level damage helpers, and the
//! check that a twin opened by rmqd's store ends as Java's recovery leaves it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmqd::store::{tools, GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus};

use super::java_fixture::{read_records, unpack_from, FixtureRecord};

/// A fresh copy of a Java store fixture and its records as Java wrote them.
pub struct Twin {
    pub dir: tempfile::TempDir,
    pub cfg: MessageStoreConfig,
    pub truth: Vec<FixtureRecord>,
}

impl Twin {
    /// Unpacks `fixture` (checkCRCOnRecover=true); None when the fixture was not generated.
    pub fn new(fixture: &str) -> Option<Twin> {
        let dir = tempfile::tempdir().unwrap();
        let Some(mut cfg) = unpack_from(fixture, dir.path()) else {
            eprintln!("fixture {fixture} missing; run scripts/store-fixtures");
            return None;
        };
        cfg.check_crc_on_recover = true;
        let truth = read_records(dir.path(), cfg.mapped_file_size_commit_log as usize);
        Some(Twin { dir, cfg, truth })
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    /// End of the last record Java wrote.
    pub fn end(&self) -> i64 {
        let last = self.truth.last().unwrap();
        last.phys + last.bytes.len() as i64
    }
    /// The commit-log file and in-file position of a physical offset.
    pub fn locate(&self, phys: i64) -> (PathBuf, u64) {
        let fs = self.cfg.mapped_file_size_commit_log as i64;
        let start = phys - phys % fs;
        (
            self.path(&format!("commitlog/{start:020}")),
            (phys - start) as u64,
        )
    }
    pub fn record(&self, topic: &str, queue_id: i32, queue_offset: i64) -> &FixtureRecord {
        self.truth
            .iter()
            .find(|r| r.topic == topic && r.queue_id == queue_id && r.queue_offset == queue_offset)
            .unwrap()
    }
    pub fn write_at(&self, file: &Path, pos: u64, bytes: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        f.write_all_at(bytes, pos).unwrap();
    }
    pub fn read_at(&self, file: &Path, pos: u64, len: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut b = vec![0u8; len];
        std::fs::File::open(file)
            .unwrap()
            .read_exact_at(&mut b, pos)
            .unwrap();
        b
    }
    /// Zeroes the commit log from `phys` to the end of the data (records not yet written back).
    pub fn zero_commit_log_from(&self, phys: i64) {
        for r in self.truth.iter().filter(|r| r.phys >= phys) {
            let (file, pos) = self.locate(r.phys);
            self.write_at(&file, pos, &vec![0u8; r.bytes.len()]);
        }
    }
    /// The only index file.
    pub fn index_file(&self) -> PathBuf {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.path("index"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v.pop().unwrap()
    }
    pub fn verify(&self) -> tools::Report {
        tools::verify(&self.cfg, &mut |_, _, _| {}).unwrap()
    }
}

/// Deterministic garbage (xorshift), never starting with a valid magic.
pub fn garbage(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

pub fn assert_reported(rep: &tools::Report, file: &Path, offset: u64) {
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
pub enum Stop {
    Normal,
    Abnormal,
}

/// What Java's recovery leaves.
#[derive(Default)]
pub struct Expect {
    /// Records below this commit-log offset survive.
    pub end: i64,
    /// A damaged record Java does not look at (it stays and is served with its damage).
    pub served_as_is: Option<i64>,
    /// (record offset, key) pairs the index cannot find (damage Java keeps after a normal start).
    pub unindexed: Vec<(i64, String)>,
    /// Records whose consume-queue unit is damaged and kept (as Java keeps it): not served, and a
    /// pull moves past them.
    pub unserved: Vec<i64>,
    /// Problems verify still reports after recovery: (file, byte offset), exactly what Java
    /// leaves (`u64::MAX`: any offset in that file); empty = verify comes out clean.
    pub left: Vec<(PathBuf, u64)>,
}

impl Expect {
    /// Everything below `end` survives intact; the store verifies clean afterwards.
    pub fn end(end: i64) -> Expect {
        Expect {
            end,
            ..Expect::default()
        }
    }
}

/// Opens the twin, checks every surviving record by queue offset and by key, every lost one
/// gone, one new append at the truncation point, a clean shutdown and the verify afterwards.
pub fn open_and_check(t: &Twin, stop: Stop, want: Expect) {
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
    let mut per_queue = HashMap::<(&str, i32), i64>::new();
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
        if want.unserved.contains(&r.phys) {
            // A pull from it or from before it skips it and serves the records around it.
            for from in [qo, (qo - 1).max(0)] {
                let g = store.get_message(topic, q, from, 4, 4 << 20, None);
                assert!(
                    g.next_begin_offset > qo,
                    "{stop:?}: the pull moves past {qo}"
                );
                assert!(
                    !g.queue_offsets.contains(&qo),
                    "{stop:?}: {topic}/{q}@{qo} served"
                );
                for (b, o) in g.messages.iter().zip(&g.queue_offsets) {
                    assert_eq!(&b[..], &t.record(topic, q, *o).bytes[..]);
                }
            }
            continue;
        }
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
            let hits = store.query_message(topic, k, 64, 0, i64::MAX);
            if want.unindexed.contains(&(r.phys, k.clone())) {
                continue;
            }
            assert!(
                hits.phy_offsets.contains(&r.phys),
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
    let topic = t.truth[0].topic.clone();
    let next = per_queue.get(&(topic.as_str(), 0)).copied().unwrap_or(0);
    let mut m = super::msg(&topic, 0, b"after recovery", "T", "k", "U1");
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
    let allowed = |f: &PathBuf, o: u64| {
        want.left
            .iter()
            .any(|(lf, lo)| lf == f && (*lo == o || *lo == u64::MAX))
    };
    for (file, off) in &want.left {
        assert!(
            after
                .problems
                .iter()
                .any(|p| &p.file == file && (p.offset == *off || *off == u64::MAX)),
            "{stop:?}: verify after recovery still reports {}@{off}: {:#?}",
            file.display(),
            after.problems
        );
    }
    if want.served_as_is.is_some() {
        // verify's record walk stops at the damaged record, so everything after it is reported.
        assert!(
            !after.is_ok(),
            "{stop:?}: the damaged record is still reported"
        );
        return;
    }
    let extra: Vec<_> = after
        .problems
        .iter()
        .filter(|p| !allowed(&p.file, p.offset))
        .collect();
    assert!(
        extra.is_empty(),
        "{stop:?}: verify after recovery: {extra:#?}"
    );
}

/// Runs `case` on a fresh twin of `fixture` for both stop modes.
pub fn both_stops(fixture: &str, case: impl Fn(&Twin, Stop)) {
    for stop in [Stop::Normal, Stop::Abnormal] {
        let Some(t) = Twin::new(fixture) else { return };
        case(&t, stop);
    }
}
