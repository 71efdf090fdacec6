//! `StoreCheckpoint`: the 4096-byte `checkpoint` file (store-format.md §6).
//!
//! ```text
//! 0 physicMsgTimestamp i64 | 8 logicsMsgTimestamp i64 | 16 indexMsgTimestamp i64
//! 24 masterFlushedOffset i64 | 32 confirmPhyOffset i64 | 40..4096 zero
//! ```

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use crate::store::error::{Result, StoreError};

pub const CHECKPOINT_SIZE: usize = 4096;

/// In-memory checkpoint values, written out by `flush`.
pub struct StoreCheckpoint {
    path: PathBuf,
    file: File,
    pub physic_msg_timestamp: AtomicI64,
    pub logics_msg_timestamp: AtomicI64,
    pub index_msg_timestamp: AtomicI64,
    pub master_flushed_offset: AtomicI64,
    pub confirm_phy_offset: AtomicI64,
}

impl StoreCheckpoint {
    /// Opens (or creates zero-filled) the checkpoint file and reads its values; a short file
    /// reads as zeros for the missing fields.
    pub fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        let mut page = [0u8; 40];
        let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len() as usize;
        let n = len.min(40);
        file.read_exact_at(&mut page[..n], 0)
            .map_err(|e| StoreError::io(path, e))?;
        if len < CHECKPOINT_SIZE {
            file.set_len(CHECKPOINT_SIZE as u64)
                .map_err(|e| StoreError::io(path, e))?;
        }
        let f = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&page[i * 8..i * 8 + 8]);
            AtomicI64::new(i64::from_be_bytes(a))
        };
        Ok(StoreCheckpoint {
            path: path.to_path_buf(),
            file,
            physic_msg_timestamp: f(0),
            logics_msg_timestamp: f(1),
            index_msg_timestamp: f(2),
            master_flushed_offset: f(3),
            confirm_phy_offset: f(4),
        })
    }

    /// The five fields in file order.
    pub fn values(&self) -> [i64; 5] {
        [
            self.physic_msg_timestamp.load(Ordering::Acquire),
            self.logics_msg_timestamp.load(Ordering::Acquire),
            self.index_msg_timestamp.load(Ordering::Acquire),
            self.master_flushed_offset.load(Ordering::Acquire),
            self.confirm_phy_offset.load(Ordering::Acquire),
        ]
    }

    /// Java `getMinTimestamp`: `max(0, min(physic, logics) - 3000)`, with Java's wrapping `long`
    /// arithmetic so a garbage checkpoint gives Java's answer instead of an overflow.
    pub fn min_timestamp(&self) -> i64 {
        let v = self.values();
        v[0].min(v[1]).wrapping_sub(3000).max(0)
    }

    /// Java `getMinTimestampIndex`.
    pub fn min_timestamp_index(&self) -> i64 {
        self.min_timestamp().min(self.values()[2])
    }

    /// Writes the page and fsyncs it.
    pub fn flush(&self) -> Result<()> {
        let mut page = [0u8; CHECKPOINT_SIZE];
        for (i, v) in self.values().iter().enumerate() {
            page[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
        }
        self.file
            .write_all_at(&page, 0)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.file
            .sync_data()
            .map_err(|e| StoreError::io(&self.path, e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Decodes checkpoint bytes (for tools).
pub fn decode(bytes: &[u8]) -> [i64; 5] {
    let mut out = [0i64; 5];
    for (i, v) in out.iter_mut().enumerate() {
        if let Some(s) = bytes.get(i * 8..i * 8 + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            *v = i64::from_be_bytes(a);
        }
    }
    out
}
