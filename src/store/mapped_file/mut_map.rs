//! `MutMap`: an exclusively owned read-write mapping (index files), used behind a mutex.
#![allow(unsafe_code)]

use std::fs::OpenOptions;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use memmap2::{Advice, MmapMut, MmapOptions};

use crate::store::error::{Result, StoreError};

/// A file mapped read-write at a fixed size; all access goes through `&`/`&mut self`.
pub struct MutMap {
    path: PathBuf,
    map: MmapMut,
    file: std::fs::File,
    /// Bytes from 0 whose blocks are known allocated ([`Self::reserve`]).
    allocated: usize,
}

impl MutMap {
    /// Opens or creates `path` with exactly `size` bytes. An existing file of another size is an
    /// error unless `create` is set and the file is new/empty.
    pub fn open(path: &Path, size: usize, create: bool) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
        if len == 0 && create {
            // sparse, as Java's; writers `reserve` what they are about to write
            file.set_len(size as u64)
                .map_err(|e| StoreError::io(path, e))?;
        } else if len != size as u64 {
            return Err(StoreError::FileSize {
                path: path.to_path_buf(),
                expected: size as u64,
                found: len,
            });
        }
        // SAFETY: the store holds the directory's fcntl lock, so no other broker modifies or
        // truncates the file while it is mapped; the length was checked/set above.
        let map = unsafe { MmapOptions::new().len(size).map_mut(&file) }
            .map_err(|e| StoreError::io(path, e))?;
        // Index files are hashed: every put and query touches a slot at random, so readahead on a
        // fault would only allocate (and, over the sparse file's holes, zero) pages nobody asked
        // for. Advice only: if refused, faults are slower, not wrong.
        if let Err(e) = map.advise(Advice::Random) {
            tracing::debug!(path = %path.display(), error = %e, "madvise(MADV_RANDOM) refused");
        }
        Ok(MutMap {
            path: path.to_path_buf(),
            map,
            file,
            allocated: 0,
        })
    }

    /// Whether `[0, end)` is allocated already (writing below it needs no `fallocate`).
    pub fn is_reserved(&self, end: usize) -> bool {
        end <= self.allocated
    }

    /// Makes sure the blocks of `[0, end)` are allocated (up to `ALLOCATE_AHEAD` more at once),
    /// so a write below `end` cannot fault on a full disk: that fails here, as ENOSPC.
    pub fn reserve(&mut self, end: usize) -> Result<()> {
        if end <= self.allocated {
            return Ok(());
        }
        let size = self.map.len();
        let ahead = super::ALLOCATE_AHEAD;
        let target = end
            .div_ceil(ahead)
            .saturating_mul(ahead)
            .clamp(end.min(size), size);
        super::os::allocate_range(
            &self.file,
            self.allocated as u64,
            (target - self.allocated) as u64,
        )
        .map_err(|e| StoreError::io(&self.path, e))?;
        self.allocated = target;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// msync of the whole mapping.
    pub fn flush(&self) -> Result<()> {
        self.map.flush().map_err(|e| StoreError::io(&self.path, e))
    }
}

impl Deref for MutMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl DerefMut for MutMap {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}
