//! The message properties string: `name 0x01 value 0x02` per pair (`MessageDecoder`).
//!
//! ```text
//! | name | 0x01 | value | 0x02 | name | 0x01 | value | 0x02 | ...
//! ```
//! Decoding is lenient as Java's: a missing final `0x02` is fine, pairs with an empty name or
//! value (or no `0x01`) are dropped. Invalid UTF-8 is replaced, never rejected.

use crate::common::pairs::Pairs;

/// Separates a name from its value.
pub const NAME_VALUE_SEPARATOR: char = '\u{1}';
/// Terminates every pair.
pub const PROPERTY_SEPARATOR: char = '\u{2}';
/// Largest encoded properties string: it is stored behind an int16 length.
pub const MAX_PROPERTIES_LENGTH: usize = i16::MAX as usize;

/// Tags [`Pairs`] holding a message's properties.
pub enum MessagePropertiesTag {}

/// Properties in insertion order; names are unique.
pub type Properties = Pairs<MessagePropertiesTag>;

impl Properties {
    /// Parses a properties string (Java `string2messageProperties`); later duplicates win.
    pub fn decode(s: &str) -> Self {
        let mut props = Self::with_capacity(s.len() / 16 + 1, s.len());
        for pair in s.split(PROPERTY_SEPARATOR) {
            if let Some((k, v)) = pair.split_once(NAME_VALUE_SEPARATOR) {
                if !k.is_empty() && !v.is_empty() {
                    props.push_unchecked(k, v);
                }
            }
        }
        props.dedup_keep_last();
        props
    }

    /// Parses raw bytes, replacing invalid UTF-8.
    pub fn decode_bytes(b: &[u8]) -> Self {
        Self::decode(&String::from_utf8_lossy(b))
    }

    /// Encodes every pair, each terminated by `0x02` (Java `messageProperties2String`).
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.encoded_len());
        for (k, v) in self.iter() {
            out.push_str(k);
            out.push(NAME_VALUE_SEPARATOR);
            out.push_str(v);
            out.push(PROPERTY_SEPARATOR);
        }
        out
    }

    pub fn encoded_len(&self) -> usize {
        self.iter().map(|(k, v)| k.len() + v.len() + 2).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_terminates_every_pair() {
        let p: Properties = [("TAGS", "TagA"), ("WAIT", "true")].into_iter().collect();
        assert_eq!(p.encode(), "TAGS\u{1}TagA\u{2}WAIT\u{1}true\u{2}");
        assert_eq!(p.encoded_len(), p.encode().len());
    }

    #[test]
    fn decode_is_lenient_like_java() {
        let p = Properties::decode("A\u{1}1\u{2}\u{1}x\u{2}B\u{1}\u{2}junk\u{2}C\u{1}3=\u{1}4");
        let got: Vec<_> = p.iter().collect();
        assert_eq!(got, vec![("A", "1"), ("C", "3=\u{1}4")]);
        assert!(Properties::decode("").is_empty());
    }

    #[test]
    fn round_trip_and_lossy_bytes() {
        let p: Properties = [("UNIQ_KEY", "AB"), ("KEYS", "k1 k2")]
            .into_iter()
            .collect();
        assert_eq!(Properties::decode(&p.encode()), p);
        let q = Properties::decode_bytes(b"K\x01\xff\x02");
        assert_eq!(q.get("K"), Some("\u{fffd}"));
    }
}
