//! `ReadOnlyMap`: a read-only mapping for offline tools (verify, dump).
#![allow(unsafe_code)]

use std::fs::File;
use std::ops::Deref;
use std::path::Path;

use memmap2::Mmap;

use crate::store::error::{Result, StoreError};

/// A whole file mapped read-only (empty files map to an empty slice).
pub struct ReadOnlyMap {
    map: Option<Mmap>,
}

impl ReadOnlyMap {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
        let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
        if len == 0 {
            return Ok(ReadOnlyMap { map: None });
        }
        // SAFETY: tools run while holding the store's fcntl lock, so no broker truncates or
        // rewrites the file while it is mapped.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| StoreError::io(path, e))?;
        Ok(ReadOnlyMap { map: Some(map) })
    }
}

impl Deref for ReadOnlyMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}
