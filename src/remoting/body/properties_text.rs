//! Java properties text bodies: GET_BROKER_CONFIG (26) answers `key=value\n` per entry
//! (`MixAll.properties2String`); UPDATE_BROKER_CONFIG (25) is parsed as `Properties.load` does.
//!
//! ```text
//! # comment            ! comment
//! key=value            key: value            key value
//! long\
//!     continued=yes    escapes: \t \n \r \f \uXXXX, and \x for any other x
//! ```

use crate::remoting::error::RemotingError;

/// Writes entries as `key=value\n`, unescaped, in the given order (Java's writer does not escape).
pub fn encode_properties_text<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (k, v) in entries {
        out.push_str(k);
        out.push('=');
        out.push_str(v);
        out.push('\n');
    }
    out
}

/// Parses properties text; later duplicates replace earlier ones. Errors only on non-UTF-8 input
/// or a malformed `\u` escape.
pub fn decode_properties_text(body: &[u8]) -> Result<Vec<(String, String)>, RemotingError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| RemotingError::Body(format!("properties text is not UTF-8: {e}")))?;
    let mut out: Vec<(String, String)> = Vec::new();
    for line in logical_lines(text) {
        let (k, v) = split_entry(&line);
        let (k, v) = (unescape(k)?, unescape(v)?);
        match out.iter_mut().find(|(ek, _)| *ek == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    Ok(out)
}

/// Joins continuation lines and drops blank and comment lines.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur: Option<String> = None;
    let text = text.replace("\r\n", "\n");
    for raw in text.split(['\n', '\r']) {
        let piece = raw.trim_start_matches([' ', '\t', '\u{c}']);
        let joined = match cur.take() {
            Some(mut c) => {
                c.push_str(piece);
                c
            }
            None if piece.is_empty() || piece.starts_with(['#', '!']) => continue,
            None => piece.to_string(),
        };
        let trailing = joined.chars().rev().take_while(|&c| c == '\\').count();
        if trailing % 2 == 1 {
            let mut j = joined;
            j.pop();
            cur = Some(j);
        } else {
            lines.push(joined);
        }
    }
    lines.extend(cur);
    lines
}

/// Splits at the first unescaped `=`, `:` or whitespace (then skips one `=`/`:` after blanks).
fn split_entry(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' => {
                return (
                    &line[..i],
                    line[i + 1..].trim_start_matches([' ', '\t', '\u{c}']),
                )
            }
            ' ' | '\t' | '\u{c}' => {
                let rest = line[i..].trim_start_matches([' ', '\t', '\u{c}']);
                let rest = rest.strip_prefix(['=', ':']).unwrap_or(rest);
                return (&line[..i], rest.trim_start_matches([' ', '\t', '\u{c}']));
            }
            _ => {}
        }
    }
    (line, "")
}

fn unescape(s: &str) -> Result<String, RemotingError> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let ch = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or_else(|| RemotingError::Body(format!("malformed \\u{hex} escape")))?;
                out.push(ch);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
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
        assert!(decode_properties_text(b"k=\\u12").is_err());
        assert!(decode_properties_text(b"\xff=1").is_err());
    }
}
