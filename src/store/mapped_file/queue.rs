//! `MappedFileQueue`: the contiguous sequence of equally sized files of one log (commit log or
//! one consume queue), named by the global offset of their first byte.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::MappedFile;
use crate::store::error::{Result, StoreError};
use crate::store::paths;

/// Files of one log, oldest first.
pub struct MappedFileQueue {
    dir: PathBuf,
    file_size: usize,
    files: RwLock<Vec<Arc<MappedFile>>>,
    /// The file after the last one, created ahead of need (Java's AllocateMappedFileService) so
    /// a roll only swaps it in. Not in `files`: nothing reads it and offsets ignore it until the
    /// roll. Lock order: `next`, then `files`.
    next: Mutex<Option<Arc<MappedFile>>>,
    flushed_where: AtomicI64,
    flushes: AtomicU64,
    /// Files this queue creates are mapped without fault readahead (see `without_readahead`).
    no_readahead: bool,
    /// Files this queue creates are sparse; writers reserve ahead (see `sparse_files`).
    sparse: bool,
}

impl MappedFileQueue {
    /// An empty queue over `dir` (nothing is read).
    pub fn new(dir: &Path, file_size: usize) -> Self {
        MappedFileQueue {
            dir: dir.to_path_buf(),
            file_size,
            files: RwLock::new(Vec::new()),
            next: Mutex::new(None),
            flushed_where: AtomicI64::new(0),
            flushes: AtomicU64::new(0),
            no_readahead: false,
            sparse: false,
        }
    }

    /// Maps the files this queue creates from now on with `MADV_RANDOM` (see
    /// `MappedFile::advise_no_readahead`): for logs written in small records through the
    /// mapping (consume queues), where a fault's readahead over a new file's holes would cost
    /// the writer milliseconds (a window of `read_ahead_kb`, which can be more than a whole
    /// consume-queue file). Files already loaded from disk keep readahead: recovery
    /// scans them from the start, and on a cold page cache page-by-page faults would be far
    /// slower. The last of them, which appends continue in, has its data read ahead now and then
    /// goes without (`MappedFile::prefetch_data_then_no_readahead`).
    pub fn without_readahead(mut self) -> Self {
        self.no_readahead = true;
        if let Some(last) = self.files.get_mut().last() {
            last.prefetch_data_then_no_readahead();
        }
        self
    }

    /// Creates files sparse from now on (`MappedFile::create_sparse`): for queues of which there
    /// may be thousands, most nearly empty (consume queues), so a file costs the disk what was
    /// written to it, as in Java. Their writers `reserve` before each write.
    pub fn sparse_files(mut self) -> Self {
        self.sparse = true;
        self
    }

    fn create_file(&self, from: i64) -> Result<Arc<MappedFile>> {
        std::fs::create_dir_all(&self.dir).map_err(|e| StoreError::io(&self.dir, e))?;
        let path = self.dir.join(paths::offset_file_name(from));
        let file = if self.sparse {
            MappedFile::create_sparse(&path, from, self.file_size)?
        } else {
            MappedFile::create(&path, from, self.file_size)?
        };
        if self.no_readahead {
            file.advise_no_readahead();
        }
        Ok(file)
    }

    /// Maps every file of `dir` (Java's load rules: names must parse as offsets, sizes must match;
    /// a zero-length last file is deleted; sub-directories are skipped).
    pub fn load(dir: &Path, file_size: usize) -> Result<Self> {
        let q = Self::new(dir, file_size);
        let mut names = Vec::new();
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(q),
            Err(e) => return Err(StoreError::io(dir, e)),
        };
        for entry in rd {
            let entry = entry.map_err(|e| StoreError::io(dir, e))?;
            let path = entry.path();
            if path.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(off) = paths::parse_offset_file_name(&name) else {
                return Err(StoreError::BadFileName { path });
            };
            names.push((name, off, path));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let n = names.len();
        let mut files = Vec::with_capacity(n);
        for (i, (_, off, path)) in names.into_iter().enumerate() {
            let len = std::fs::metadata(&path)
                .map_err(|e| StoreError::io(&path, e))?
                .len();
            if len == 0 && i + 1 == n {
                tracing::warn!(path = %path.display(), "deleting zero-length last file");
                std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
                continue;
            }
            files.push(MappedFile::open_existing(&path, off, file_size)?);
        }
        *q.files.write() = files;
        Ok(q)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn file_size(&self) -> usize {
        self.file_size
    }
    /// A snapshot of the files, oldest first.
    pub fn files(&self) -> Vec<Arc<MappedFile>> {
        self.files.read().clone()
    }
    pub fn is_empty(&self) -> bool {
        self.files.read().is_empty()
    }
    pub fn first_file(&self) -> Option<Arc<MappedFile>> {
        self.files.read().first().cloned()
    }
    pub fn last_file(&self) -> Option<Arc<MappedFile>> {
        self.files.read().last().cloned()
    }

    /// The last file if it has room, else a new file after it (or at `start_offset` rounded down
    /// to a file boundary when the queue is empty): the pre-allocated one when it is ready.
    pub fn last_file_or_create(&self, start_offset: i64) -> Result<Arc<MappedFile>> {
        if let Some(last) = self.last_file() {
            if !last.is_full() {
                return Ok(last);
            }
        }
        let mut next = self.next.lock();
        let mut files = self.files.write();
        let from = match files.last() {
            Some(last) if !last.is_full() => return Ok(Arc::clone(last)),
            Some(last) => last.from_offset() + self.file_size as i64,
            None => start_offset - start_offset.rem_euclid(self.file_size as i64),
        };
        let file = match next.take() {
            Some(f) if f.from_offset() == from => f,
            other => {
                // Keep only a file still ahead of this one; one behind (not expected) is
                // forgotten, never deleted: its name may be a live file's.
                *next = other.filter(|f| f.from_offset() > from);
                self.create_file(from)?
            }
        };
        if files.is_empty() {
            self.flushed_where.store(from, Ordering::Release);
        }
        files.push(Arc::clone(&file));
        Ok(file)
    }

    /// Creates (once) the file that follows the last one, at full size, and returns it; `None`
    /// when the queue is empty. Creating it is what a roll would do, only earlier: a crash leaves
    /// an all-zero file past the end of data, which recovery deletes (as after a Java broker's
    /// crash: it pre-allocates the same way).
    pub fn preallocate_next(&self) -> Result<Option<Arc<MappedFile>>> {
        let mut next = self.next.lock();
        let Some(from) = self
            .files
            .read()
            .last()
            .map(|l| l.from_offset() + self.file_size as i64)
        else {
            return Ok(None);
        };
        if let Some(f) = next.as_ref().filter(|f| f.from_offset() == from) {
            return Ok(Some(Arc::clone(f)));
        }
        // A pre-allocated file for another offset cannot happen while the queue only grows; if
        // it did, forget it without deleting (its name may be a live file's).
        let file = self.create_file(from)?;
        *next = Some(Arc::clone(&file));
        Ok(Some(file))
    }

    /// Deletes the pre-allocated file, if any (shutdown and destroy; Java deletes it too). It
    /// holds no data: only a roll puts a file into use, and it takes the file out of the slot.
    pub fn discard_preallocated(&self) -> Result<()> {
        let Some(f) = self.next.lock().take() else {
            return Ok(());
        };
        f.delete()
    }

    /// The file containing global `offset`, if mapped.
    pub fn find_by_offset(&self, offset: i64) -> Option<Arc<MappedFile>> {
        let files = self.files.read();
        let first = files.first()?;
        if offset < first.from_offset() {
            return None;
        }
        let idx = ((offset - first.from_offset()) / self.file_size as i64) as usize;
        let f = files.get(idx)?;
        (offset >= f.from_offset() && offset < f.from_offset() + self.file_size as i64)
            .then(|| Arc::clone(f))
    }

    /// Offset of the first byte of the first file (0 if empty).
    pub fn min_offset(&self) -> i64 {
        self.first_file().map(|f| f.from_offset()).unwrap_or(0)
    }

    /// Global offset just past the last written byte.
    pub fn max_offset(&self) -> i64 {
        self.last_file()
            .map(|f| f.from_offset() + f.wrote_position() as i64)
            .unwrap_or(0)
    }

    pub fn flushed_where(&self) -> i64 {
        self.flushed_where.load(Ordering::Acquire)
    }
    pub fn set_flushed_where(&self, v: i64) {
        self.flushed_where.store(v, Ordering::Release);
    }

    /// Flushes the file containing `flushedWhere` (Java semantics). Returns true if nothing was
    /// left to flush.
    pub fn flush(&self, least_pages: usize) -> Result<bool> {
        let fw = self.flushed_where();
        let file = self.find_by_offset(fw).or_else(|| {
            (fw == self.min_offset())
                .then(|| self.first_file())
                .flatten()
        });
        let Some(file) = file else {
            return Ok(true);
        };
        let before = file.flushed_position();
        let pos = file.flush(least_pages)?;
        if pos != before {
            self.flushes.fetch_add(1, Ordering::Relaxed);
        }
        let new_where = file.from_offset() + pos as i64;
        self.set_flushed_where(new_where);
        Ok(new_where == fw)
    }

    /// Flushes everything written (all files up to the wrote position).
    pub fn flush_all(&self) -> Result<()> {
        // read the count apart: a guard in the `for` head would live through the loop, and
        // `flush` reading again while a roll waits for the write lock deadlocks
        let files = self.files.read().len();
        for _ in 0..files + 1 {
            if self.flush(0)? {
                break;
            }
        }
        Ok(())
    }

    /// Recovery: sets positions so `offset` is the end of data, zeroes the stale tail of the file
    /// holding it and deletes every later file.
    pub fn truncate_dirty(&self, offset: i64) -> Result<()> {
        let mut files = self.files.write();
        let mut keep = Vec::with_capacity(files.len());
        for f in files.drain(..) {
            let end = f.from_offset() + self.file_size as i64;
            if end <= offset {
                keep.push(f);
            } else if f.from_offset() <= offset {
                let pos = (offset - f.from_offset()) as usize;
                f.set_positions(pos);
                f.zero_tail(pos)?;
                keep.push(f);
            } else {
                tracing::info!(path = %f.path().display(), "recovery deletes file past the end of data");
                f.delete()?;
            }
        }
        *files = keep;
        drop(files);
        self.set_flushed_where(offset);
        Ok(())
    }

    /// Removes and deletes the first `n` files (never the last one).
    pub fn delete_first(&self, n: usize) -> Result<Vec<Arc<MappedFile>>> {
        let mut files = self.files.write();
        let n = n.min(files.len().saturating_sub(1));
        let gone: Vec<_> = files.drain(..n).collect();
        drop(files);
        for f in &gone {
            f.delete()?;
        }
        Ok(gone)
    }

    /// Deletes every file and forgets them.
    pub fn destroy(&self) -> Result<()> {
        self.discard_preallocated()?;
        let gone: Vec<_> = self.files.write().drain(..).collect();
        for f in gone {
            f.delete()?;
        }
        let _ = std::fs::remove_dir(&self.dir);
        Ok(())
    }

    /// Number of flushes (msync calls) that wrote something.
    pub fn flush_count(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// Total bytes mapped by the queue's files.
    pub fn mapped_size(&self) -> u64 {
        self.files.read().len() as u64 * self.file_size as u64
    }
}
