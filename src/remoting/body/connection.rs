//! `Connection` and GET_PRODUCER_CONNECTION_LIST (204) body `ProducerConnection` (Java shape).
//!
//! ```text
//! {"connectionSet":[{"clientAddr":"10.0.0.5:53722","clientId":"10.0.0.5@1234","language":"JAVA","version":479}]}
//! ```

use serde::{Deserialize, Serialize};

use super::fastjson;

/// One client channel as admin tools see it; `language` is the `LanguageCode` name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Connection {
    pub client_addr: String,
    pub client_id: String,
    pub language: String,
    pub version: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProducerConnection {
    pub connection_set: Vec<Connection>,
}

fastjson::fastjson_body!(ProducerConnection);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_shape_round_trips() {
        let json = r#"{"connectionSet":[{"clientAddr":"10.0.0.5:53722","clientId":"10.0.0.5@1234","language":"JAVA","version":479}]}"#;
        let pc = ProducerConnection::decode(json.as_bytes()).unwrap();
        assert_eq!(pc.connection_set[0].version, 479);
        assert_eq!(String::from_utf8(pc.encode()).unwrap(), json);
        assert!(ProducerConnection::decode(br#"{"connectionSet":5}"#).is_err());
    }
}
