//! A JSON config file under `ROOT/config/`, written and read the way the Java broker does (the
//! store's config-file helpers do the durable write: temp file, fsync, rename, `.bak`).

use std::path::{Path, PathBuf};

use crate::store::config_files;

pub struct JsonFile {
    path: PathBuf,
}

impl JsonFile {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's text, or its `.bak` when the file is missing or empty; `None` when neither exists.
    pub fn load(&self) -> Result<Option<String>, String> {
        config_files::load(&self.path).map_err(|e| e.to_string())
    }

    pub fn persist(&self, text: &str) -> Result<(), String> {
        config_files::persist(&self.path, text).map_err(|e| e.to_string())
    }
}
