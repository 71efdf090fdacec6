//! GET_CONSUMER_CONNECTION_LIST (203) body `ConsumerConnection`.
//!
//! ```text
//! {"connectionSet":[Connection],"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",
//!  "consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","subscriptionTable":{"T":SubscriptionData}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::connection::Connection;
use super::fastjson;
use super::heartbeat::{ConsumeFromWhere, ConsumeType, MessageModel};
use super::subscription_data::SubscriptionData;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ConsumerConnection {
    pub connection_set: Vec<Connection>,
    pub consume_from_where: ConsumeFromWhere,
    pub consume_type: ConsumeType,
    pub message_model: MessageModel,
    pub subscription_table: BTreeMap<String, SubscriptionData>,
}

fastjson::fastjson_body!(ConsumerConnection);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_java_shape() {
        let mut cc = ConsumerConnection::default();
        cc.connection_set.push(Connection {
            client_addr: "10.0.0.5:53722".into(),
            client_id: "c1".into(),
            language: "JAVA".into(),
            version: 479,
        });
        cc.subscription_table
            .insert("T".into(), SubscriptionData::build("T", "*", "TAG", 7));
        let json = String::from_utf8(cc.encode()).unwrap();
        assert_eq!(
            json,
            r#"{"connectionSet":[{"clientAddr":"10.0.0.5:53722","clientId":"c1","language":"JAVA","version":479}],"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","subscriptionTable":{"T":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":7,"tagsSet":[],"topic":"T"}}}"#
        );
        assert_eq!(ConsumerConnection::decode(json.as_bytes()).unwrap(), cc);
    }
}
