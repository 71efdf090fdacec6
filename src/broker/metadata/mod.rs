//! The broker's metadata: topics, subscription groups and consumer offsets, persisted as the
//! Java broker's `config/*.json`.

pub mod groups;
pub mod kv;
pub mod offsets;
pub mod persist;
pub mod topics;

use std::path::{Path, PathBuf};

use crate::store::StoreError;

/// A metadata file that cannot be read at start or written after a change.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// The file (and its `.bak`) holds text the broker cannot read; start-up stops here as
    /// Java's does, so the operator can restore the file instead of losing its content.
    #[error("{}: not a {kind} the broker can read: {reason}", path.display())]
    Unreadable {
        path: PathBuf,
        kind: &'static str,
        reason: String,
    },
    /// The durable write (temp file, fsync, rename) failed. The remark is the store error's own
    /// text (it names the file that failed), as before the error had a type.
    #[error("{source}")]
    Persist {
        path: PathBuf,
        #[source]
        source: StoreError,
    },
}

impl MetadataError {
    /// `path` holds no `kind` the broker can read, for `reason`.
    pub fn unreadable(path: &Path, kind: &'static str, reason: impl std::fmt::Display) -> Self {
        Self::Unreadable {
            path: path.to_path_buf(),
            kind,
            reason: reason.to_string(),
        }
    }

    /// Writing `path` failed with `source`.
    pub fn persist(path: &Path, source: StoreError) -> Self {
        Self::Persist {
            path: path.to_path_buf(),
            source,
        }
    }
}
