//! `SubscriptionData`: one topic subscription inside heartbeats, consumer connections and
//! QUERY_CONSUME_QUEUE bodies.
//!
//! ```text
//! {"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG","subString":"TagA",
//!  "subVersion":1700000000000,"tagsSet":["TagA"],"topic":"T"}
//! ```
//! Go writes `codeSet` elements as strings and `subVersion` in nanoseconds; both are accepted.

use serde::{Deserialize, Deserializer, Serialize};

use super::fastjson;
use crate::common::tag::{tag_hash, TagFilter, SUB_ALL};

pub const EXPRESSION_TYPE_TAG: &str = "TAG";
pub const EXPRESSION_TYPE_SQL92: &str = "SQL92";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionData {
    pub class_filter_mode: bool,
    #[serde(deserialize_with = "lenient_codes")]
    pub code_set: Vec<i32>,
    pub expression_type: String,
    pub sub_string: String,
    pub sub_version: i64,
    pub tags_set: Vec<String>,
    pub topic: String,
}

impl Default for SubscriptionData {
    fn default() -> Self {
        Self {
            class_filter_mode: false,
            code_set: Vec::new(),
            expression_type: EXPRESSION_TYPE_TAG.to_string(),
            sub_string: SUB_ALL.to_string(),
            sub_version: 0,
            tags_set: Vec::new(),
            topic: String::new(),
        }
    }
}

impl SubscriptionData {
    /// `FilterAPI.buildSubscriptionData`: a TAG expression fills `tagsSet`/`codeSet`; `*` or
    /// blank leaves them empty; SQL92 expressions are kept as text.
    pub fn build(topic: &str, expression: &str, expression_type: &str, sub_version: i64) -> Self {
        let mut sd = Self {
            topic: topic.to_string(),
            sub_version,
            expression_type: expression_type.to_string(),
            ..Self::default()
        };
        if !sd.is_tag_type() {
            sd.sub_string = expression.to_string();
            return sd;
        }
        let filter = TagFilter::parse(expression);
        if !filter.all {
            sd.sub_string = expression.to_string();
            sd.tags_set = filter.tags.into_iter().collect();
            sd.code_set = sd.tags_set.iter().map(|t| tag_hash(t) as i32).collect();
        }
        sd
    }

    /// TAG (also when the type is blank).
    pub fn is_tag_type(&self) -> bool {
        self.expression_type.is_empty() || self.expression_type == EXPRESSION_TYPE_TAG
    }

    /// The broker-side tag filter: `*` or an empty code set matches all.
    pub fn tag_filter(&self) -> TagFilter {
        if self.sub_string.trim() == SUB_ALL || self.code_set.is_empty() && self.tags_set.is_empty()
        {
            return TagFilter::parse(SUB_ALL);
        }
        TagFilter {
            all: false,
            tags: self.tags_set.iter().cloned().collect(),
            codes: self.code_set.iter().copied().collect(),
        }
    }
}

fn lenient_codes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i32>, D::Error> {
    #[derive(Deserialize)]
    struct Code(#[serde(deserialize_with = "fastjson::lenient_i64")] i64);
    let codes: Option<Vec<Code>> = Option::deserialize(d)?;
    Ok(codes
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.0 as i32)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_from_tag_expression_like_java() {
        let sd = SubscriptionData::build("T", "TagA || TagB", "TAG", 1);
        assert_eq!(sd.tags_set, vec!["TagA", "TagB"]);
        assert_eq!(sd.code_set, vec![2598919, 2598920]);
        let all = SubscriptionData::build("T", "*", "TAG", 1);
        assert!(all.tags_set.is_empty() && all.sub_string == "*");
        assert!(all.tag_filter().all && !sd.tag_filter().all);
        let sql = SubscriptionData::build("T", "a > 1", "SQL92", 1);
        assert_eq!(
            (sql.sub_string.as_str(), sql.is_tag_type()),
            ("a > 1", false)
        );
    }

    #[test]
    fn null_code_set_and_defaults() {
        let sd: SubscriptionData =
            fastjson::from_slice(br#"{"topic":"T","codeSet":null}"#).unwrap();
        assert_eq!(
            (sd.expression_type.as_str(), sd.sub_string.as_str()),
            ("TAG", "*")
        );
        assert!(sd.code_set.is_empty());
    }
}
