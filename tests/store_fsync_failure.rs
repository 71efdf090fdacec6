//! A failed fsync on a real file system, against the real `rmqd` binary over TCP. The store sits
//! on ext4 on a loop device whose backing file lives on a small tmpfs: writes land in the page
//! cache, and once the tmpfs is full writeback fails and msync returns EIO, as on an exhausted
//! thin volume or cloud disk. The broker then poisons its commit log: no send gets SEND_OK any
//! more (the ones waiting for that fsync included: SERVICE_NOT_AVAILABLE with a remark telling
//! the operator to fix the disk and restart, which the Java client treats as a failure and
//! retries elsewhere, where FLUSH_DISK_TIMEOUT would be a SendResult; a put that needs a new file
//! on a file system already read-only gets Java's CREATE_MAPPED_FILE_FAILED), reads keep working,
//! the log and GET_BROKER_RUNTIME_INFO say what happened once, the broker neither spins nor
//! spams, and after a restart with the space back everything acknowledged is there.
//!
//! Needs root, loop devices and mkfs.ext4; skipped with the reason printed otherwise.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::process::{is_root, pull_all, pull_readable, run, runtime_info, send, RmqdProcess};
use support::{create_topic, request, RawClient};

use rmqd::remoting::RequestCode;

/// ext4 on a loop device backed by a sparse 2 GiB file on a tmpfs of `backing` size; every
/// piece set up is torn down on drop, panic or not. The file system is far larger than the
/// backing so the backing runs out first: on a 256 MiB one, ASYNC_FLUSH page-cache writes (one
/// commit-log file flushed per interval, as Java) passed the 90 % disk-full watermark before the
/// first failing flush, and the broker refused for a full disk instead.
///
/// Mounted `dioread_lock`: with ext4's default (`dioread_nolock`) writeback into preallocated
/// (unwritten) blocks converts them to written only after the data I/O, and when that conversion
/// fails on the exhausted device the kernel logs "failed to convert unwritten extents to written
/// extents -- potential data loss!" yet fsync still returns success: the bytes read back as zeros
/// after a remount. CI lost the tail of one acknowledged record that way (fsync OK, then the page
/// read as zeros). With `dioread_lock` the conversion is journaled with the block mapping before
/// the I/O, so a failure reaches fsync as EIO; what is tested is the broker, not that ext4 path.
struct LoopExt4 {
    base: PathBuf,
    backing: PathBuf,
    mnt: PathBuf,
    tmpfs_mounted: bool,
    dev: Option<String>,
    ext4_mounted: bool,
}

impl LoopExt4 {
    fn setup(backing_size: &str) -> Result<Self, String> {
        if !is_root() {
            return Err("needs root to mount file systems".into());
        }
        let base = tempfile::tempdir().unwrap().keep();
        let mut fs = LoopExt4 {
            backing: base.join("backing"),
            mnt: base.join("mnt"),
            base,
            tmpfs_mounted: false,
            dev: None,
            ext4_mounted: false,
        };
        std::fs::create_dir_all(&fs.backing).unwrap();
        std::fs::create_dir_all(&fs.mnt).unwrap();
        let size = format!("size={backing_size}");
        run(
            "mount",
            &["-t", "tmpfs", "-o", &size, "tmpfs", path(&fs.backing)],
        )?;
        fs.tmpfs_mounted = true;
        let file = fs.backing.join("disk.img");
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(2 << 30))
            .map_err(|e| e.to_string())?;
        fs.dev = Some(run("losetup", &["-f", "--show", path(&file)])?);
        let dev = fs.dev.clone().unwrap();
        let lazy = "lazy_itable_init=1,lazy_journal_init=1";
        run("mkfs.ext4", &["-q", "-E", lazy, &dev])?;
        run("mount", &["-o", MOUNT_OPTS, &dev, path(&fs.mnt)])?;
        fs.ext4_mounted = true;
        Ok(fs)
    }

    /// Gives the backing tmpfs room again and mounts the ext4 afresh (its journal aborted when
    /// writeback failed; mounting replays it).
    fn restore_space(&mut self, backing_size: &str) {
        let size = format!("remount,size={backing_size}");
        run("mount", &["-o", &size, path(&self.backing)]).unwrap();
        run("umount", &[path(&self.mnt)]).unwrap();
        self.ext4_mounted = false;
        let dev = self.dev.clone().unwrap();
        if run("mount", &["-o", MOUNT_OPTS, &dev, path(&self.mnt)]).is_err() {
            let _ = run("e2fsck", &["-f", "-y", &dev]);
            run("mount", &["-o", MOUNT_OPTS, &dev, path(&self.mnt)]).unwrap();
        }
        self.ext4_mounted = true;
    }
}

/// See [`LoopExt4`] for why not ext4's default.
const MOUNT_OPTS: &str = "dioread_lock";

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        if self.ext4_mounted && run("umount", &[path(&self.mnt)]).is_err() {
            let _ = run("umount", &["-l", path(&self.mnt)]);
        }
        if let Some(dev) = &self.dev {
            let _ = run("losetup", &["-d", dev]);
        }
        if self.tmpfs_mounted && run("umount", &[path(&self.backing)]).is_err() {
            let _ = run("umount", &["-l", path(&self.backing)]);
        }
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

const TOPIC: &str = "Fsync";
const PRODUCERS: i32 = 4;
const BODY: usize = 16 * 1024;

fn body(producer: i32, seq: usize) -> Vec<u8> {
    let mut b = format!("p{producer}-{seq:08}-").into_bytes();
    b.resize(BODY, b'a' + (seq % 26) as u8);
    b
}

/// What one producer saw.
#[derive(Default)]
struct Seen {
    acked: usize,
    /// SEND_OK answers to sends begun after some producer had seen a refusal.
    acked_after_refusal: usize,
    refusals: Vec<(i32, String)>,
    /// Commit-log offset of each acknowledged message, from its offset message id.
    acked_at: Vec<i64>,
}

/// The commit-log offset in an offset message id (store host, then the offset: its last 16 hex
/// digits).
fn offset_of(msg_id: &str) -> i64 {
    i64::from_str_radix(&msg_id[msg_id.len().saturating_sub(16)..], 16)
        .unwrap_or_else(|e| panic!("offset message id {msg_id:?}: {e}"))
}

/// `PRODUCERS` threads send to their own queue until each has seen 3 refusals; panics if no
/// refusal comes within `limit`.
fn send_until_refused(addr: std::net::SocketAddr, limit: Duration) -> (Vec<Seen>, Duration) {
    let refused = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (refused, total) = (refused.clone(), total.clone());
            std::thread::spawn(move || {
                let mut c = RawClient::connect(addr);
                let mut seen = Seen::default();
                for seq in 0.. {
                    assert!(
                        t0.elapsed() < limit,
                        "no refusal after {} sends in {limit:?}: the fsync never failed",
                        total.load(Ordering::Relaxed)
                    );
                    let before = refused.load(Ordering::Acquire);
                    let r = send(&mut c, TOPIC, p, &body(p, seq), &format!("U{p}-{seq}"));
                    total.fetch_add(1, Ordering::Relaxed);
                    if r.code == 0 {
                        assert_eq!(
                            seen.refusals.len(),
                            0,
                            "SEND_OK after this producer's refusal"
                        );
                        seen.acked += 1;
                        seen.acked_at
                            .push(offset_of(r.ext("msgId").unwrap_or_default()));
                        seen.acked_after_refusal += usize::from(before);
                    } else {
                        refused.store(true, Ordering::Release);
                        seen.refusals.push((r.code, r.remark.unwrap_or_default()));
                        if seen.refusals.len() == 3 {
                            return seen;
                        }
                    }
                }
                unreachable!()
            })
        })
        .collect();
    let seen = threads.into_iter().map(|t| t.join().unwrap()).collect();
    (seen, t0.elapsed())
}

const POISON_REMARK: &str = "fsync";

/// Java's answer to a put whose commit-log file cannot be created (CREATE_MAPPED_FILE_FAILED).
const CREATE_FAILED_REMARK: &str = "create mapped file failed";

/// Every refusal is the poison, or, when the file system went read-only before a commit-log
/// fsync failed (its journal aborts on the first failed metadata write, which may be an index or
/// consume-queue file's), Java's answer for a commit-log file that cannot be created.
fn assert_refusals_are_disk_faults(seen: &[Seen]) {
    for (p, s) in seen.iter().enumerate() {
        for (code, remark) in &s.refusals {
            if *code == 1 {
                assert!(
                    remark.contains(CREATE_FAILED_REMARK),
                    "producer {p}: refused with {code} {remark:?}"
                );
                continue;
            }
            assert_eq!(*code, 14, "producer {p}: refused with {code} {remark:?}");
            assert!(
                remark.contains(POISON_REMARK) && remark.contains("restart"),
                "producer {p}: the remark does not tell the operator what to do: {remark:?}"
            );
        }
    }
}

/// Waits for the commit log to be poisoned. Refusals for a file that cannot be created may come
/// first; the flush service meets the failed disk at its next pass (flushIntervalCommitLog,
/// 500 ms, under ASYNC_FLUSH; at once under SYNC_FLUSH), so 5 s is ten passes.
fn wait_poisoned(c: &mut RawClient) {
    let t0 = Instant::now();
    while !runtime_info(c)
        .get("rmqdCommitLogFsyncFailed")
        .is_some_and(|v| v.contains("commitlog"))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the commit log was not poisoned 5 s after writes were refused"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The poisoned broker stays up, idles (no spin, no log spam) and still refuses writes.
fn assert_poisoned_and_quiet(broker: &mut RmqdProcess, c: &mut RawClient) {
    assert!(broker.exited().is_none(), "the broker died");
    let info = runtime_info(c);
    let failed = info
        .get("rmqdCommitLogFsyncFailed")
        .cloned()
        .unwrap_or_default();
    assert!(
        failed.contains("commitlog"),
        "runtime info does not name the failed fsync: {failed:?}"
    );
    let log = broker.log_text();
    assert!(
        log.contains("fsync of the commit log failed"),
        "the log does not say the fsync failed:\n{log}"
    );
    let (lines, ticks) = (log.lines().count(), broker.cpu_ticks());
    std::thread::sleep(Duration::from_secs(2));
    let cpu = broker.cpu_ticks() - ticks;
    let more = broker.log_text().lines().count() - lines;
    println!("poisoned broker over 2 s: {cpu} CPU ticks, {more} log lines");
    assert!(cpu < 40, "a poisoned broker used {cpu} ticks of CPU in 2 s");
    assert!(more <= 2, "a poisoned broker logged {more} lines in 2 s");
    let r = send(c, TOPIC, 0, b"late", "late");
    assert_eq!(r.code, 14, "a send to a poisoned broker: {:?}", r.remark);
}

/// Pulls every queue; each holds a prefix of what its producer sent, at least the first `min[p]`.
fn assert_queues_hold_prefixes(c: &mut RawClient, min: &[usize]) -> Vec<usize> {
    (0..PRODUCERS)
        .map(|p| {
            let got = pull_all(c, TOPIC, p);
            assert!(
                got.len() >= min[p as usize],
                "queue {p}: {} of {} acknowledged messages readable",
                got.len(),
                min[p as usize]
            );
            for (seq, b) in got.iter().enumerate() {
                assert!(*b == body(p, seq), "queue {p} offset {seq}: another body");
            }
            got.len()
        })
        .collect()
}

/// Where the unflushed part of the commit log begins at the latest: the start of the file whose
/// fsync failed (the flush goes file by file, so every file before it was fsynced).
fn unflushed_from(c: &mut RawClient) -> i64 {
    let failed = runtime_info(c)
        .get("rmqdCommitLogFsyncFailed")
        .cloned()
        .unwrap_or_default();
    let name = failed
        .split("commitlog/")
        .nth(1)
        .map(|rest| &rest[..rest.len().min(20)])
        .unwrap_or_default();
    name.parse()
        .unwrap_or_else(|_| panic!("no commit-log file named in {failed:?}"))
}

/// Under ASYNC_FLUSH with the commit log poisoned: every queue has a unit for each acknowledged
/// message and every record served is that producer's message at that offset. Not all of them
/// need be readable: past the flush, once writeback of a page failed the kernel holds the only
/// copy in a page it marks clean and may drop at any time (memory pressure; `drop_caches` at
/// will), and the file then reads zeros there; the same goes for consume-queue pages whose flush
/// failed. Returns how many acknowledged messages could not be read.
fn assert_served_messages_right(c: &mut RawClient, acked: &[usize]) -> usize {
    let mut unreadable = 0;
    for p in 0..PRODUCERS {
        let q = p.to_string();
        let max = c.call(&request(
            RequestCode::GET_MAX_OFFSET,
            &[("topic", TOPIC), ("queueId", &q)],
        ));
        let acked = acked[p as usize];
        assert_eq!(
            max.ext("offset"),
            Some(acked.to_string().as_str()),
            "queue {p}: units for the {acked} acknowledged messages"
        );
        let got = pull_readable(c, TOPIC, p);
        for rec in &got {
            let qo = rec.queue_offset as usize;
            assert!(qo < acked, "queue {p} offset {qo}: never acknowledged");
            assert!(
                rec.body == body(p, qo),
                "queue {p} offset {qo}: another body"
            );
        }
        unreadable += acked - got.len();
    }
    unreadable
}

fn store_conf(flush: &str) -> String {
    format!(
        "flushDiskType={flush}\nmappedFileSizeCommitLog=4194304\nmappedFileSizeConsumeQueue=60000\n\
         maxHashSlotNum=1000\nmaxIndexNum=4000\n"
    )
}

fn setup_or_skip(name: &str) -> Option<LoopExt4> {
    match LoopExt4::setup("24m") {
        Ok(fs) => Some(fs),
        Err(why) => {
            println!("SKIPPED {name}: {why}");
            None
        }
    }
}

#[test]
fn sync_flush_fsync_failure_poisons_refuses_and_loses_nothing_acknowledged() {
    let Some(mut fs) = setup_or_skip("sync_flush_fsync_failure") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let store = fs.mnt.join("store");
    let conf = store_conf("SYNC_FLUSH");
    let mut broker = RmqdProcess::start(work.path(), &store, &conf);
    let mut c = RawClient::connect(broker.addr);
    create_topic(&mut c, TOPIC, PRODUCERS);

    let (seen, took) = send_until_refused(broker.addr, Duration::from_secs(30));
    let acked: Vec<usize> = seen.iter().map(|s| s.acked).collect();
    println!(
        "SYNC_FLUSH: {} acknowledged ({} MiB) before the fsync failed, after {took:?}; refusals {:?}",
        acked.iter().sum::<usize>(),
        (acked.iter().sum::<usize>() * BODY) >> 20,
        seen.iter().map(|s| s.refusals[0].0).collect::<Vec<_>>()
    );
    let late: usize = seen.iter().map(|s| s.acked_after_refusal).sum();
    assert_eq!(late, 0, "sends begun after a refusal got SEND_OK");
    assert_refusals_are_disk_faults(&seen);
    wait_poisoned(&mut c);
    assert_poisoned_and_quiet(&mut broker, &mut c);
    // reads keep working: exactly what was acknowledged is visible (dispatch reads only what
    // is flushed under SYNC_FLUSH)
    let visible = assert_queues_hold_prefixes(&mut c, &acked);
    assert_eq!(
        visible, acked,
        "visible messages differ from acknowledged ones"
    );

    broker.kill9();
    fs.restore_space("1g");
    let mut broker = RmqdProcess::start(work.path(), &store, &conf);
    let mut c = RawClient::connect(broker.addr);
    let recovered = assert_queues_hold_prefixes(&mut c, &acked);
    println!("after restart: {recovered:?} recovered of {acked:?} acknowledged");
    let r = send(&mut c, TOPIC, 0, &body(0, recovered[0]), "after-restart");
    assert_eq!(r.code, 0, "writes after restart: {:?}", r.remark);
    assert!(broker.exited().is_none());
}

#[test]
fn async_flush_fsync_failure_poisons_in_the_background_and_refuses_writes() {
    let Some(mut fs) = setup_or_skip("async_flush_fsync_failure") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let store = fs.mnt.join("store");
    let conf = store_conf("ASYNC_FLUSH");
    let mut broker = RmqdProcess::start(work.path(), &store, &conf);
    let mut c = RawClient::connect(broker.addr);
    create_topic(&mut c, TOPIC, PRODUCERS);

    let (seen, took) = send_until_refused(broker.addr, Duration::from_secs(30));
    let acked: Vec<usize> = seen.iter().map(|s| s.acked).collect();
    let late: usize = seen.iter().map(|s| s.acked_after_refusal).sum();
    assert_eq!(late, 0, "sends begun after a refusal got SEND_OK");
    assert_refusals_are_disk_faults(&seen);
    wait_poisoned(&mut c);
    assert_poisoned_and_quiet(&mut broker, &mut c);
    // reads keep working: under ASYNC_FLUSH dispatch does not wait for the flush
    let unreadable = assert_served_messages_right(&mut c, &acked);
    // every message in a file before the one whose fsync failed was fsynced (the flush goes
    // file by file, and a record never spans two files)
    let unflushed = unflushed_from(&mut c);
    let durable: Vec<usize> = seen
        .iter()
        .map(|s| s.acked_at.iter().filter(|&&at| at < unflushed).count())
        .collect();

    broker.kill9();
    fs.restore_space("1g");
    let broker = RmqdProcess::start(work.path(), &store, &conf);
    let mut c = RawClient::connect(broker.addr);
    // ASYNC_FLUSH acknowledges before the flush: what the failed flush held may be lost, the
    // rest must be intact, in order, with nothing foreign
    let recovered = assert_queues_hold_prefixes(&mut c, &durable);
    let lost: usize = acked
        .iter()
        .zip(&recovered)
        .map(|(a, r)| a.saturating_sub(*r))
        .sum();
    println!(
        "ASYNC_FLUSH: {} acknowledged in {took:?} before writes were refused; after restart \
         {recovered:?} of {acked:?} recovered ({lost} acknowledged but never flushed; {durable:?} \
         fsynced); {unreadable} unreadable while poisoned",
        acked.iter().sum::<usize>()
    );
    let r = send(&mut c, TOPIC, 0, &body(0, recovered[0]), "after-restart");
    assert_eq!(r.code, 0, "writes after restart: {:?}", r.remark);
}
