//! Store throughput against the disk it runs on: the disk's sequential write bandwidth and raw
//! fdatasync rate (measured first, in the same run), then ASYNC_FLUSH appends (1 and 8 writers,
//! 128 B / 1 KiB / 16 KiB), SYNC_FLUSH group commit with 64 writers, recovery scan with CRC and
//! dispatch rebuild. A plain timing main: `cargo bench --bench store_append [-- CASE]` with CASE
//! one of `disk`, `async`, `async128`, `async16k`, `sync`, `recovery`.
//!
//! Every measurement runs `STORE_BENCH_RUNS` times (default 3) and the summary at the end gives
//! median [min–max]. Progress goes to stderr, results to stdout. `STORE_BENCH_DIR` benches on
//! another disk; `STORE_BENCH_DISK_MB` sets the sequential-write probe size (default 1024).

use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rmqd::store::commitlog::{recovery, CommitLog};
use rmqd::store::{
    FlushDiskType, MessageInput, MessageStore, MessageStoreConfig, PutMessageStatus,
};

fn config(dir: &Path) -> MessageStoreConfig {
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
        tags_code: rmqd::store::util::java_hash("TagA") as i64,
        wait_store_msg_ok: true,
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

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn progress(msg: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "  .. {msg}");
    let _ = e.flush();
}

/// CPU time (s) and minor page faults of the calling thread: the machine is shared, so
/// wall-clock rates understate what the put path costs; per-writer-CPU rates do not. Faults
/// taken by a writer happen inside the put lock (the copy into fresh mapped pages).
fn thread_usage() -> (f64, u64) {
    // SAFETY: an all-zero rusage is a valid value; getrusage only writes into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a live out-parameter.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_minflt as u64)
}

/// Page faults the calling thread takes itself, from a perf software counter (user-mode faults
/// only: the memcpy into the mapping). Unlike `ru_minflt` this leaves out pages the thread
/// pre-faults on purpose with madvise(MADV_POPULATE_WRITE). `None` where perf is unavailable.
struct FaultCounter(Option<File>);

/// `struct perf_event_attr`, PERF_ATTR_SIZE_VER0 layout (64 bytes).
#[repr(C)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

impl FaultCounter {
    fn start() -> Self {
        const PERF_TYPE_SOFTWARE: u32 = 1;
        const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
        const EXCLUDE_KERNEL: u64 = 1 << 5;
        const EXCLUDE_HV: u64 = 1 << 6;
        let attr = PerfEventAttr {
            kind: PERF_TYPE_SOFTWARE,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: PERF_COUNT_SW_PAGE_FAULTS,
            sample_period: 0,
            sample_type: 0,
            read_format: 0,
            flags: EXCLUDE_KERNEL | EXCLUDE_HV,
            wakeup_events: 0,
            bp_type: 0,
            config1: 0,
        };
        // SAFETY: perf_event_open reads `attr` (a valid VER0 struct); pid 0 / cpu -1 counts the
        // calling thread on any CPU; no group fd, no flags.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                0 as libc::c_ulong,
            )
        };
        if fd < 0 {
            return FaultCounter(None);
        }
        use std::os::unix::io::FromRawFd;
        // SAFETY: a fresh descriptor we now own.
        FaultCounter(Some(unsafe { File::from_raw_fd(fd as i32) }))
    }
    fn read(&self) -> Option<u64> {
        let mut b = [0u8; 8];
        std::io::Read::read_exact(&mut self.0.as_ref()?, &mut b).ok()?;
        Some(u64::from_ne_bytes(b))
    }
}

// ---------------------------------------------------------------------------------------------
// Samples and the summary.

/// Samples of one metric, reported as median [min–max].
struct Metric {
    name: String,
    unit: &'static str,
    samples: Vec<f64>,
}

impl Metric {
    fn median(&self) -> f64 {
        let mut v = self.samples.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
    fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn max(&self) -> f64 {
        self.samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

#[derive(Default)]
struct Report {
    metrics: Vec<Metric>,
}

impl Report {
    fn add(&mut self, name: &str, unit: &'static str, v: f64) {
        match self.metrics.iter_mut().find(|m| m.name == name) {
            Some(m) => m.samples.push(v),
            None => self.metrics.push(Metric {
                name: name.to_string(),
                unit,
                samples: vec![v],
            }),
        }
    }
    fn median(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(Metric::median)
    }
    fn print(&self, runs: usize) {
        println!();
        println!("== SUMMARY: median [min–max] of {runs} runs ==");
        for m in &self.metrics {
            println!(
                "{:<58} {:>12} {:<14} [{} – {}]",
                m.name,
                fmt(m.median()),
                m.unit,
                fmt(m.min()),
                fmt(m.max())
            );
        }
    }
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

// ---------------------------------------------------------------------------------------------
// The disk, measured in the same run.

/// Sequential write bandwidth (MB/s): `mb` MiB in 8 MiB `write`s to a new file, then one
/// fdatasync, timed together (what `dd bs=8M conv=fdatasync` reports).
fn disk_seq_write(dir: &Path, mb: usize) -> f64 {
    let path = dir.join("seq-write-probe");
    let mut f = File::create(&path).unwrap();
    let chunk = vec![0x5au8; 8 << 20];
    let t0 = Instant::now();
    for i in 0..mb / 8 {
        f.write_all(&chunk).unwrap();
        if i % 32 == 31 {
            progress(&format!("seq write {} / {mb} MiB", (i + 1) * 8));
        }
    }
    f.sync_data().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    drop(f);
    std::fs::remove_file(&path).unwrap();
    (mb / 8 * 8) as f64 * 1048576.0 / 1e6 / secs
}

/// Raw fdatasyncs/s of one thread: each round writes `len` bytes and fdatasyncs. `sparse`: the
/// writes go into a fresh sparse file, as the CommitLog's appends do (files are created at full
/// size without allocation, so each fsync also commits block allocation); otherwise they
/// overwrite already-allocated blocks (data only).
fn disk_fsync_rate(dir: &Path, len: usize, sparse: bool, dur: Duration) -> f64 {
    let path = dir.join("fsync-probe");
    let f = File::create(&path).unwrap();
    let buf = vec![0x5au8; len];
    let span = 64usize << 20;
    if sparse {
        f.set_len(span as u64).unwrap();
    } else {
        f.write_all_at(&vec![0u8; span], 0).unwrap();
        f.sync_all().unwrap();
    }
    let t0 = Instant::now();
    let mut n = 0usize;
    while t0.elapsed() < dur && (n + 1) * len <= span {
        f.write_all_at(&buf, (n * len) as u64).unwrap();
        f.sync_data().unwrap();
        n += 1;
    }
    let rate = n as f64 / t0.elapsed().as_secs_f64();
    drop(f);
    std::fs::remove_file(&path).unwrap();
    rate
}

fn disk_cases(rep: &mut Report, runs: usize) {
    let dir = tempdir();
    let mb = env_usize("STORE_BENCH_DISK_MB", 1024);
    for r in 1..=runs {
        progress(&format!(
            "disk: sequential write {mb} MiB + fdatasync, run {r}/{runs}"
        ));
        let bw = disk_seq_write(dir.path(), mb);
        println!("disk sequential write ({mb} MiB, 8 MiB writes + fdatasync): {bw:.0} MB/s");
        rep.add("disk sequential write bandwidth", "MB/s", bw);
        progress(&format!("disk: fdatasync loops, run {r}/{runs}"));
        let d = Duration::from_millis(1500);
        let sparse = disk_fsync_rate(dir.path(), 1024, true, d);
        let over = disk_fsync_rate(dir.path(), 1024, false, d);
        println!(
            "disk raw fdatasync, 1 thread, 1 KiB writes: {sparse:.0}/s appending into a sparse file (the CommitLog's pattern), {over:.0}/s overwriting allocated blocks"
        );
        rep.add(
            "disk raw fdatasync/s (1 KiB appends, sparse file)",
            "fsync/s",
            sparse,
        );
        rep.add("disk raw fdatasync/s (1 KiB overwrites)", "fsync/s", over);
    }
}

// ---------------------------------------------------------------------------------------------
// The store.

/// What `append` measured.
struct AppendRun {
    /// Appends per wall-clock second.
    rate: f64,
    total: u64,
    /// Summed CPU seconds of the writer threads.
    writer_cpu: f64,
    /// Summed minor faults of the writer threads (ru_minflt: includes their pre-faulting).
    writer_minflt: u64,
    /// Summed page faults the writers took in their own code (perf), if available.
    writer_faults: Option<u64>,
    timeouts: u64,
}

/// Appends for `dur` from `writers` threads.
fn append(store: &Arc<MessageStore>, size: usize, writers: usize, dur: Duration) -> AppendRun {
    let cpu_nanos = Arc::new(AtomicU64::new(0));
    let faults = Arc::new(AtomicU64::new(0));
    let perf_faults = Arc::new(AtomicU64::new(0));
    let perf_ok = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let timeouts = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let s = store.clone();
            let (cpu_nanos, faults, timeouts) =
                (cpu_nanos.clone(), faults.clone(), timeouts.clone());
            let (perf_faults, perf_ok) = (perf_faults.clone(), perf_ok.clone());
            std::thread::spawn(move || {
                let m = message(size, w as i32);
                // SYNC_FLUSH waiters park as the broker's tasks do (awaiting the group commit), not
                // in `wait_blocking`'s 50 µs poll: 64 pollers would starve the flush thread.
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .unwrap();
                let counter = FaultCounter::start();
                let pf0 = counter.read();
                let (cpu0, flt0) = thread_usage();
                let mut n = 0u64;
                while t0.elapsed() < dur {
                    for _ in 0..16 {
                        let h = s.put_message(&m);
                        let st = if h.needs_flush_wait() {
                            rt.block_on(h.wait()).status
                        } else {
                            h.result().status
                        };
                        if st == PutMessageStatus::FLUSH_DISK_TIMEOUT {
                            timeouts.fetch_add(1, Ordering::Relaxed);
                        } else {
                            assert_eq!(st, PutMessageStatus::PUT_OK);
                        }
                    }
                    n += 16;
                }
                let (cpu1, flt1) = thread_usage();
                cpu_nanos.fetch_add(((cpu1 - cpu0) * 1e9) as u64, Ordering::Relaxed);
                faults.fetch_add(flt1 - flt0, Ordering::Relaxed);
                match (pf0, counter.read()) {
                    (Some(a), Some(b)) => {
                        perf_faults.fetch_add(b - a, Ordering::Relaxed);
                    }
                    _ => perf_ok.store(false, Ordering::Relaxed),
                }
                n
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    AppendRun {
        rate: total as f64 / t0.elapsed().as_secs_f64(),
        total,
        writer_cpu: cpu_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        writer_minflt: faults.load(Ordering::Relaxed),
        writer_faults: perf_ok
            .load(Ordering::Relaxed)
            .then(|| perf_faults.load(Ordering::Relaxed)),
        timeouts: timeouts.load(Ordering::Relaxed),
    }
}

fn size_name(size: usize) -> String {
    if size >= 1024 {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

fn async_case(rep: &mut Report, size: usize, writers: usize) {
    let dir = tempdir();
    let mut cfg = config(dir.path());
    cfg.message_index_enable = false;
    let store = Arc::new(MessageStore::open(cfg).unwrap());
    append(&store, size, writers, Duration::from_millis(300)); // warm
    let r = append(&store, size, writers, Duration::from_secs(2));
    let mb = r.rate * size as f64 / 1e6;
    let per_cpu = r.total as f64 / r.writer_cpu.max(1e-9);
    let faults = r
        .writer_faults
        .map_or("n/a (perf_event_open refused)".to_string(), |f| {
            f.to_string()
        });
    println!(
        "ASYNC append {:>6} x {writers} writers: {:>10.0} appends/s {mb:>7.1} MB/s ({per_cpu:.0} appends per writer-CPU-second; writer page faults: {faults} taken in the copy, {} minflt incl. pre-faulting)",
        size_name(size),
        r.rate,
        r.writer_minflt
    );
    let case = format!("ASYNC {} x{writers}", size_name(size));
    rep.add(
        &format!("{case}: appends/s (wall clock)"),
        "appends/s",
        r.rate,
    );
    rep.add(&format!("{case}: body MB/s"), "MB/s", mb);
    rep.add(
        &format!("{case}: appends per writer-CPU-second"),
        "appends/s",
        per_cpu,
    );
    if let Some(f) = r.writer_faults {
        rep.add(
            &format!("{case}: writer faults in the copy (perf)"),
            "faults",
            f as f64,
        );
    }
    rep.add(
        &format!("{case}: writer minflt (rusage)"),
        "faults",
        r.writer_minflt as f64,
    );
    // Until the final flush the appends only reach the page cache: time the flush too.
    let t0 = Instant::now();
    store.shutdown();
    let durable = mb * 2.0 / (2.0 + t0.elapsed().as_secs_f64());
    if let (true, Some(disk)) = (
        size >= 16 * 1024,
        rep.median("disk sequential write bandwidth"),
    ) {
        let pct = 100.0 * mb / disk;
        let dpct = 100.0 * durable / disk;
        println!(
            "    = {pct:.0}% of the disk's sequential write bandwidth ({disk:.0} MB/s, median of this run); {durable:.0} MB/s = {dpct:.0}% counting the final flush to disk"
        );
        rep.add(&format!("{case}: % of disk sequential write"), "%", pct);
        rep.add(&format!("{case}: MB/s incl. final flush"), "MB/s", durable);
        rep.add(
            &format!("{case}: % of disk seq. write incl. final flush"),
            "%",
            dpct,
        );
    }
}

fn sync_case(rep: &mut Report, writers: usize) {
    let dir = tempdir();
    let mut cfg = config(dir.path());
    cfg.flush_disk_type = FlushDiskType::SyncFlush;
    let store = Arc::new(MessageStore::open(cfg).unwrap());
    let before = store.runtime_info();
    let t0 = Instant::now();
    let r = append(&store, 1024, writers, Duration::from_secs(3));
    let secs = t0.elapsed().as_secs_f64();
    let after = store.runtime_info();
    let flushes = (after.group_commit_flushes - before.group_commit_flushes).max(1);
    let reqs = after.group_commit_requests - before.group_commit_requests;
    let per_fsync = reqs as f64 / flushes as f64;
    let fsyncs = flushes as f64 / secs;
    println!(
        "SYNC_FLUSH 1 KiB x {writers} writers: {:>8.0} appends/s, {per_fsync:.1} appends per fsync, {fsyncs:.0} store fsyncs/s ({flushes} flushes, {} FLUSH_DISK_TIMEOUT)",
        r.rate, r.timeouts
    );
    let case = format!("SYNC_FLUSH 1 KiB x{writers}");
    rep.add(&format!("{case}: appends/s"), "appends/s", r.rate);
    rep.add(&format!("{case}: appends per fsync"), "appends", per_fsync);
    rep.add(&format!("{case}: store fsyncs/s"), "fsync/s", fsyncs);
    if let Some(raw) = rep.median("disk raw fdatasync/s (1 KiB appends, sparse file)") {
        println!(
            "    vs the disk's raw fdatasync/s ({raw:.0}/s, sparse-file appends, median of this run): store fsyncs/s = {:.0}%, appends/s = {:.1}x raw fsyncs/s",
            100.0 * fsyncs / raw,
            r.rate / raw
        );
        rep.add(
            &format!("{case}: store fsyncs/s as % of raw"),
            "%",
            100.0 * fsyncs / raw,
        );
        rep.add(
            &format!("{case}: appends/s per raw fsync/s"),
            "x",
            r.rate / raw,
        );
    }
    store.shutdown();
}

fn recovery_and_dispatch(rep: &mut Report) {
    let dir = tempdir();
    let cfg = config(dir.path());
    let n;
    {
        let store = Arc::new(MessageStore::open(cfg.clone()).unwrap());
        progress("recovery: writing ~2 s of 1 KiB messages with 4 writers");
        append(&store, 1024, 4, Duration::from_secs(2));
        n = store.message_totals().0;
        store.shutdown();
    }
    // A clean restart: recovery validates the newest file(s) and re-dispatches them (units and
    // index entries already present are skipped).
    progress("recovery: clean restart");
    let t0 = Instant::now();
    drop(MessageStore::open(cfg.clone()).unwrap());
    let restart = t0.elapsed().as_secs_f64();
    println!("normal restart (validate + re-dispatch the newest file): {restart:.2}s");
    rep.add("normal restart", "s", restart);
    progress("recovery: CRC scan of the whole commit log");
    let cl = CommitLog::load(&cfg, &dir.path().join("commitlog")).unwrap();
    let t0 = Instant::now();
    let res = recovery::scan(&cl, 0, true, |_, _| {});
    let secs = t0.elapsed().as_secs_f64();
    let gbs = res.bytes as f64 / 1e9 / secs;
    println!(
        "recovery scan with CRC: {gbs:.2} GB/s ({} records, {:.0} MB in {secs:.2}s)",
        res.records,
        res.bytes as f64 / 1e6
    );
    rep.add("recovery scan with CRC", "GB/s", gbs);
    drop(cl);
    std::fs::remove_dir_all(dir.path().join("consumequeue")).unwrap();
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    progress("dispatch: rebuilding consume queue + index from the commit log");
    let t0 = Instant::now();
    let store = MessageStore::open(cfg).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let units = n as f64 / secs;
    println!(
        "dispatch rebuild (CQ unit + index entry per message, incl. the open's scan): {units:.0} units/s ({n} units in {secs:.2}s)"
    );
    rep.add("dispatch rebuild (CQ + index)", "units/s", units);
    drop(store);
}

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let run = |name: &str| filter.is_empty() || name == filter;
    let runs = env_usize("STORE_BENCH_RUNS", 3).max(1);
    let mut rep = Report::default();
    let mut cases: Vec<(usize, usize)> = Vec::new();
    for writers in [1, 8] {
        for size in [128, 1024, 16 * 1024] {
            let pick = run("async")
                || (filter == "async128" && size == 128 && writers == 1)
                || (filter == "async16k" && size == 16 * 1024 && writers == 1);
            if pick {
                cases.push((size, writers));
            }
        }
    }
    let wants_disk = run("disk") || run("sync") || cases.iter().any(|c| c.0 == 16 * 1024);
    if wants_disk {
        disk_cases(&mut rep, runs);
    }
    for (i, &(size, writers)) in cases.iter().enumerate() {
        for r in 1..=runs {
            progress(&format!(
                "[{}/{}] ASYNC {} x{writers}, run {r}/{runs}",
                i + 1,
                cases.len(),
                size_name(size)
            ));
            async_case(&mut rep, size, writers);
        }
    }
    if run("sync") {
        for r in 1..=runs {
            progress(&format!("SYNC_FLUSH 1 KiB x64, run {r}/{runs}"));
            sync_case(&mut rep, 64);
        }
    }
    if run("recovery") {
        for r in 1..=runs {
            progress(&format!("recovery + dispatch, run {r}/{runs}"));
            recovery_and_dispatch(&mut rep);
        }
    }
    rep.print(runs);
}
