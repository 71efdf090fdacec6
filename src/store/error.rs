//! The store's one error enum; every variant names the file and offset it is about.

use std::path::PathBuf;

/// Errors of the store layer. Outcomes the protocol expects (not found, flush timeout, ...) are
/// statuses inside `Ok`, never errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("store directory {path} is locked by another broker process (Java or rmqd)")]
    Locked { path: PathBuf },
    #[error("{path}: file size {found} differs from the configured size {expected}")]
    FileSize {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{path}: file name is not a 20-digit offset")]
    BadFileName { path: PathBuf },
    #[error("{path}: corrupt data at byte {offset}: {what}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    #[error("invalid store configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("store is poisoned after a failed fsync of {path}; writes are refused")]
    Poisoned { path: PathBuf },
    /// The RocksDB consume queue (`storeType=defaultRocksDB`) failed; the text names its path.
    #[error("{0}")]
    ConsumeQueueDb(String),
    /// A config RocksDB of `storeType=defaultRocksDB` (topics, groups, offsets) failed; the text
    /// names its path.
    #[error("{0}")]
    ConfigDb(String),
}

impl StoreError {
    /// Wraps an `io::Error` with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}

/// A bad value for a configuration key; always names the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config key {key}: cannot parse {value:?} as {expected}")]
    BadValue {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("config key {key}: {reason}")]
    OutOfRange { key: &'static str, reason: String },
}

/// Result alias of the store layer.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
