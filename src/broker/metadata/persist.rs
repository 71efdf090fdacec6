//! A JSON config file under `ROOT/config/` (topics, subscription groups, consumer offsets),
//! written and read through the store's config-file helpers, which do what Java's
//! `ConfigManager` does: durable temp-file write, `.bak` of the previous content, fallback to it.

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

    /// The file's text, or its `.bak`; `None` when neither has content.
    pub fn load(&self) -> Result<Option<String>, String> {
        Ok(config_files::load(&self.path))
    }

    pub fn persist(&self, text: &str) -> Result<(), String> {
        config_files::persist(&self.path, text).map_err(|e| e.to_string())
    }
}
