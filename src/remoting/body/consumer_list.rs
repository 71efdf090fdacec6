//! GET_CONSUMER_LIST_BY_GROUP (38) response body `GetConsumerListByGroupResponseBody`.
//!
//! ```text
//! {"consumerIdList":["10.0.0.5@1234#55","10.0.0.6@99"]}
//! ```

use serde::{Deserialize, Serialize};

use super::fastjson;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GetConsumerListByGroupResponseBody {
    pub consumer_id_list: Vec<String>,
}

fastjson::fastjson_body!(GetConsumerListByGroupResponseBody);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_shape() {
        let b = GetConsumerListByGroupResponseBody {
            consumer_id_list: vec!["a@1".into(), "b@2".into()],
        };
        let json = b.encode();
        assert_eq!(json, br#"{"consumerIdList":["a@1","b@2"]}"#);
        assert_eq!(
            GetConsumerListByGroupResponseBody::decode(&json).unwrap(),
            b
        );
    }
}
