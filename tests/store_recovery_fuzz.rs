//! Bounded, deterministic fuzzing of store recovery, runnable on stable in CI: a small valid store
//! (written once through the library API) gets mutated files — patches, truncations, removed,
//! created and swapped files over the commit log, consume queues, index, checkpoint, abort marker
//! and config JSON — from a fixed-seed PRNG, then is verified, recovered, read and appended to by
//! the same harness as the `store_recovery` cargo-fuzz target in `fuzz/`. The property is "no
//! panic (on any thread), no hang". `RMQD_STORE_FUZZ_ITERS` sets the number of mutated stores
//! (default 300); inputs under `tests/fixtures/fuzz/store_recovery/` (crashes found by the
//! campaign) are replayed first.

#[allow(dead_code)]
mod store_recovery {
    include!("../fuzz/store_recovery.rs");
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use store_recovery::*;

/// xorshift64*, as in `tests/remoting_fuzz.rs`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// An input for `Plan::parse`: a flags byte, then 1-6 mutations of random kinds and arguments.
fn random_input(rng: &mut Rng) -> Vec<u8> {
    let mut input = vec![rng.next() as u8];
    for _ in 0..1 + rng.next() % 6 {
        // kind, file, 3 offset bytes, a length or value pick, up to 16 patch bytes
        let n = 6 + (rng.next() % 17) as usize;
        input.extend((0..n).map(|_| rng.next() as u8));
    }
    input
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics on every thread (the store's services run their own).
fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info);
    }));
}

fn iterations() -> usize {
    std::env::var("RMQD_STORE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Runs `input` on a thread of its own, failing if it takes more than `limit`.
fn run_bounded(template: &'static StoreTemplate, input: Vec<u8>, limit: Duration) {
    let (tx, rx) = mpsc::channel();
    let shown = format!("{input:02x?}");
    std::thread::spawn(move || {
        recover_mutated_store(template, &input);
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("input {shown} ran longer than {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("input {shown} panicked"),
    }
}

/// The template spans several files of each kind, its unmutated copy verifies clean, and a
/// mutation changes what it names: otherwise the loop explores nothing useful.
fn check_template(template: &StoreTemplate) {
    let names: Vec<String> = template
        .files
        .iter()
        .map(|f| f.0.display().to_string())
        .collect();
    let commitlogs = names.iter().filter(|n| n.starts_with("commitlog/")).count();
    assert!(commitlogs >= 3, "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("consumequeue/T0/0/")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("index/")), "{names:?}");
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &Plan::parse(&[0], template.files.len()).apply(template),
    );
    let report = rmqd::store::tools::verify(&store_config(dir.path()), &mut |_, _, _| {}).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(
        report.records,
        QUEUES.iter().map(|q| q.2).sum::<usize>() as u64
    );
    let cp = names.iter().position(|n| n == "checkpoint").unwrap() as u8;
    let plan = Plan::parse(&[1, 3, cp, 0, 0, 0], template.files.len());
    let applied = plan.apply(template);
    assert_eq!(applied[cp as usize].1.as_deref().map(<[u8]>::len), Some(0));
    let abort = names.iter().position(|n| n == "abort").unwrap();
    assert_eq!(
        applied[abort].1.as_deref(),
        Some(&[][..]),
        "flag 1 creates the abort marker"
    );
}

#[test]
fn fuzz_store_recovery_never_panics_or_hangs() {
    count_panics();
    let template: &'static StoreTemplate = Box::leak(Box::new(StoreTemplate::build()));
    check_template(template);
    // Recovery of a store this size takes milliseconds; 30 s means a loop, not a slow machine.
    let limit = Duration::from_secs(30);
    let mut replayed = 0;
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/store_recovery");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            run_bounded(template, std::fs::read(&p).unwrap(), limit);
            replayed += 1;
        }
    }
    let mut rng = Rng(0x5EED_5703E);
    let started = Instant::now();
    for _ in 0..iterations() {
        run_bounded(template, random_input(&mut rng), limit);
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a store thread panicked");
    eprintln!(
        "{} mutated stores in {:?} ({replayed} regression inputs replayed)",
        iterations(),
        started.elapsed()
    );
}
