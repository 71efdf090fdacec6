//! Java `.properties` text, as `broker.conf`, `namesrv.conf` and the GET/UPDATE_*_CONFIG bodies
//! use it: `key=value`, `key:value` or `key value`; `#`/`!` comments; `\` line continuations;
//! `\t \n \r \f \uXXXX` escapes. Written back as `key=value\n`.

/// Parses properties text into (key, value) pairs in file order; a key given twice keeps its
/// last value (in the position of its last occurrence), as `Properties.load` leaves it.
pub fn parse(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in parse_all(text) {
        out.retain(|(ek, _)| *ek != k);
        out.push((k, v));
    }
    out
}

fn parse_all(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut logical = String::new();
    for raw in text.lines() {
        let line = raw.trim_start();
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        if ends_with_odd_backslashes(line) {
            logical.push_str(&line[..line.len() - 1]);
            continue;
        }
        logical.push_str(line);
        if let Some(kv) = split_pair(&logical) {
            out.push(kv);
        }
        logical.clear();
    }
    if let Some(kv) = split_pair(&logical) {
        out.push(kv);
    }
    out
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

fn split_pair(line: &str) -> Option<(String, String)> {
    if line.trim().is_empty() {
        return None;
    }
    let mut key_end = line.len();
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || c.is_whitespace() {
            key_end = i;
            break;
        }
    }
    let key = unescape(&line[..key_end]);
    let mut rest = line[key_end..].trim_start();
    if let Some(r) = rest.strip_prefix(['=', ':']) {
        rest = r.trim_start();
    }
    Some((key, unescape(rest.trim_end())))
}

fn unescape(s: &str) -> String {
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
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Writes pairs as `key=value` lines, the form Java's `MixAll.properties2String` gives.
pub fn write(pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (k, v) in pairs {
        out.push_str(k);
        out.push('=');
        out.push_str(v);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_java_syntax() {
        let text = "# comment\n! also\nbrokerName = broker-a\nlistenPort:10911\nflushDiskType ASYNC_FLUSH\n\
                    messageDelayLevel=1s 5s \\\n    10s\nk\\=x=v\\u0041\n\n  emptyKey=\n";
        let p = parse(text);
        assert_eq!(
            p,
            vec![
                ("brokerName".into(), "broker-a".into()),
                ("listenPort".into(), "10911".into()),
                ("flushDiskType".into(), "ASYNC_FLUSH".into()),
                ("messageDelayLevel".into(), "1s 5s 10s".into()),
                ("k=x".into(), "vA".into()),
                ("emptyKey".into(), "".into()),
            ]
        );
    }
}
