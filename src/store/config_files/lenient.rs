//! Normalises fastjson's JSON dialect to strict JSON: bare keys (`{0:250}`) become quoted,
//! single-quoted strings become double-quoted, trailing commas are dropped.

/// Rewrites `s` as strict JSON (best effort; strict input passes through unchanged).
pub fn normalize(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 16);
    let mut i = 0;
    // Stack of containers: true = object.
    let mut stack: Vec<bool> = Vec::new();
    let mut expect_key = false;
    while i < b.len() {
        let c = b[i];
        match c {
            '"' | '\'' => {
                let (lit, next) = read_string(&b, i);
                out.push_str(&lit);
                i = next;
                continue;
            }
            '{' => {
                stack.push(true);
                expect_key = true;
                out.push(c);
            }
            '[' => {
                stack.push(false);
                expect_key = false;
                out.push(c);
            }
            '}' | ']' => {
                trim_trailing_comma(&mut out);
                stack.pop();
                expect_key = false;
                out.push(c);
            }
            ',' => {
                expect_key = stack.last() == Some(&true);
                out.push(c);
            }
            ':' => {
                expect_key = false;
                out.push(c);
            }
            c if expect_key && !c.is_whitespace() => {
                let start = i;
                while i < b.len() && b[i] != ':' && !b[i].is_whitespace() {
                    i += 1;
                }
                out.push('"');
                out.extend(&b[start..i]);
                out.push('"');
                expect_key = false;
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

fn read_string(b: &[char], start: usize) -> (String, usize) {
    let quote = b[start];
    let mut s = String::from('"');
    let mut i = start + 1;
    while i < b.len() {
        let c = b[i];
        if c == '\\' && i + 1 < b.len() {
            if quote == '\'' && b[i + 1] == '\'' {
                s.push('\'');
            } else {
                s.push(c);
                s.push(b[i + 1]);
            }
            i += 2;
            continue;
        }
        if c == quote {
            s.push('"');
            return (s, i + 1);
        }
        if c == '"' {
            s.push_str("\\\"");
        } else {
            s.push(c);
        }
        i += 1;
    }
    (s, i)
}

fn trim_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_keys_and_trailing_commas() {
        let s = "{\n\t\"offsetTable\":{\n\t\t\"T@g\":{0:250,1:248,3:12\n\t\t},\n\t}\n}";
        let v: serde_json::Value = serde_json::from_str(&normalize(s)).unwrap();
        assert_eq!(v["offsetTable"]["T@g"]["1"], 248);
        let v: serde_json::Value = serde_json::from_str(&normalize("{'a':'x\"y',}")).unwrap();
        assert_eq!(v["a"], "x\"y");
    }
}
