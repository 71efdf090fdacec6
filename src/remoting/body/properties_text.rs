//! Java properties text bodies: GET_BROKER_CONFIG (26) answers `key=value\n` per entry
//! (`MixAll.properties2String`); UPDATE_BROKER_CONFIG (25) is parsed as `Properties.load` does.
//!
//! ```text
//! # comment            ! comment
//! key=value            key: value            key value
//! long\
//!     continued=yes    escapes: \t \n \r \f \uXXXX, and \x for any other x
//! ```

use crate::common::java_properties;
use crate::remoting::error::RemotingError;

/// Writes entries as `key=value\n`, unescaped, in the given order (Java's writer does not escape).
pub fn encode_properties_text<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let pairs: Vec<(String, String)> = entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    java_properties::write(&pairs)
}

/// Parses properties text as `Properties.load` does (later duplicates win). Errors only on
/// non-UTF-8 input.
pub fn decode_properties_text(body: &[u8]) -> Result<Vec<(String, String)>, RemotingError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| RemotingError::Body(format!("properties text is not UTF-8: {e}")))?;
    Ok(java_properties::parse(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_java_broker_config_text() {
        let text = encode_properties_text([("brokerName", "broker-a"), ("listenPort", "10911")]);
        assert_eq!(text, "brokerName=broker-a\nlistenPort=10911\n");
        let back = decode_properties_text(text.as_bytes()).unwrap();
        assert_eq!(back[1], ("listenPort".to_string(), "10911".to_string()));
    }

    #[test]
    fn parses_like_java_properties_load() {
        let text = "# c\n! c\n  a = 1\nb:2\nc 3\nd\\\r\n   e=4\nf=x\\u0041\\ty\ng\nh=\\\nb=5\r\n";
        let got = decode_properties_text(text.as_bytes()).unwrap();
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("de", "4"),
                ("f", "xA\ty"),
                ("g", ""),
                ("h", "b=5")
            ]
        );
        // A short \u escape is read leniently (as far as it goes), where Java would throw.
        assert_eq!(
            decode_properties_text(b"k=\\u12").unwrap(),
            vec![("k".to_string(), "\u{12}".to_string())]
        );
        assert!(decode_properties_text(b"\xff=1").is_err());
    }
}
