//! A disk that fills up is a state, not a crash: on a real 4 MiB tmpfs, puts with keys (so index
//! files roll too) go on until the store refuses them, by its disk check (SERVICE_NOT_AVAILABLE
//! over diskSpaceWarningLevelRatio, checked as each commit-log file is allocated) or because a
//! file cannot be created (CREATE_MAPPED_FILE_FAILED); then another process takes the rest of
//! the disk. Every file the store writes through a mapping is allocated before it is mapped, so
//! the full disk shows as a refused put or a dispatch that waits, never as SIGBUS inside a mapped
//! write — which is how this test process died before. Reads keep working; when space returns,
//! the waiting dispatch completes and puts succeed again; nothing acknowledged is lost, across a
//! reopen too.
//!
//! Needs root (it mounts a tmpfs), as CI has.

mod store_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rmqd::store::{GetMessageStatus, MessageStore, PutMessageStatus};
use store_common::*;

struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap().keep();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a {size} tmpfs and needs root (CI runs as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn fill_until_refused(store: &MessageStore, from: usize) -> (Vec<(usize, i64)>, PutMessageStatus) {
    let mut acked = Vec::new();
    for i in from..from + 100_000 {
        let body = format!("{i:08}-{}", "d".repeat(1000));
        let m = msg(
            "Full",
            (i % 4) as i32,
            body.as_bytes(),
            "t",
            &format!("k{i} shared"),
            &format!("U{i:010}"),
        );
        let r = store.put_message(&m).wait_blocking();
        if r.status != PutMessageStatus::PUT_OK {
            assert!(
                matches!(
                    r.status,
                    PutMessageStatus::SERVICE_NOT_AVAILABLE
                        | PutMessageStatus::CREATE_MAPPED_FILE_FAILED
                ),
                "refused with {:?}",
                r.status
            );
            return (acked, r.status);
        }
        acked.push((i, r.append.unwrap().wrote_offset));
    }
    panic!("a 4 MiB file system took 100 000 puts of 1 KiB");
}

/// Writes a file until the file system is full (another process taking the rest of the disk).
fn take_the_rest(root: &Path) -> PathBuf {
    use std::io::Write;
    let path = root.join("rest");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![9u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
    path
}

fn assert_readable(store: &MessageStore, acked: &[(usize, i64)]) {
    for (i, phy) in acked {
        let rec = store
            .lookup_message_by_offset(*phy)
            .unwrap_or_else(|| panic!("acked message {i} at {phy} not readable"));
        let needle = format!("{i:08}-");
        assert!(
            rec.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "message {i} at {phy} has another body"
        );
    }
}

fn consumable(store: &MessageStore) -> usize {
    (0..4)
        .map(|q| {
            let mut n = 0;
            let mut off = 0;
            loop {
                let r = store.get_message("Full", q, off, 32, 1 << 20, None);
                if r.status != GetMessageStatus::FOUND {
                    return n;
                }
                n += r.messages.len();
                off = r.next_begin_offset;
            }
        })
        .sum()
}

/// Small files: every consume-queue and index file is smaller than one allocation step.
#[test]
fn full_disk_with_small_files_refuses_puts_and_recovers() {
    full_disk_case("4m", small_config);
}

/// Consume-queue and index files larger than the allocation step: they stay sparse and are
/// allocated ahead of their writes, step by step, as the disk fills.
#[test]
fn full_disk_with_sparse_files_allocated_ahead_refuses_puts_and_recovers() {
    full_disk_case("12m", |root| {
        let mut c = small_config(root);
        c.mapped_file_size_consume_queue = 150_000 * 20;
        c.max_hash_slot_num = 5_000;
        c.max_index_num = 100_000;
        c
    });
}

fn full_disk_case(size: &str, config: fn(&Path) -> rmqd::store::config::MessageStoreConfig) {
    let fs = Tmpfs::mount(size);
    let root: &Path = &fs.0;
    // room to give back later
    let filler = root.join("filler");
    std::fs::write(&filler, vec![7u8; 1024 * 1024]).unwrap();
    let cfg = config(&root.join("store"));
    let store = MessageStore::open(cfg.clone()).unwrap();

    let (mut acked, refused) = fill_until_refused(&store, 0);
    assert!(
        acked.len() > 500,
        "only {} puts before the disk was full",
        acked.len()
    );
    println!("first refusal: {refused:?} after {} puts", acked.len());
    // another process takes what is left: still refused, still alive; reads of everything
    // acknowledged work
    let rest = take_the_rest(root);
    let (more, _) = fill_until_refused(&store, acked.len());
    assert!(
        more.len() < 64,
        "{} more puts went through on a full disk",
        more.len()
    );
    acked.extend(more);
    assert_readable(&store, &acked);

    // space comes back: the waiting dispatch finishes, puts go on (the disk check clears the
    // refusal within its one-second period)
    std::fs::remove_file(&filler).unwrap();
    std::fs::remove_file(&rest).unwrap();
    assert!(
        store.wait_dispatched(Duration::from_secs(10)),
        "dispatch did not resume"
    );
    assert_eq!(consumable(&store), acked.len());
    let next = acked.iter().map(|(i, _)| i + 1).max().unwrap();
    let m = msg(
        "Full",
        0,
        format!("{next:08}-after").as_bytes(),
        "t",
        "after",
        "UAFTER",
    );
    // the disk check runs every second (Java's every 10 s): writes resume within Java's period
    let t = std::time::Instant::now();
    let r = loop {
        let r = store.put_message(&m).wait_blocking();
        if r.status != PutMessageStatus::SERVICE_NOT_AVAILABLE || t.elapsed().as_secs() >= 10 {
            break r;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    acked.push((next, r.append.unwrap().wrote_offset));

    store.shutdown();
    drop(store);
    let store = MessageStore::open(cfg).unwrap();
    assert!(store.wait_dispatched(Duration::from_secs(10)));
    assert_readable(&store, &acked);
    assert_eq!(consumable(&store), acked.len());
    assert_eq!(
        store
            .query_message("Full", "shared", 64, 0, i64::MAX)
            .phy_offsets
            .len(),
        64,
        "the index answers after the refill"
    );
    store.shutdown();
}
