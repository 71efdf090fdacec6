//! A JSON config file under `ROOT/config/` (topics, subscription groups, consumer offsets),
//! written and read through the store's config-file helpers, which do what Java's
//! `ConfigManager` does: durable temp-file write, `.bak` of the previous content, fallback to it.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::MetadataError;
use crate::store::config_files;

pub struct JsonFile {
    path: PathBuf,
    /// One write at a time: writes share the temp file, and a snapshot taken later must not be
    /// overwritten by an older one.
    write: Mutex<()>,
}

impl JsonFile {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            write: Mutex::new(()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's text, or its `.bak`; `None` when neither has content.
    pub fn load(&self) -> Option<String> {
        config_files::load(&self.path)
    }

    /// Writes the text `snapshot` returns, taken while holding the file's write lock.
    pub fn persist(&self, snapshot: impl FnOnce() -> String) -> Result<(), MetadataError> {
        self.persist_with(|| Ok(snapshot()))
    }

    /// As [`Self::persist`], for a snapshot that first writes elsewhere (the config RocksDB of
    /// `storeType=defaultRocksDB`) under the same lock and may fail; nothing is written to the
    /// file then.
    pub fn persist_with(
        &self,
        snapshot: impl FnOnce() -> Result<String, MetadataError>,
    ) -> Result<(), MetadataError> {
        let _one_writer = self.write.lock();
        let text = snapshot()?;
        config_files::persist(&self.path, &text).map_err(|e| MetadataError::persist(&self.path, e))
    }
}
