//! QUERY_MESSAGE (12) request and response headers.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `QueryMessageRequestHeader`: index lookup by `key` within a time range.
///
/// ```text
/// key                type     req
/// topic              String   Y
/// key                String   Y
/// maxNum             Integer  Y
/// beginTimestamp     Long     Y
/// endTimestamp       Long     Y
/// indexType          String   N   (5.5: K keys, T tags; U is implied by _UNIQUE_KEY_QUERY)
/// lastKey            String   N   (5.5: paging of the RocksDB index; the file index ignores it)
/// _UNIQUE_KEY_QUERY  Boolean  N
/// + rpc              bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryMessageRequestHeader {
    pub topic: String,
    pub key: String,
    pub max_num: i32,
    pub begin_timestamp: i64,
    pub end_timestamp: i64,
    /// Java 5.5 `indexType`: `K` (keys, the default) or `T` (tags).
    pub index_type: Option<String>,
    /// Java 5.5 `lastKey`.
    pub last_key: Option<String>,
    /// Plain ext key: true ⇒ broker uses its own `defaultQueryMaxNum`.
    pub unique_key_query: Option<bool>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for QueryMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("key", &self.key);
        ext.put("maxNum", self.max_num);
        ext.put("beginTimestamp", self.begin_timestamp);
        ext.put("endTimestamp", self.end_timestamp);
        ext.put_opt("indexType", &self.index_type);
        ext.put_opt("lastKey", &self.last_key);
        ext.put_opt("_UNIQUE_KEY_QUERY", &self.unique_key_query);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            key: ext.string("key")?,
            max_num: ext.i32("maxNum")?,
            begin_timestamp: ext.i64("beginTimestamp")?,
            end_timestamp: ext.i64("endTimestamp")?,
            index_type: ext.string_opt("indexType"),
            last_key: ext.string_opt("lastKey"),
            unique_key_query: ext.bool_opt("_UNIQUE_KEY_QUERY"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `QueryMessageResponseHeader`.
///
/// ```text
/// key                       type     req
/// indexLastUpdateTimestamp  Long     Y
/// indexLastUpdatePhyoffset  Long     Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryMessageResponseHeader {
    pub index_last_update_timestamp: i64,
    pub index_last_update_phyoffset: i64,
}

impl CommandHeader for QueryMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("indexLastUpdateTimestamp", self.index_last_update_timestamp);
        ext.put("indexLastUpdatePhyoffset", self.index_last_update_phyoffset);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            index_last_update_timestamp: ext.i64("indexLastUpdateTimestamp")?,
            index_last_update_phyoffset: ext.i64("indexLastUpdatePhyoffset")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn query_message_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("key", "v_key"),
            ("maxNum", "3"),
            ("beginTimestamp", "1700000000000"),
            ("endTimestamp", "1700000000000"),
            ("indexType", "T"),
            ("lastKey", "k9"),
            ("_UNIQUE_KEY_QUERY", "true"),
            ("bname", "broker-a"),
        ]);
        let h = QueryMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn query_message_request_header_missing_topic_is_an_error() {
        let err = QueryMessageRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }

    #[test]
    fn query_message_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("indexLastUpdateTimestamp", "1700000000000"),
            ("indexLastUpdatePhyoffset", "1700000000000"),
        ]);
        let h = QueryMessageResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.index_last_update_timestamp, 1700000000000);
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn query_message_response_header_missing_index_last_update_timestamp_is_an_error() {
        let err = QueryMessageResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "indexLastUpdateTimestamp",
                ..
            }
        ));
    }
}
