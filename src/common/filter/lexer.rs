//! Tokens of the SQL92 selector grammar (Java `SelectorParser.jj`, JavaCC, keywords and
//! identifiers case-insensitive).

use super::FilterError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Not,
    And,
    Or,
    Between,
    In,
    True,
    False,
    Null,
    Is,
    Contains,
    StartsWith,
    EndsWith,
    /// `DECIMAL_LITERAL` image without its `l`/`L` suffix.
    Decimal(String),
    /// `FLOATING_POINT_LITERAL` image.
    Float(String),
    /// `STRING_LITERAL` decoded (`''` → `'`).
    Str(String),
    Id(String),
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    LParen,
    RParen,
    Comma,
    Plus,
    Minus,
    Eof,
}

/// Tokenizes `sql`. JavaCC lexes on demand, so a bad character is an error only when the parser
/// reaches it: the list ends with `Err` there instead of failing up front.
pub fn tokenize(sql: &str) -> Vec<Result<Tok, FilterError>> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        pos = skip_blanks(&chars, pos);
        match next_token(&chars, pos) {
            Ok((Tok::Eof, _)) => {
                out.push(Ok(Tok::Eof));
                return out;
            }
            Ok((tok, end)) => {
                out.push(Ok(tok));
                pos = end;
            }
            Err(e) => {
                out.push(Err(e));
                return out;
            }
        }
    }
}

/// Whitespace, `-- ...` line comments (ended by a line break) and `/* ... */` block comments.
fn skip_blanks(c: &[char], mut pos: usize) -> usize {
    loop {
        match c.get(pos) {
            Some(' ' | '\t' | '\n' | '\r' | '\x0c') => pos += 1,
            Some('-') if c.get(pos + 1) == Some(&'-') => {
                let Some(nl) = c[pos..].iter().position(|&x| x == '\n' || x == '\r') else {
                    return pos;
                };
                pos += nl + 1;
            }
            Some('/') if c.get(pos + 1) == Some(&'*') => {
                let body = c.get(pos + 2..).unwrap_or(&[]);
                let Some(end) = body.windows(2).position(|w| w == ['*', '/']) else {
                    return pos;
                };
                pos += 2 + end + 2;
            }
            _ => return pos,
        }
    }
}

fn next_token(c: &[char], pos: usize) -> Result<(Tok, usize), FilterError> {
    let Some(&ch) = c.get(pos) else {
        return Ok((Tok::Eof, pos));
    };
    let two = |t2: char| c.get(pos + 1) == Some(&t2);
    let op = match ch {
        '=' => Some((Tok::Eq, 1)),
        '<' if two('>') => Some((Tok::Ne, 2)),
        '<' if two('=') => Some((Tok::Le, 2)),
        '<' => Some((Tok::Lt, 1)),
        '>' if two('=') => Some((Tok::Ge, 2)),
        '>' => Some((Tok::Gt, 1)),
        '(' => Some((Tok::LParen, 1)),
        ')' => Some((Tok::RParen, 1)),
        ',' => Some((Tok::Comma, 1)),
        '+' => Some((Tok::Plus, 1)),
        '-' => Some((Tok::Minus, 1)),
        _ => None,
    };
    if let Some((tok, n)) = op {
        return Ok((tok, pos + n));
    }
    match ch {
        '\'' => string_literal(c, pos),
        '0'..='9' | '.' => number(c, pos),
        'a'..='z' | 'A'..='Z' | '_' | '$' => Ok(word(c, pos)),
        _ => Err(FilterError::Lex { pos, found: ch }),
    }
}

fn string_literal(c: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let mut s = String::new();
    let mut pos = start + 1;
    loop {
        match c.get(pos) {
            None => return Err(FilterError::UnterminatedString { pos: start }),
            Some('\'') if c.get(pos + 1) == Some(&'\'') => {
                s.push('\'');
                pos += 2;
            }
            Some('\'') => return Ok((Tok::Str(s), pos + 1)),
            Some(&ch) => {
                s.push(ch);
                pos += 1;
            }
        }
    }
}

fn digits(c: &[char], mut pos: usize) -> usize {
    while c.get(pos).is_some_and(|d| d.is_ascii_digit()) {
        pos += 1;
    }
    pos
}

/// `E[+-]?digits` at `pos`, if present: its end.
fn exponent(c: &[char], pos: usize) -> Option<usize> {
    if !matches!(c.get(pos), Some('e' | 'E')) {
        return None;
    }
    let mut p = pos + 1;
    if matches!(c.get(p), Some('+' | '-')) {
        p += 1;
    }
    let end = digits(c, p);
    (end > p).then_some(end)
}

/// Longest match of DECIMAL_LITERAL (`0` | `[1-9][0-9]*[lL]?`) and FLOATING_POINT_LITERAL.
fn number(c: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let image = |end: usize| c[start..end].iter().collect::<String>();
    let int_end = digits(c, start);
    // floating: digits "." digits? exp? | "." digits exp? | digits exp
    let float_end = if c.get(int_end) == Some(&'.') {
        let frac_end = digits(c, int_end + 1);
        if int_end == start && frac_end == int_end + 1 {
            None
        } else {
            Some(exponent(c, frac_end).unwrap_or(frac_end))
        }
    } else if int_end > start {
        exponent(c, int_end)
    } else {
        None
    };
    let dec_end = if int_end == start {
        None
    } else if c[start] == '0' {
        Some(start + 1)
    } else {
        Some(int_end)
    };
    let dec_with_suffix = dec_end.map(|e| {
        let suffixed = c[start] != '0' && matches!(c.get(e), Some('l' | 'L'));
        (e, if suffixed { e + 1 } else { e })
    });
    match (dec_with_suffix, float_end) {
        (Some((_, dec_full)), Some(f)) if f > dec_full => Ok((Tok::Float(image(f)), f)),
        (Some((digits_end, full)), _) => Ok((Tok::Decimal(image(digits_end)), full)),
        (None, Some(f)) => Ok((Tok::Float(image(f)), f)),
        (None, None) => Err(FilterError::Lex {
            pos: start,
            found: c[start],
        }),
    }
}

fn word(c: &[char], start: usize) -> (Tok, usize) {
    let mut end = start + 1;
    while c
        .get(end)
        .is_some_and(|x| x.is_ascii_alphanumeric() || *x == '_' || *x == '$')
    {
        end += 1;
    }
    let w: String = c[start..end].iter().collect();
    let tok = match w.to_ascii_uppercase().as_str() {
        "NOT" => Tok::Not,
        "AND" => Tok::And,
        "OR" => Tok::Or,
        "BETWEEN" => Tok::Between,
        "IN" => Tok::In,
        "TRUE" => Tok::True,
        "FALSE" => Tok::False,
        "NULL" => Tok::Null,
        "IS" => Tok::Is,
        "CONTAINS" => Tok::Contains,
        "STARTSWITH" => Tok::StartsWith,
        "ENDSWITH" => Tok::EndsWith,
        _ => Tok::Id(w),
    };
    (tok, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s).into_iter().map(|t| t.unwrap()).collect()
    }

    #[test]
    fn numbers_follow_javacc_longest_match() {
        assert_eq!(toks("5")[0], Tok::Decimal("5".into()));
        assert_eq!(toks("5L")[0], Tok::Decimal("5".into()));
        assert_eq!(toks("5.5")[0], Tok::Float("5.5".into()));
        assert_eq!(toks("5.")[0], Tok::Float("5.".into()));
        assert_eq!(toks(".5e3")[0], Tok::Float(".5e3".into()));
        assert_eq!(toks("5E10")[0], Tok::Float("5E10".into()));
        assert_eq!(
            toks("05"),
            vec![Tok::Decimal("0".into()), Tok::Decimal("5".into()), Tok::Eof]
        );
    }

    #[test]
    fn strings_keywords_and_comments() {
        assert_eq!(toks("'it''s'")[0], Tok::Str("it's".into()));
        assert_eq!(toks("and")[0], Tok::And);
        assert_eq!(toks("andx")[0], Tok::Id("andx".into()));
        assert_eq!(toks("/* c */ a -- x\n")[0], Tok::Id("a".into()));
        assert!(tokenize("a # b").iter().any(|t| t.is_err()));
    }
}
