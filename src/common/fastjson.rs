//! Reading fastjson's JSON dialect, for the broker's `config/*.json` files and for request
//! bodies: `normalize` rewrites it into standard JSON for serde.
//!
//! Accepted beyond standard JSON: bare keys (`{0:250}`, `{name:1}`) are quoted; object or array
//! keys (`{{"topic":"T",...}:5}`) become strings holding their JSON text; single-quoted strings
//! become double-quoted (`\'` unescaped, `"` escaped); any number of stray commas is dropped
//! (`[1,,2,]`, `{,"a":1,}`, fastjson `AllowArbitraryCommas`). Whitespace between tokens is
//! dropped; string contents, numbers and literals are copied unchanged for serde to judge.

use serde::de::{DeserializeOwned, Error as _};

/// Deepest nesting the reader accepts (serde_json's own limit).
pub const MAX_DEPTH: usize = 128;

/// Where and why the text is not fastjson's JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad JSON at byte {offset}: {what}")]
pub struct NormalizeError {
    pub offset: usize,
    pub what: &'static str,
}

/// Parses standard JSON directly, anything else after [`normalize`], and binds it with
/// fastjson's leniency (`common::lenient`); never panics.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => {
            let strict = normalize(text).map_err(serde_json::Error::custom)?;
            serde_json::from_str(&strict)?
        }
    };
    super::lenient::from_value(value)
}

/// Rewrites fastjson's non-standard JSON into standard JSON (see the module doc).
pub fn normalize(text: &str) -> Result<String, NormalizeError> {
    let mut n = Normalizer {
        src: text.as_bytes(),
        pos: 0,
    };
    let mut out = String::with_capacity(text.len() + 16);
    n.value(&mut out, 0)?;
    n.skip_ws();
    if n.pos != n.src.len() {
        return Err(n.error("trailing characters"));
    }
    Ok(out)
}

struct Normalizer<'a> {
    src: &'a [u8],
    pos: usize,
}

impl Normalizer<'_> {
    fn error(&self, what: &'static str) -> NormalizeError {
        NormalizeError {
            offset: self.pos,
            what,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn value(&mut self, out: &mut String, depth: usize) -> Result<(), NormalizeError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_ws();
        match self.peek() {
            Some(b'{') => self.container(out, depth, b'}'),
            Some(b'[') => self.container(out, depth, b']'),
            Some(q @ (b'"' | b'\'')) => self.string(out, q),
            Some(_) => {
                let token = self.bare_token()?;
                out.push_str(token);
                Ok(())
            }
            None => Err(self.error("unexpected end")),
        }
    }

    /// An object (`close` is `}`) or an array (`]`): entries separated by any number of commas.
    fn container(
        &mut self,
        out: &mut String,
        depth: usize,
        close: u8,
    ) -> Result<(), NormalizeError> {
        out.push(self.src[self.pos] as char);
        self.pos += 1;
        let mut first = true;
        loop {
            self.skip_commas();
            match self.peek() {
                Some(b) if b == close => {
                    self.pos += 1;
                    out.push(close as char);
                    return Ok(());
                }
                None if close == b'}' => return Err(self.error("unterminated object")),
                None => return Err(self.error("unterminated array")),
                Some(_) => {}
            }
            if !first {
                out.push(',');
            }
            first = false;
            if close == b'}' {
                self.entry(out, depth)?;
            } else {
                self.value(out, depth + 1)?;
            }
            self.skip_ws();
            match self.peek() {
                Some(b) if b == b',' || b == close => {}
                _ if close == b'}' => return Err(self.error("expected ',' or '}'")),
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// `key : value` inside an object.
    fn entry(&mut self, out: &mut String, depth: usize) -> Result<(), NormalizeError> {
        self.key(out, depth)?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected ':'"));
        }
        self.pos += 1;
        out.push(':');
        self.value(out, depth + 1)
    }

    /// Skips whitespace and any number of commas (fastjson `AllowArbitraryCommas`).
    fn skip_commas(&mut self) {
        loop {
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                return;
            }
        }
    }

    fn key(&mut self, out: &mut String, depth: usize) -> Result<(), NormalizeError> {
        match self.peek() {
            Some(q @ (b'"' | b'\'')) => self.string(out, q),
            Some(b'{') | Some(b'[') => {
                let mut inner = String::new();
                self.value(&mut inner, depth + 1)?;
                push_json_string(out, &inner);
                Ok(())
            }
            _ => {
                let token = self.bare_token()?;
                push_json_string(out, token);
                Ok(())
            }
        }
    }

    /// A number, literal or unquoted name: everything up to a delimiter.
    fn bare_token(&mut self) -> Result<&str, NormalizeError> {
        let start = self.pos;
        while self.peek().is_some_and(|b| {
            !matches!(b, b',' | b':' | b'}' | b']' | b'{' | b'[' | b'"' | b'\'')
                && !b.is_ascii_whitespace()
        }) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error("unexpected character"));
        }
        std::str::from_utf8(&self.src[start..self.pos]).map_err(|_| self.error("bad UTF-8"))
    }

    /// Copies a string literal as a double-quoted one. Escapes are kept, except that in a
    /// single-quoted string `\'` becomes `'` and a bare `"` is escaped.
    fn string(&mut self, out: &mut String, quote: u8) -> Result<(), NormalizeError> {
        let start = self.pos + 1;
        let mut i = start;
        let mut copied = start;
        out.push('"');
        loop {
            match self.src.get(i) {
                None => {
                    self.pos = i;
                    return Err(self.error("unterminated string"));
                }
                Some(b'\\') if quote == b'\'' && self.src.get(i + 1) == Some(&b'\'') => {
                    self.copy(out, copied, i)?;
                    out.push('\'');
                    i += 2;
                    copied = i;
                }
                Some(b'\\') => i += 2,
                Some(&b) if b == quote => break,
                Some(b'"') => {
                    self.copy(out, copied, i)?;
                    out.push_str("\\\"");
                    i += 1;
                    copied = i;
                }
                Some(_) => i += 1,
            }
        }
        self.copy(out, copied, i)?;
        out.push('"');
        self.pos = i + 1;
        Ok(())
    }

    fn copy(&self, out: &mut String, from: usize, to: usize) -> Result<(), NormalizeError> {
        let text = std::str::from_utf8(&self.src[from..to]).map_err(|_| NormalizeError {
            offset: from,
            what: "bad UTF-8",
        })?;
        out.push_str(text);
        Ok(())
    }
}

/// Appends `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::from(s).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn config_file_forms() {
        let s = "{\n\t\"offsetTable\":{\n\t\t\"T@g\":{0:250,1:248,3:12\n\t\t},\n\t}\n}";
        let v: Value = from_str(s).unwrap();
        assert_eq!(v["offsetTable"]["T@g"]["1"], 248);
        let v: Value = from_str("{'a':'x\"y',}").unwrap();
        assert_eq!(v["a"], "x\"y");
        let v: Value = from_str(r#"{'a':'it\'s \"q\" \\'}"#).unwrap();
        assert_eq!(v["a"], "it's \"q\" \\");
    }

    #[test]
    fn body_forms() {
        let odd =
            r#"{zeta:1,'alpha':0.5,,"addrs":{ 0 : 'x', },"o":{{"topic":"T"}:5},"l":[,1,,2,],}"#;
        let v: Value = from_str(odd).unwrap();
        assert_eq!(
            (v["zeta"].as_i64(), v["alpha"].as_f64()),
            (Some(1), Some(0.5))
        );
        assert_eq!(v["addrs"]["0"], "x");
        assert_eq!(v["o"][r#"{"topic":"T"}"#], 5);
        assert_eq!(v["l"], serde_json::json!([1, 2]));
        assert_eq!(normalize(" {a:[1, 2]} ").unwrap(), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [
            "{", "{\"a\"", "[1,", "{{}", "\"abc", "{'a':\\", "{a b}", "1 2", "'\\",
        ] {
            assert!(normalize(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(1000);
        assert!(normalize(&deep).is_err());
        assert!(from_str::<Value>(&deep).is_err());
    }
}
