//! A JSON config file written and read as Java's `ConfigManager` does (`MixAll.string2File`):
//! the broker's `config/*.json`, the NameServer's `kvConfig.json` and `namesrv.properties`.
//!
//! Write: `<file>.tmp` written and fsynced, the current content copied to `<file>.bak` and
//! fsynced, the temp file renamed over the file (so the file exists at every moment, also for a
//! NameServer started with `-c` on it), the directory fsynced. Read: the file, or its `.bak` when the file is
//! missing or empty. A Java broker or NameServer reads what this writes, and the other way round.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A failed step of a durable write, with the file it failed on.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct JsonFileError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// `<file>.bak`, the previous content Java keeps beside every config file.
pub fn bak_path(file: &Path) -> PathBuf {
    suffixed(file, ".bak")
}

/// `<file>.tmp`, the temp file a write goes through.
pub fn tmp_path(file: &Path) -> PathBuf {
    suffixed(file, ".tmp")
}

fn suffixed(file: &Path, suffix: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes `content` durably (see the module doc); the directory is created when missing.
pub fn write(path: &Path, content: &[u8]) -> Result<(), JsonFileError> {
    let at = |p: &Path| {
        let path = p.to_path_buf();
        move |source| JsonFileError { path, source }
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(at(dir))?;
    let tmp = tmp_path(path);
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(at(&tmp))?;
    f.write_all(content)
        .and_then(|_| f.sync_all())
        .map_err(at(&tmp))?;
    drop(f);
    if let Ok(previous) = std::fs::read(path) {
        write_synced(&bak_path(path), &previous).map_err(at(&bak_path(path)))?;
    }
    std::fs::rename(&tmp, path).map_err(at(path))?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(at(dir))
}

fn write_synced(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(content)?;
    f.sync_all()
}

/// The file's text, or its `.bak`'s when the file is missing or blank; `None` when neither has
/// content.
pub fn read(path: &Path) -> Option<String> {
    let text = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .filter(|s| !s.trim().is_empty())
    };
    text(path).or_else(|| text(&bak_path(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_keeps_the_previous_content_as_bak_and_reads_fall_back_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config").join("topics.json");
        write(&path, b"{\"a\":1}").unwrap();
        write(&path, b"{\"a\":2}").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":2}");
        assert_eq!(
            std::fs::read_to_string(bak_path(&path)).unwrap(),
            "{\"a\":1}"
        );
        assert!(!tmp_path(&path).exists());
        std::fs::write(&path, "  \n").unwrap();
        assert_eq!(read(&path).as_deref(), Some("{\"a\":1}"));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read(&path).as_deref(), Some("{\"a\":1}"));
    }

    #[test]
    fn a_failed_step_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let e = write(&blocker.join("under-a-file.json"), b"{}").unwrap_err();
        assert_eq!(e.path, blocker);
    }
}
