//! String pairs in insertion order with unique keys, kept in one buffer: the storage behind a
//! request's `extFields` and a message's properties. Decoding a header of fifteen fields makes two
//! allocations instead of thirty. (Measured alone, on top of mimalloc, the broker's CPU per message
//! changed within the benchmark's noise.)

use std::fmt;

/// Pairs of strings; a later insert of the same key replaces the value in place.
#[derive(Clone, Default)]
pub struct Pairs {
    /// Every key and value, back to back; a replaced value leaves its old bytes behind.
    buf: String,
    /// Per pair: the byte ranges of its key and its value in `buf`.
    spans: Vec<Span>,
}

#[derive(Clone, Copy)]
struct Span {
    key: (usize, usize),
    value: (usize, usize),
}

impl Pairs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `pairs` pairs totalling `bytes` bytes of keys and values.
    pub fn with_capacity(pairs: usize, bytes: usize) -> Self {
        Self {
            buf: String::with_capacity(bytes),
            spans: Vec::with_capacity(pairs),
        }
    }

    fn key(&self, s: &Span) -> &str {
        &self.buf[s.key.0..s.key.1]
    }

    fn value(&self, s: &Span) -> &str {
        &self.buf[s.value.0..s.value.1]
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.spans.iter().position(|s| self.key(s) == key)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.spans
            .iter()
            .find(|s| self.key(s) == key)
            .map(|s| self.value(s))
    }

    fn push_str(&mut self, s: &str) -> (usize, usize) {
        let start = self.buf.len();
        self.buf.push_str(s);
        (start, self.buf.len())
    }

    /// Sets `key`, replacing an earlier value in place (its position in the order is kept).
    pub fn insert(&mut self, key: &str, value: &str) {
        match self.position(key) {
            Some(i) => {
                let span = self.push_str(value);
                self.spans[i].value = span;
            }
            None => {
                let key = self.push_str(key);
                let value = self.push_str(value);
                self.spans.push(Span { key, value });
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        let i = self.position(key)?;
        let s = self.spans.remove(i);
        Some(self.value(&s).to_owned())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans.iter().map(|s| (self.key(s), self.value(s)))
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

impl PartialEq for Pairs {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Pairs {}

impl fmt::Debug for Pairs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replaces_in_place_and_keeps_order() {
        let mut p = Pairs::new();
        p.insert("a", "1");
        p.insert("bb", "");
        p.insert("c", "3");
        p.insert("a", "one");
        assert_eq!(
            p.iter().collect::<Vec<_>>(),
            vec![("a", "one"), ("bb", ""), ("c", "3")]
        );
        assert_eq!(p.get("bb"), Some(""));
        assert_eq!(p.get("b"), None);
        assert_eq!(p.remove("bb").as_deref(), Some(""));
        assert_eq!(p.remove("bb"), None);
        assert_eq!(p.len(), 2);
        assert_eq!(p.get("c"), Some("3"));
    }

    #[test]
    fn equality_ignores_left_over_bytes() {
        let mut a = Pairs::with_capacity(2, 8);
        a.insert("k", "old");
        a.insert("k", "v");
        let mut b = Pairs::new();
        b.insert("k", "v");
        assert_eq!(a, b);
        assert_eq!(format!("{b:?}"), r#"{"k": "v"}"#);
        b.insert("x", "y");
        assert_ne!(a, b);
    }

    #[test]
    fn multi_byte_text_survives() {
        let mut p = Pairs::new();
        p.insert("键", "值ü");
        assert_eq!(p.get("键"), Some("值ü"));
    }
}
