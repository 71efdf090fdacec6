//! Typed custom headers. Each header converts to and from `extFields` with Java's rules: every
//! value a string; integers in decimal; booleans `"true"`/`"false"` (anything else reads as false);
//! absent fields stay `None`. Reading is lenient (surrounding whitespace, `+`), writing is exact.

pub mod namesrv;

use super::command::ExtFields;
use super::error::RemotingError;

/// A typed header carried in `extFields`.
pub trait CommandHeader: Sized {
    /// Writes every non-null field under its Java field name.
    fn write_to(&self, ext: &mut ExtFields);
    /// Reads the header; a missing required field or an unparsable number is an error.
    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError>;
}

/// Checked reads of `extFields` values, naming the field on failure.
pub trait ExtRead {
    fn str_opt(&self, key: &'static str) -> Option<&str>;

    fn string(&self, key: &'static str) -> Result<String, RemotingError> {
        self.str_opt(key).map(str::to_string).ok_or(missing(key))
    }

    fn string_opt(&self, key: &'static str) -> Option<String> {
        self.str_opt(key).map(str::to_string)
    }

    fn i32(&self, key: &'static str) -> Result<i32, RemotingError> {
        self.i32_opt(key)?.ok_or(missing(key))
    }

    fn i32_opt(&self, key: &'static str) -> Result<Option<i32>, RemotingError> {
        self.str_opt(key).map(|v| parse_num(key, v)).transpose()
    }

    fn i64(&self, key: &'static str) -> Result<i64, RemotingError> {
        self.i64_opt(key)?.ok_or(missing(key))
    }

    fn i64_opt(&self, key: &'static str) -> Result<Option<i64>, RemotingError> {
        self.str_opt(key).map(|v| parse_num(key, v)).transpose()
    }

    /// Java's `Boolean.parseBoolean`: true only for a case-insensitive `"true"`.
    fn bool_opt(&self, key: &'static str) -> Option<bool> {
        self.str_opt(key)
            .map(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    fn bool_or(&self, key: &'static str, default: bool) -> bool {
        self.bool_opt(key).unwrap_or(default)
    }
}

impl ExtRead for ExtFields {
    fn str_opt(&self, key: &'static str) -> Option<&str> {
        self.get(key)
    }
}

fn missing(key: &'static str) -> RemotingError {
    RemotingError::Header {
        field: key,
        what: "missing".to_string(),
    }
}

fn parse_num<T: std::str::FromStr>(key: &'static str, v: &str) -> Result<T, RemotingError> {
    let t = v.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    t.parse().map_err(|_| RemotingError::Header {
        field: key,
        what: format!("{v:?} is not a number"),
    })
}

/// Writes optional fields into `extFields` with Java's `toString()` forms.
pub trait ExtWrite {
    fn put<V: ToString>(&mut self, key: &str, value: V);

    fn put_opt<V: ToString>(&mut self, key: &str, value: &Option<V>) {
        if let Some(v) = value {
            self.put(key, v.to_string());
        }
    }
}

impl ExtWrite for ExtFields {
    fn put<V: ToString>(&mut self, key: &str, value: V) {
        self.insert(key, value.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_numbers_and_java_booleans() {
        let ext: ExtFields = [("q", " 7"), ("o", "+12"), ("b", "TRUE"), ("x", "yes")]
            .into_iter()
            .collect();
        assert_eq!(ext.i32("q").unwrap(), 7);
        assert_eq!(ext.i64("o").unwrap(), 12);
        assert_eq!(ext.bool_opt("b"), Some(true));
        assert_eq!(ext.bool_opt("x"), Some(false));
        assert!(ext.i32("missing").is_err());
    }
}
