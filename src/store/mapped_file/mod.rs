//! `MappedFile`: one fixed-size file mapped read-write, appended by a single writer and read
//! concurrently below its wrote position. The only module tree of the crate with `unsafe`.
//!
//! Soundness contract: bytes at `[0, wrote)` are immutable and may be read by any thread; bytes at
//! `[wrote, size)` are touched only by the writer holding `write_lock`, which publishes them with
//! a release store of `wrote`. Readers load `wrote` with acquire and never look past it. Files are
//! never shrunk while mapped (deletion unlinks; the mapping stays valid until the last `Arc` drops).
#![allow(unsafe_code)]

pub mod mut_map;
pub mod os;
pub mod queue;
pub mod read_only;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Advice, MmapOptions, MmapRaw};
use parking_lot::Mutex;

use crate::store::error::{Result, StoreError};

pub use queue::MappedFileQueue;

/// OS page size assumed by flush accounting (Java uses 4 KiB too).
pub const OS_PAGE_SIZE: usize = 4096;

/// How far ahead of its writes a file created sparse ([`MappedFile::create_sparse`]) is
/// allocated: one `fallocate` per this many bytes written.
pub const ALLOCATE_AHEAD: usize = 1024 * 1024;

/// A mapped commit-log / consume-queue file.
pub struct MappedFile {
    path: PathBuf,
    from_offset: i64,
    size: usize,
    file: File,
    map: MmapRaw,
    wrote: AtomicUsize,
    flushed: AtomicUsize,
    /// Pages below this position were pre-faulted writable (a high-water mark: `populate` only
    /// raises it; `size` once populating is known to be unsupported).
    populated: AtomicUsize,
    /// Set while some thread runs `prefault_to` (one populates, the others carry on).
    prefaulting: AtomicBool,
    write_lock: Mutex<()>,
    /// STORETIMESTAMP of the last record appended (commit log) for the checkpoint.
    last_store_ts: AtomicI64,
    deleted: AtomicBool,
    /// Bytes from 0 known to have their blocks allocated: writes below it cannot fault on a full
    /// disk ([`Self::reserve`] raises it).
    allocated: AtomicUsize,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("wrote", &self.wrote_position())
            .finish()
    }
}

impl MappedFile {
    /// Creates (or opens and extends) `path` at exactly `size` bytes and maps it. Positions start
    /// at 0 for a new file; `open_existing` maps a loaded file with positions at `size`.
    /// Every block is allocated before the file is mapped (a full disk fails here, with the file
    /// removed again if this call created it, instead of faulting a later write).
    pub fn create(path: &Path, from_offset: i64, size: usize) -> Result<Arc<Self>> {
        let f = Self::create_sized(path, from_offset, size, true)?;
        f.allocated.store(size, Ordering::Release);
        Ok(f)
    }

    /// Creates `path` sized but sparse: for files with many siblings that may stay nearly empty
    /// (consume queues), whose writers [`Self::reserve`] each stretch before writing it.
    pub fn create_sparse(path: &Path, from_offset: i64, size: usize) -> Result<Arc<Self>> {
        Self::create_sized(path, from_offset, size, false)
    }

    fn create_sized(path: &Path, from: i64, size: usize, allocate: bool) -> Result<Arc<Self>> {
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        let sized = if allocate {
            os::allocate(&file, size as u64)
        } else {
            file.set_len(size as u64)
        };
        if let Err(e) = sized {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            return Err(StoreError::io(path, e));
        }
        Self::map(path, file, from, size, 0)
    }

    /// Makes sure the blocks of `[0, end)` are allocated, allocating ahead of `end` at once: a
    /// full disk fails here (ENOSPC), never as SIGBUS in a mapped write. The step is what is
    /// allocated already, at least a page and at most [`ALLOCATE_AHEAD`]: a file written once (a
    /// consume queue of one of thousands of lite topics) costs one block, as its sparse Java twin,
    /// not 1 MiB; a busy one doubles its way to 1 MiB steps in eight calls.
    pub fn reserve(&self, end: usize) -> Result<()> {
        let have = self.allocated.load(Ordering::Acquire);
        if end <= have {
            return Ok(());
        }
        let step = have.clamp(OS_PAGE_SIZE, ALLOCATE_AHEAD);
        let target = end
            .div_ceil(step)
            .saturating_mul(step)
            .min(self.size)
            .max(end.min(self.size));
        os::allocate_range(&self.file, have as u64, (target - have) as u64)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.allocated.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    /// Whether `[0, end)` is allocated already (no `fallocate` needed to write below it).
    pub fn is_reserved(&self, end: usize) -> bool {
        end <= self.allocated.load(Ordering::Acquire)
    }

    /// Maps an existing file that must be exactly `size` bytes; all of it counts as written
    /// until recovery sets the real positions.
    pub fn open_existing(path: &Path, from_offset: i64, size: usize) -> Result<Arc<Self>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        let found = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
        if found != size as u64 {
            return Err(StoreError::FileSize {
                path: path.to_path_buf(),
                expected: size as u64,
                found,
            });
        }
        Self::map(path, file, from_offset, size, size)
    }

    fn map(path: &Path, file: File, from: i64, size: usize, pos: usize) -> Result<Arc<Self>> {
        let map = MmapOptions::new()
            .len(size)
            .map_raw(&file)
            .map_err(|e| StoreError::io(path, e))?;
        Ok(Arc::new(MappedFile {
            path: path.to_path_buf(),
            from_offset: from,
            size,
            file,
            map,
            wrote: AtomicUsize::new(pos),
            flushed: AtomicUsize::new(pos),
            populated: AtomicUsize::new(pos),
            prefaulting: AtomicBool::new(false),
            write_lock: Mutex::new(()),
            last_store_ts: AtomicI64::new(0),
            deleted: AtomicBool::new(false),
            allocated: AtomicUsize::new(0),
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Global offset of byte 0 of this file (its name).
    pub fn from_offset(&self) -> i64 {
        self.from_offset
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn wrote_position(&self) -> usize {
        self.wrote.load(Ordering::Acquire)
    }
    pub fn flushed_position(&self) -> usize {
        self.flushed.load(Ordering::Acquire)
    }
    pub fn is_full(&self) -> bool {
        self.wrote_position() >= self.size
    }
    pub fn remaining(&self) -> usize {
        self.size - self.wrote_position()
    }
    pub fn last_store_timestamp(&self) -> i64 {
        self.last_store_ts.load(Ordering::Relaxed)
    }
    pub fn set_last_store_timestamp(&self, ts: i64) {
        self.last_store_ts.store(ts, Ordering::Relaxed);
    }

    /// Recovery only (no reader or writer active): sets wrote and flushed positions.
    pub fn set_positions(&self, pos: usize) {
        let pos = pos.min(self.size);
        self.wrote.store(pos, Ordering::Release);
        self.flushed.store(pos, Ordering::Release);
        self.populated.store(pos, Ordering::Release);
    }

    /// Appends `len` bytes filled by `fill` at the wrote position; returns the position written,
    /// or `None` when fewer than `len` bytes remain.
    pub fn append_with(&self, len: usize, fill: impl FnOnce(&mut [u8])) -> Option<usize> {
        let _guard = self.write_lock.lock();
        let pos = self.wrote.load(Ordering::Acquire);
        if len > self.size - pos {
            return None;
        }
        // SAFETY: [pos, pos+len) is inside the mapping (checked above) and at or past `wrote`, so
        // no reader looks at it (readers stop at `wrote`) and no other writer touches it (we hold
        // `write_lock`). The mapping lives as long as `self`.
        let dst = unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().add(pos), len) };
        fill(dst);
        self.wrote.store(pos + len, Ordering::Release);
        Some(pos)
    }

    /// Appends `data`; see `append_with`.
    pub fn append(&self, data: &[u8]) -> Option<usize> {
        self.append_with(data.len(), |dst| dst.copy_from_slice(data))
    }

    /// Marks the file full without writing (after a blank record was appended).
    pub fn mark_full(&self) {
        let _guard = self.write_lock.lock();
        self.wrote.store(self.size, Ordering::Release);
    }

    /// The published bytes `[pos, pos+len)`, or `None` if any of them is not yet written.
    pub fn read(&self, pos: usize, len: usize) -> Option<&[u8]> {
        let end = pos.checked_add(len)?;
        if end > self.wrote_position() {
            return None;
        }
        // SAFETY: [pos, end) lies below the acquire-loaded `wrote`, so it is fully written and
        // never written again while mapped; the slice borrows `self`, which owns the mapping.
        Some(unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(pos), len) })
    }

    /// All published bytes from `pos` to the wrote position.
    pub fn read_from(&self, pos: usize) -> Option<&[u8]> {
        let wrote = self.wrote_position();
        if pos > wrote {
            return None;
        }
        self.read(pos, wrote - pos)
    }

    /// Zero-copy `Bytes` over `[pos, pos+len)` that keeps this file mapped while alive.
    pub fn slice_bytes(self: &Arc<Self>, pos: usize, len: usize) -> Option<Bytes> {
        self.read(pos, len)?;
        Some(Bytes::from_owner(MappedSlice {
            file: Arc::clone(self),
            pos,
            len,
        }))
    }

    /// Flushes dirty pages if at least `least_pages` are dirty (0 = anything dirty). Returns the
    /// flushed position.
    pub fn flush(&self, least_pages: usize) -> Result<usize> {
        let wrote = self.wrote_position();
        let flushed = self.flushed_position();
        if wrote <= flushed {
            return Ok(flushed);
        }
        let dirty_pages = wrote / OS_PAGE_SIZE - flushed / OS_PAGE_SIZE;
        if least_pages > 0 && dirty_pages < least_pages && wrote < self.size {
            return Ok(flushed);
        }
        let start = flushed / OS_PAGE_SIZE * OS_PAGE_SIZE;
        self.map
            .flush_range(start, wrote - start)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.flushed.store(wrote, Ordering::Release);
        // Writeback write-protects whole folios, and a large folio holding `wrote` reaches past
        // it: the pages ahead must be faulted writable again, by the prefault service or a
        // writer outside the put lock, not by the next copy.
        self.populated
            .fetch_min(wrote / OS_PAGE_SIZE * OS_PAGE_SIZE, Ordering::AcqRel);
        Ok(wrote)
    }

    /// Recovery only: zeroes every non-zero byte from `from` (>= wrote position) to the end so a
    /// later append can never leave stale records behind it.
    pub fn zero_tail(&self, from: usize) -> Result<()> {
        let _guard = self.write_lock.lock();
        let from = from.max(self.wrote.load(Ordering::Acquire));
        if from >= self.size {
            return Ok(());
        }
        // SAFETY: [from, size) is at or past `wrote` (clamped above) so no reader sees it, and we
        // hold `write_lock`.
        let tail = unsafe {
            std::slice::from_raw_parts_mut(self.map.as_mut_ptr().add(from), self.size - from)
        };
        let mut dirty = false;
        // Only file regions that hold data can be non-zero: skip holes (SEEK_DATA/SEEK_HOLE) so a
        // clean start does not read through gigabytes of sparse tail.
        for (data, hole) in self.data_extents(from) {
            for chunk in tail[data - from..hole - from].chunks_mut(OS_PAGE_SIZE) {
                if chunk.iter().any(|&b| b != 0) {
                    chunk.fill(0);
                    dirty = true;
                }
            }
        }
        if dirty {
            self.map
                .flush_range(from, self.size - from)
                .map_err(|e| StoreError::io(&self.path, e))?;
        }
        Ok(())
    }

    /// The file's data extents from `from` on, in order: `(start, end)` with
    /// `from <= start < end <= size`, holes (SEEK_DATA/SEEK_HOLE) left out. File systems
    /// without SEEK_DATA report the whole rest as one extent.
    fn data_extents(&self, from: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut pos = from;
        std::iter::from_fn(move || {
            while pos < self.size {
                let (data, hole) = self.data_extent(pos)?;
                let start = data.max(pos);
                pos = hole.max(start + 1);
                if hole > start {
                    return Some((start, hole.min(self.size)));
                }
            }
            None
        })
    }

    /// The next data extent at or after `pos`: (data start, following hole start), or `None`
    /// when only holes follow. File systems without SEEK_DATA report the whole rest as data.
    fn data_extent(&self, pos: usize) -> Option<(usize, usize)> {
        use std::os::unix::io::AsRawFd;
        let fd = self.file.as_raw_fd();
        // SAFETY: lseek on a descriptor we own; it only moves the (unused) file offset.
        let data = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_DATA) };
        if data < 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENXIO) => None,
                _ => Some((pos, self.size)),
            };
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        let hole = if hole < 0 { self.size } else { hole as usize };
        Some((data as usize, hole.min(self.size)))
    }

    /// Unlinks the file; readers holding an `Arc` keep their mapping.
    pub fn delete(&self) -> Result<()> {
        if self.deleted.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(&self.path, e)),
        }
    }

    /// Last-modified time of the file in ms (for `fileReservedTime`).
    pub fn last_modified_ms(&self) -> i64 {
        std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    /// Turns off fault readahead for this mapping (`MADV_RANDOM`): a fault then maps only the
    /// page it hit. By default the first store into a hole of a sparse file faults in a whole
    /// readahead window (the device's `read_ahead_kb`) of hole pages, each allocated and
    /// zero-filled on the writer's thread (`filemap_fault` → `page_cache_ra_order` → `memset`):
    /// with a window as large as a consume-queue file, milliseconds that delay the first
    /// deliveries of every fresh topic (`benches/README.md`). Advice only: a kernel that refuses
    /// it leaves readahead on, which is slower, not wrong.
    pub fn advise_no_readahead(&self) {
        if let Err(e) = self.map.advise(Advice::Random) {
            tracing::debug!(path = %self.path.display(), error = %e, "madvise(MADV_RANDOM) refused");
        }
    }

    /// For a loaded file that appends will continue in (a consume queue's last file): starts
    /// reading its data extents into the page cache (`MADV_WILLNEED`, asynchronous), then turns
    /// fault readahead off (`advise_no_readahead`). Recovery's scan of the units still reads
    /// ahead on a cold page cache, and neither it nor the next append fault in (and zero-fill)
    /// a readahead window of the file's unwritten holes, a cost paid per queue at start-up.
    pub fn prefetch_data_then_no_readahead(&self) {
        for (data, hole) in self.data_extents(0) {
            let start = data / OS_PAGE_SIZE * OS_PAGE_SIZE;
            if let Err(e) = self.map.advise_range(Advice::WillNeed, start, hole - start) {
                tracing::debug!(path = %self.path.display(), error = %e, "madvise(MADV_WILLNEED) refused");
            }
        }
        self.advise_no_readahead();
    }

    /// Pre-faults `[from, from+len)` writable (MADV_POPULATE_WRITE) so the writer does not take
    /// page faults (and the kernel's page zeroing) on its critical path. Contents are unchanged.
    /// Returns false when the kernel does not support it.
    pub fn populate(&self, from: usize, len: usize) -> bool {
        let start = from / OS_PAGE_SIZE * OS_PAGE_SIZE;
        let end = from.saturating_add(len).min(self.size);
        if end <= start {
            return true;
        }
        // SAFETY: the range is inside the mapping; MADV_POPULATE_WRITE only makes the kernel fault
        // the pages in (no user-visible write, contents preserved), so it cannot race with the
        // writer or readers in the Rust memory model.
        let rc = unsafe {
            libc::madvise(
                self.map.as_mut_ptr().add(start) as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            )
        };
        rc == 0
    }

    /// Drops this process's page-table entries for the published bytes of `[from, from+len)`
    /// (whole pages only, clamped to the wrote position), so they stop counting in its RSS. The
    /// data stays in the page cache (dirty pages stay dirty: a later `flush` still writes them)
    /// and the next read faults it back in, a minor fault while the page is cached. Returns false
    /// when the kernel refused.
    pub fn release_pages(&self, from: usize, len: usize) -> bool {
        let start = from.div_ceil(OS_PAGE_SIZE) * OS_PAGE_SIZE;
        let end = from.saturating_add(len).min(self.wrote_position()) / OS_PAGE_SIZE * OS_PAGE_SIZE;
        end <= start || self.dontneed(start, end)
    }

    /// MADV_DONTNEED over the page-aligned `[start, end)` of the mapping.
    fn dontneed(&self, start: usize, end: usize) -> bool {
        debug_assert!(start % OS_PAGE_SIZE == 0 && end % OS_PAGE_SIZE == 0 && end <= self.size);
        // SAFETY: the range is inside the mapping. On a MAP_SHARED file mapping MADV_DONTNEED
        // only unmaps the pages from this process: the dirty bit of a dirty page moves to the page
        // cache page (nothing is lost before writeback, and msync of the range still writes it:
        // msync syncs the file range, not the page tables), and any later access maps the same
        // bytes again from the page cache or the file (pinned by the test below). So slices
        // borrowed by readers stay valid and unchanged. Callers pass published bytes only (below
        // `wrote`), which the writer never touches again.
        let rc = unsafe {
            libc::madvise(
                self.map.as_mut_ptr().add(start) as *mut libc::c_void,
                end - start,
                libc::MADV_DONTNEED,
            )
        };
        rc == 0
    }

    /// End of the pre-faulted region (see `prefault_to`).
    pub fn populated_position(&self) -> usize {
        self.populated.load(Ordering::Acquire)
    }

    /// True when fewer than `margin` pre-faulted bytes lie ahead of the wrote position.
    pub fn needs_prefault(&self, margin: usize) -> bool {
        let want = self.wrote_position().saturating_add(margin).min(self.size);
        self.populated_position() < want
    }

    /// Pre-faults from the populated mark up to `upto` (clamped to the file) and raises the mark.
    /// Any thread may call it, outside every lock; while one thread populates, the others return
    /// at once (several populating the same pages only contend in the kernel). When the kernel
    /// lacks MADV_POPULATE_WRITE the mark jumps to the end (nobody retries) and this returns
    /// false.
    pub fn prefault_to(&self, upto: usize) -> bool {
        let upto = upto.min(self.size);
        if self.populated_position() >= upto || self.prefaulting.swap(true, Ordering::Acquire) {
            return true;
        }
        let from = self.populated_position();
        let ok = from >= upto || self.populate(from, upto - from);
        let mark = if ok { upto } else { self.size };
        self.populated.fetch_max(mark, Ordering::AcqRel);
        self.prefaulting.store(false, Ordering::Release);
        ok
    }
}

/// The owner behind a zero-copy `Bytes`: a published range of a mapped file.
struct MappedSlice {
    file: Arc<MappedFile>,
    pos: usize,
    len: usize,
}

impl AsRef<[u8]> for MappedSlice {
    fn as_ref(&self) -> &[u8] {
        // The range was checked to be published when the slice was made and stays so.
        self.file.read(self.pos, self.len).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `field` (e.g. `Rss:`) for the mapping starting at `addr`, from /proc/self/smaps.
    fn smaps_field(addr: usize, field: &str) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let head = format!("{addr:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head)).skip(1);
        lines
            .find_map(|l| l.strip_prefix(field))
            .map(|v| v.trim().to_string())
    }

    /// Rss (KiB) of the mapping starting at `addr`.
    fn mapping_rss_kib(addr: usize) -> Option<u64> {
        smaps_field(addr, "Rss:")?
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    #[test]
    fn a_sparse_file_reserves_a_page_first_then_doubles_up_to_the_allocation_step() {
        let dir = tempfile::tempdir().unwrap();
        let size = 6 * 1024 * 1024;
        let f = MappedFile::create_sparse(&dir.path().join("cq"), 0, size).unwrap();
        assert!(!f.is_reserved(1));
        f.reserve(20).unwrap();
        // one unit of a consume queue: one page, not ALLOCATE_AHEAD, also on the disk (st_blocks
        // may count a file system's metadata block or two besides)
        assert!(f.is_reserved(OS_PAGE_SIZE) && !f.is_reserved(OS_PAGE_SIZE + 1));
        use std::os::unix::fs::MetadataExt;
        let on_disk = std::fs::metadata(dir.path().join("cq")).unwrap().blocks() * 512;
        assert!(on_disk <= 4 * OS_PAGE_SIZE as u64, "{on_disk}");
        // appending on: 8, 16, ... KiB up to ALLOCATE_AHEAD, then steps of ALLOCATE_AHEAD,
        // never past the file's size
        let mut seen = vec![f.allocated.load(Ordering::Acquire)];
        while *seen.last().unwrap() < size {
            f.reserve(seen.last().unwrap() + 20).unwrap();
            seen.push(f.allocated.load(Ordering::Acquire));
        }
        let mut want = vec![OS_PAGE_SIZE];
        while *want.last().unwrap() < ALLOCATE_AHEAD {
            want.push(want.last().unwrap() * 2);
        }
        while *want.last().unwrap() < size {
            want.push((want.last().unwrap() + ALLOCATE_AHEAD).min(size));
        }
        assert_eq!(seen, want);
    }

    #[test]
    fn a_queue_without_readahead_maps_the_files_it_creates_for_random_access() {
        let dir = tempfile::tempdir().unwrap();
        let plain = MappedFileQueue::new(&dir.path().join("a"), 64 * 1024);
        let cq = MappedFileQueue::new(&dir.path().join("b"), 64 * 1024).without_readahead();
        let rr = |f: &MappedFile| {
            let flags = smaps_field(f.map.as_ptr() as usize, "VmFlags:").expect("mapping in smaps");
            flags.split_whitespace().any(|flag| flag == "rr")
        };
        assert!(!rr(&plain.last_file_or_create(0).unwrap()));
        let first = cq.last_file_or_create(0).unwrap();
        assert!(rr(&first), "the file a put creates");
        first.mark_full();
        let next = cq.preallocate_next().unwrap().unwrap();
        assert!(rr(&next), "a pre-allocated file");
        cq.last_file_or_create(0).unwrap();
        drop((first, next, cq));
        let loaded = MappedFileQueue::load(&dir.path().join("b"), 64 * 1024).unwrap();
        let files = loaded.without_readahead().files();
        assert_eq!(files.len(), 2);
        assert!(
            !rr(&files[0]),
            "loaded files keep readahead for recovery's scan"
        );
        assert!(
            rr(&files[1]),
            "but not the last one, which appends continue in"
        );
    }

    /// Which of the file's pages are in the page cache (`mincore` over the mapping).
    fn resident_pages(f: &MappedFile) -> Vec<bool> {
        let mut v = vec![0u8; f.size / OS_PAGE_SIZE];
        // SAFETY: the mapping is `size` bytes from a page-aligned address; `v` has one byte per page.
        let rc =
            unsafe { libc::mincore(f.map.as_ptr() as *mut libc::c_void, f.size, v.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        v.iter().map(|b| b & 1 == 1).collect()
    }

    #[test]
    fn a_loaded_file_prefetched_for_appends_reads_its_data_ahead_and_faults_holes_page_by_page() {
        use std::os::unix::fs::FileExt;
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000");
        let size = 256 * OS_PAGE_SIZE;
        let data = 5 * OS_PAGE_SIZE;
        {
            let file = File::create(&path).unwrap();
            file.set_len(size as u64).unwrap();
            file.write_all_at(&vec![7u8; data], 0).unwrap();
            file.sync_all().unwrap();
            // SAFETY: advice on a descriptor we own; clean pages leave the page cache (a cold start).
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        let f = MappedFile::open_existing(&path, 0, size).unwrap();
        f.prefetch_data_then_no_readahead();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !resident_pages(&f)[..5].iter().all(|&r| r) {
            assert!(
                std::time::Instant::now() < deadline,
                "data pages never read ahead"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let flags = smaps_field(f.map.as_ptr() as usize, "VmFlags:").unwrap();
        assert!(flags.split_whitespace().any(|flag| flag == "rr"), "{flags}");
        assert_eq!(f.read(0, data).unwrap(), &vec![7u8; data][..]);
        // A read in the unwritten rest maps that one page, not a readahead window of holes.
        assert_eq!(f.read(100 * OS_PAGE_SIZE, 1), Some(&[0u8][..]));
        let resident = resident_pages(&f);
        assert!(resident[100]);
        assert_eq!(resident[5..].iter().filter(|&&r| r).count(), 1);
    }

    #[test]
    fn dontneed_keeps_dirty_unflushed_pages_and_drops_them_from_rss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000");
        let size = 64 * OS_PAGE_SIZE;
        let f = MappedFile::create(&path, 0, size).unwrap();
        let data: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
        f.append(&data).unwrap();
        let addr = f.map.as_ptr() as usize;
        let before = mapping_rss_kib(addr).unwrap();
        assert!(
            before >= 256,
            "all 64 pages resident after the write: {before} KiB"
        );
        // Dirty and never msync'ed: dropping the mapping must keep the bytes.
        assert!(f.dontneed(0, size));
        let after = mapping_rss_kib(addr).unwrap();
        assert!(after < before / 4, "released: {before} -> {after} KiB");
        assert_eq!(
            f.read(0, size).unwrap(),
            &data[..],
            "re-faulted from the page cache"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            data,
            "file contents unchanged"
        );
    }

    #[test]
    fn release_pages_stops_at_the_wrote_position() {
        let dir = tempfile::tempdir().unwrap();
        let f = MappedFile::create(&dir.path().join("0"), 0, 16 * OS_PAGE_SIZE).unwrap();
        if !f.populate(0, 16 * OS_PAGE_SIZE) {
            return; // kernel without MADV_POPULATE_WRITE
        }
        f.append(&vec![9u8; 10 * OS_PAGE_SIZE]).unwrap();
        let addr = f.map.as_ptr() as usize;
        assert!(mapping_rss_kib(addr).unwrap() >= 64);
        assert!(f.release_pages(0, 16 * OS_PAGE_SIZE));
        let rss = mapping_rss_kib(addr).unwrap();
        assert!(
            (24..40).contains(&rss),
            "10 written pages released, 6 ahead kept: {rss} KiB"
        );
        assert!(f
            .read(0, 10 * OS_PAGE_SIZE)
            .unwrap()
            .iter()
            .all(|&b| b == 9));
        f.flush(0).unwrap();
        let on_disk = std::fs::read(f.path()).unwrap();
        assert!(
            on_disk[..10 * OS_PAGE_SIZE].iter().all(|&b| b == 9),
            "flush after release"
        );
    }
}
