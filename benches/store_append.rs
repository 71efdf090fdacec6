//! Store throughput: append (ASYNC, 1 and 8 writers, 128 B / 1 KiB / 16 KiB), SYNC_FLUSH group
//! commit with 64 writers, recovery scan with CRC, dispatch rebuild. A plain timing main
//! (`cargo bench --bench store_append`); set `STORE_BENCH_DIR` to bench on another disk.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rmqd::store::commitlog::{recovery, CommitLog};
use rmqd::store::{
    FlushDiskType, MessageInput, MessageStore, MessageStoreConfig, PutMessageStatus,
};

fn config(dir: &std::path::Path) -> MessageStoreConfig {
    let mut c = MessageStoreConfig::with_root(dir);
    c.mapped_file_size_commit_log = 256 * 1024 * 1024;
    c.max_hash_slot_num = 500_000;
    c.max_index_num = 2_000_000;
    c
}

fn message(size: usize, qid: i32) -> MessageInput {
    let born: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let store: SocketAddr = "10.0.0.2:10911".parse().unwrap();
    MessageInput {
        topic: "BenchTopic".into(),
        queue_id: qid,
        flag: 0,
        sys_flag: 0,
        body: Bytes::from(vec![b'x'; size]),
        properties: "TAGS\u{1}TagA\u{2}UNIQ_KEY\u{1}0A0000010001000000000000000000\u{2}WAIT\u{1}true\u{2}CLUSTER\u{1}DefaultCluster\u{2}".into(),
        tags_code: 0,
        born_timestamp: 1,
        born_host: born,
        store_host: store,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    }
}

fn tempdir() -> tempfile::TempDir {
    match std::env::var("STORE_BENCH_DIR") {
        Ok(d) => tempfile::tempdir_in(d).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

/// CPU time of the calling thread (s): the machine is shared, so wall-clock rates understate
/// what the put path costs; appends per writer-CPU-second do not.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the provided timespec only.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

static CPU_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static TIMEOUTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static TOTAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Appends for `dur` from `writers` threads; returns appends/s.
fn append(store: &Arc<MessageStore>, size: usize, writers: usize, dur: Duration) -> f64 {
    CPU_NANOS.store(0, std::sync::atomic::Ordering::Relaxed);
    let t0 = Instant::now();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let s = store.clone();
            std::thread::spawn(move || {
                let m = message(size, w as i32);
                let cpu0 = thread_cpu_secs();
                let mut n = 0u64;
                while t0.elapsed() < dur {
                    for _ in 0..16 {
                        let h = s.put_message(&m);
                        let st = if h.needs_flush_wait() {
                            h.wait_blocking().status
                        } else {
                            h.result().status
                        };
                        if st == PutMessageStatus::FLUSH_DISK_TIMEOUT {
                            TIMEOUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        } else {
                            assert_eq!(st, PutMessageStatus::PUT_OK);
                        }
                    }
                    n += 16;
                }
                let cpu = ((thread_cpu_secs() - cpu0) * 1e9) as u64;
                CPU_NANOS.fetch_add(cpu, std::sync::atomic::Ordering::Relaxed);
                n
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    TOTAL.store(total, std::sync::atomic::Ordering::Relaxed);
    total as f64 / t0.elapsed().as_secs_f64()
}

fn async_case(size: usize, writers: usize) {
    let dir = tempdir();
    let mut cfg = config(dir.path());
    cfg.message_index_enable = false;
    let store = Arc::new(MessageStore::open(cfg).unwrap());
    append(&store, size, writers, Duration::from_millis(300)); // warm
    let rate = append(&store, size, writers, Duration::from_secs(2));
    let cpu = CPU_NANOS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
    let per_cpu = TOTAL.load(std::sync::atomic::Ordering::Relaxed) as f64 / cpu.max(1e-9);
    println!(
        "ASYNC append {size:>6} B x {writers} writers: {rate:>10.0} appends/s {:>7.1} MB/s ({per_cpu:.0} appends per writer-CPU-second)",
        rate * size as f64 / 1e6
    );
}

fn sync_case(writers: usize) {
    let dir = tempdir();
    let mut cfg = config(dir.path());
    cfg.flush_disk_type = FlushDiskType::SyncFlush;
    let store = Arc::new(MessageStore::open(cfg).unwrap());
    let before = store.runtime_info();
    let rate = append(&store, 1024, writers, Duration::from_secs(3));
    let after = store.runtime_info();
    let flushes = (after.group_commit_flushes - before.group_commit_flushes).max(1);
    let reqs = after.group_commit_requests - before.group_commit_requests;
    let timeouts = TIMEOUTS.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "SYNC_FLUSH 1 KiB x {writers} writers: {rate:>10.0} appends/s, {:.1} appends per fsync ({flushes} flushes, {timeouts} FLUSH_DISK_TIMEOUT)",
        reqs as f64 / flushes as f64
    );
}

fn recovery_and_dispatch() {
    let dir = tempdir();
    let cfg = config(dir.path());
    let n;
    {
        let store = Arc::new(MessageStore::open(cfg.clone()).unwrap());
        append(&store, 1024, 4, Duration::from_secs(2));
        n = store.runtime_info().put_message_total;
        store.shutdown();
    }
    // A clean restart: recovery validates the newest file(s) and re-dispatches them (units and
    // index entries already present are skipped).
    let t0 = Instant::now();
    drop(MessageStore::open(cfg.clone()).unwrap());
    println!(
        "normal restart (validate + re-dispatch the newest file): {:.2}s",
        t0.elapsed().as_secs_f64()
    );
    let cl = CommitLog::load(&cfg, &dir.path().join("commitlog")).unwrap();
    let t0 = Instant::now();
    let res = recovery::scan(&cl, 0, true, |_, _| {});
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "recovery scan with CRC: {:.2} GB/s ({} records, {:.0} MB in {secs:.2}s)",
        res.bytes as f64 / 1e9 / secs,
        res.records,
        res.bytes as f64 / 1e6
    );
    drop(cl);
    std::fs::remove_dir_all(dir.path().join("consumequeue")).unwrap();
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    let t0 = Instant::now();
    let store = MessageStore::open(cfg).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "dispatch rebuild (CQ + index, incl. scan): {:.0} units/s ({n} units in {secs:.2}s)",
        n as f64 / secs
    );
    drop(store);
}

fn main() {
    let filter = std::env::args()
        .nth(1)
        .filter(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let run = |name: &str| filter.is_empty() || name == filter;
    if run("async") || run("async128") {
        for writers in [1, 8] {
            for size in [128, 1024, 16 * 1024] {
                if run("async") || (size == 128 && writers == 1) {
                    async_case(size, writers);
                }
            }
        }
    }
    if run("sync") {
        sync_case(64);
    }
    if run("recovery") {
        recovery_and_dispatch();
    }
}
