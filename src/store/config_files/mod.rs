//! The broker's JSON config files under `ROOT/config/` (store-format.md §8): durable
//! persist/load with Java's `.bak`, a reader for fastjson's dialect (`common::fastjson`: bare
//! integer keys, trailing commas, single quotes) and a writer in fastjson's pretty layout (tabs,
//! `"k":v`).

#[cfg(feature = "rocksdb-cq")]
pub mod kv;
pub mod types;

use std::path::Path;

use serde::{de::DeserializeOwned, Serialize};

use crate::common::json_file::{self, bak_path};
use crate::store::error::{Result, StoreError};

pub use types::*;

/// Writes `content` durably (`common::json_file::write`: temp file, fsync, `.bak`, rename,
/// directory fsync). Java (every version) reads the result.
pub fn persist(path: &Path, content: &str) -> Result<()> {
    json_file::write(path, content.as_bytes()).map_err(|e| StoreError::io(e.path, e.source))
}

/// Reads the file, falling back to `<file>.bak` when the main file is missing or empty.
pub fn load(path: &Path) -> Option<String> {
    json_file::read(path)
}

/// Java `ConfigManager.load` for a typed file: main file, else `.bak` when the main file is
/// missing, empty or unparsable; `Ok(None)` when neither exists (start with defaults); an error
/// when the `.bak` exists but does not parse (Java refuses to start then).
pub fn load_typed<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let parse = |p: &Path| -> Option<serde_json::Result<T>> {
        let s = std::fs::read_to_string(p)
            .ok()
            .filter(|s| !s.trim().is_empty())?;
        Some(from_fastjson(&s))
    };
    match parse(path) {
        Some(Ok(v)) => return Ok(Some(v)),
        Some(Err(e)) => {
            tracing::warn!(file = %path.display(), error = %e, "config file does not parse; trying .bak")
        }
        None => {}
    }
    let bak = bak_path(path);
    match parse(&bak) {
        Some(Ok(v)) => Ok(Some(v)),
        Some(Err(e)) => Err(StoreError::Corrupt {
            path: bak,
            offset: 0,
            what: e.to_string(),
        }),
        None => Ok(None),
    }
}

/// Serialises and persists a typed file in fastjson's pretty layout.
pub fn persist_typed<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    persist(path, &to_fastjson_pretty(value))
}

/// Parses fastjson output (bare integer keys etc.) into `T`.
pub fn from_fastjson<T: DeserializeOwned>(s: &str) -> serde_json::Result<T> {
    crate::common::fastjson::from_str(s)
}

/// fastjson `PrettyFormat`: tab indentation, `"key":value`, no trailing newline.
pub fn to_fastjson_pretty<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, FastjsonFormatter::default());
    if value.serialize(&mut ser).is_err() {
        return String::from("{}");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// serde_json formatter reproducing fastjson's `PrettyFormat` as the Java broker writes its
/// config files: a tab per level, `"key":value`, each entry of a string-keyed object on its own
/// line; integer keys bare and on the object's opening line (`{0:13,1:12\n\t\t}`); arrays on one
/// line (`["a","b"]`).
#[derive(Default)]
pub struct FastjsonFormatter {
    indent: usize,
    /// per open object/array: has it an entry yet
    open: Vec<bool>,
    /// an object key is being written
    in_key: bool,
    /// a key's separator, line break and opening quote, written once its type is known
    key_pending: Option<bool>,
    /// the current key is an integer (written bare)
    key_bare: bool,
}

impl FastjsonFormatter {
    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"\t")?;
        }
        Ok(())
    }

    /// Writes what precedes a key: `,` between entries, and for a string key the line break and
    /// the opening quote.
    fn flush_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        bare: bool,
    ) -> std::io::Result<()> {
        if let Some(first) = self.key_pending.take() {
            if !first {
                w.write_all(b",")?;
            }
            self.key_bare = bare;
            if !bare {
                self.newline(w)?;
                w.write_all(b"\"")?;
            }
        }
        Ok(())
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, end: &[u8]) -> std::io::Result<()> {
        self.indent -= 1;
        let had_entries = self.open.pop().unwrap_or(false);
        if had_entries && end == b"}" {
            self.newline(w)?;
        }
        w.write_all(end)
    }
}

macro_rules! bare_key_int {
    ($($name:ident: $t:ty),*) => {$(
        fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: $t) -> std::io::Result<()> {
            if self.in_key {
                self.flush_key(w, true)?;
            }
            w.write_all(v.to_string().as_bytes())
        }
    )*};
}

impl serde_json::ser::Formatter for FastjsonFormatter {
    bare_key_int!(write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64);

    fn begin_string<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        if self.in_key {
            return Ok(()); // the quote waits: an integer key is written bare
        }
        w.write_all(b"\"")
    }
    fn end_string<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        if self.in_key {
            self.flush_key(w, false)?; // an empty string key
            if self.key_bare {
                return Ok(());
            }
        }
        w.write_all(b"\"")
    }
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if self.in_key {
            self.flush_key(w, false)?;
        }
        w.write_all(fragment.as_bytes())
    }
    fn write_char_escape<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> std::io::Result<()> {
        if self.in_key {
            self.flush_key(w, false)?;
        }
        serde_json::ser::CompactFormatter.write_char_escape(w, escape)
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent += 1;
        self.open.push(false);
        w.write_all(b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if let Some(has) = self.open.last_mut() {
            *has = true;
        }
        if first {
            Ok(())
        } else {
            w.write_all(b",")
        }
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent += 1;
        self.open.push(false);
        w.write_all(b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        _w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if let Some(has) = self.open.last_mut() {
            *has = true;
        }
        self.in_key = true;
        self.key_pending = Some(first);
        self.key_bare = false;
        Ok(())
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.in_key = false;
        Ok(())
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b":")
    }
}
