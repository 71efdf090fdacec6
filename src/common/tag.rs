//! Tag hash codes and TAG subscription expressions (`MessageExtBrokerInner.tagsString2tagsCode`,
//! `FilterAPI.buildSubscriptionData`).

use std::collections::BTreeSet;

/// The expression that matches every tag.
pub const SUB_ALL: &str = "*";

/// Java `String.hashCode` over UTF-16 code units (wrapping), sign-extended: the tag code stored in
/// the consume queue. An empty tag hashes to 0.
pub fn tag_hash(tag: &str) -> i64 {
    tag.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32)) as i64
}

/// A parsed TAG expression: `*` (or empty) matches all, otherwise `A || B`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// True for `*` / empty expressions.
    pub all: bool,
    pub tags: BTreeSet<String>,
    pub codes: BTreeSet<i32>,
}

impl TagFilter {
    /// Parses as Java does: split on `||`, trim, drop empty parts; `*` or blank means all.
    pub fn parse(expr: &str) -> Self {
        let expr = expr.trim();
        if expr.is_empty() || expr == SUB_ALL {
            return Self {
                all: true,
                ..Self::default()
            };
        }
        let tags: BTreeSet<String> = expr
            .split("||")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        let codes = tags.iter().map(|t| tag_hash(t) as i32).collect();
        Self {
            all: false,
            tags,
            codes,
        }
    }

    /// Broker-side check of a consume-queue tag code.
    pub fn matches_code(&self, code: i64) -> bool {
        self.all || self.codes.contains(&(code as i32))
    }

    /// Client-side check of a tag string.
    pub fn matches_tag(&self, tag: Option<&str>) -> bool {
        self.all || tag.is_some_and(|t| self.tags.contains(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_equals_java_string_hashcode() {
        assert_eq!(tag_hash("TagA"), 2598919);
        assert_eq!(tag_hash("TagB"), 2598920);
        assert_eq!(tag_hash(""), 0);
        // "polygenelubricants".hashCode() == Integer.MIN_VALUE
        assert_eq!(tag_hash("polygenelubricants"), i32::MIN as i64);
        // non-ASCII hashes UTF-16 units: "é" = 0xE9
        assert_eq!(tag_hash("é"), 0xE9);
    }

    #[test]
    fn parse_expression() {
        let f = TagFilter::parse(" TagA || TagB ||  ");
        assert!(!f.all);
        assert_eq!(f.tags.len(), 2);
        assert!(f.codes.contains(&2598919) && f.codes.contains(&2598920));
        assert!(f.matches_code(2598919) && !f.matches_code(1));
        assert!(f.matches_tag(Some("TagB")) && !f.matches_tag(None));
        assert!(TagFilter::parse("*").all && TagFilter::parse("  ").matches_code(5));
    }
}
