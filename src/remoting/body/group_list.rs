//! QUERY_TOPIC_CONSUME_BY_WHO (300) body `GroupList`.
//!
//! ```text
//! {"groupList":["G1","G2"]}
//! ```

use serde::{Deserialize, Serialize};

use super::fastjson;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GroupList {
    pub group_list: Vec<String>,
}

fastjson::fastjson_body!(GroupList);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_shape() {
        let g = GroupList {
            group_list: vec!["G1".into(), "G2".into()],
        };
        assert_eq!(g.encode(), br#"{"groupList":["G1","G2"]}"#.to_vec());
        assert_eq!(GroupList::decode(&g.encode()).unwrap(), g);
        assert!(GroupList::decode(br#"{"groupList":"G1"}"#).is_err());
    }
}
