//! Anonymous memory per lite queue at rest after a restart (issue 23): a store with N lite
//! queues (`%LMQ%$LiteParent$l<i>`, one message each) on the RocksDB consume queue is reopened
//! in a fresh process, with mimalloc as rmqd uses it, and its RssAnon read before and after the
//! open; the same for a store without lite queues, whose growth (RocksDB, threads, buffers) is
//! taken off. Per queue = (growth with N − growth without) / N. A measurement, not a check:
//!
//! `. scripts/rocksdb-env && RMQD_LITE_MEM_N=100000 cargo test --release --features rocksdb-cq
//!  --test store_lite_memory -- --ignored --nocapture`
//!
//! (`RMQD_LITE_MEM_DIR` keeps the stores there instead of a temporary directory.)
#![cfg(feature = "rocksdb-cq")]

mod store_common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rmqd::store::{MessageStore, MessageStoreConfig, PutMessageStatus};
use store_common::msg;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Set in the child: the store to open and measure.
const CHILD_STORE: &str = "RMQD_LITE_MEM_STORE";
const TEST_NAME: &str = "anonymous_memory_per_lite_queue_after_a_restart";

fn config(root: &Path) -> MessageStoreConfig {
    let mut c = MessageStoreConfig::with_root(root);
    c.store_type = "defaultRocksDB".to_string();
    c.enable_lmq = true;
    c.enable_multi_dispatch = true;
    c.mapped_file_size_commit_log = 256 << 20;
    c
}

fn rss_anon_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A store with `n` lite queues of one message each (plus one plain message).
fn build(root: &Path, n: usize) {
    let store = MessageStore::open(config(root)).unwrap();
    let t0 = Instant::now();
    for i in 0..=n {
        let mut m = msg("LiteParent", (i % 8) as i32, &[b'x'; 256], "", "", "");
        if i < n {
            let lmq = format!("%LMQ%$LiteParent$l{i}");
            m.properties
                .push_str(&format!("INNER_MULTI_DISPATCH\u{1}{lmq}\u{2}"));
        }
        assert_eq!(
            store.put_message(&m).wait_blocking().status,
            PutMessageStatus::PUT_OK
        );
    }
    assert!(store.wait_dispatched(Duration::from_secs(600)));
    assert_eq!(store.lmq_count(), n);
    eprintln!("built {n} lite queues in {:?}", t0.elapsed());
    store.shutdown();
}

/// In the child: RssAnon before and after opening the store (settled), and its lite queues.
fn measure(root: &Path) {
    let before = rss_anon_kib();
    let store = MessageStore::open(config(root)).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let after = rss_anon_kib();
    println!(
        "LITEMEM before_kib={before} after_kib={after} lmq={}",
        store.lmq_count()
    );
    store.shutdown();
}

/// Runs [`measure`] in a fresh process: (KiB of growth, lite queues).
fn measure_in_child(root: &Path) -> (u64, usize) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--ignored", "--nocapture"])
        .env(CHILD_STORE, root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("LITEMEM")).unwrap();
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(k))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (b, a) = (field("before_kib="), field("after_kib="));
    (a.saturating_sub(b), field("lmq=") as usize)
}

#[test]
#[ignore = "a measurement: minutes and GiB of disk at 1M queues"]
fn anonymous_memory_per_lite_queue_after_a_restart() {
    if let Some(root) = std::env::var_os(CHILD_STORE) {
        measure(Path::new(&root));
        return;
    }
    let n: usize = std::env::var("RMQD_LITE_MEM_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let tmp = tempfile::tempdir().unwrap();
    let base = std::env::var_os("RMQD_LITE_MEM_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let (empty, lite) = (base.join("empty"), base.join(format!("lite-{n}")));
    if !empty.exists() {
        build(&empty, 0);
    }
    if !lite.exists() {
        build(&lite, n);
    }
    let (e, _) = measure_in_child(&empty);
    let (l, count) = measure_in_child(&lite);
    assert_eq!(count, n);
    let per_queue = (l as f64 - e as f64) * 1024.0 / n as f64;
    println!(
        "lite queues {n}: RssAnon growth on open {l} KiB (store without lite queues: {e} KiB): \
         {per_queue:.0} B per lite queue"
    );
}
