//! A JSON config file under `ROOT/config/`, written and read the way the Java broker does
//! (`MixAll.string2File` / `ConfigManager.load`): the previous content is kept as `.bak`, the new
//! one is written to `.tmp`, fsynced and renamed over the file, and the directory is fsynced.
//! Loading falls back to `.bak` when the file is missing or empty.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::store::paths::{bak_path, tmp_path};

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
        for p in [self.path.clone(), bak_path(&self.path)] {
            match fs::read_to_string(&p) {
                Ok(s) if !s.trim().is_empty() => return Ok(Some(s)),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot read {}: {e}", p.display())),
            }
        }
        Ok(None)
    }

    pub fn persist(&self, text: &str) -> Result<(), String> {
        let err =
            |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| err("create", dir, e))?;
        let tmp = tmp_path(&self.path);
        let mut f = File::create(&tmp).map_err(|e| err("create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| err("write", &tmp, e))?;
        f.sync_all().map_err(|e| err("fsync", &tmp, e))?;
        if let Ok(prev) = fs::read(&self.path) {
            let bak = bak_path(&self.path);
            fs::write(&bak, prev).map_err(|e| err("write", &bak, e))?;
        }
        fs::rename(&tmp, &self.path).map_err(|e| err("rename onto", &self.path, e))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| err("fsync directory", dir, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_previous_content_as_bak_and_falls_back_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = JsonFile::new(dir.path().join("config/topics.json"));
        assert_eq!(f.load().unwrap(), None);
        f.persist("{\"a\":1}").unwrap();
        f.persist("{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(bak_path(f.path())).unwrap(), "{\"a\":1}");
        fs::write(f.path(), "").unwrap();
        assert_eq!(f.load().unwrap().as_deref(), Some("{\"a\":1}"));
    }
}
