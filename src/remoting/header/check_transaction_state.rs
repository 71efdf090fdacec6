//! CHECK_TRANSACTION_STATE (39) header, broker → producer, oneway.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `CheckTransactionStateRequestHeader`: body = the half message as one stored record.
///
/// ```text
/// key                   type     req
/// topic                 String   N
/// tranStateTableOffset  Long     Y
/// commitLogOffset       Long     Y
/// msgId                 String   N
/// transactionId         String   N
/// offsetMsgId           String   N
/// + rpc                 bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckTransactionStateRequestHeader {
    pub topic: Option<String>,
    pub tran_state_table_offset: i64,
    pub commit_log_offset: i64,
    pub msg_id: Option<String>,
    pub transaction_id: Option<String>,
    pub offset_msg_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for CheckTransactionStateRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("topic", &self.topic);
        ext.put("tranStateTableOffset", self.tran_state_table_offset);
        ext.put("commitLogOffset", self.commit_log_offset);
        ext.put_opt("msgId", &self.msg_id);
        ext.put_opt("transactionId", &self.transaction_id);
        ext.put_opt("offsetMsgId", &self.offset_msg_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string_opt("topic"),
            tran_state_table_offset: ext.i64("tranStateTableOffset")?,
            commit_log_offset: ext.i64("commitLogOffset")?,
            msg_id: ext.string_opt("msgId"),
            transaction_id: ext.string_opt("transactionId"),
            offset_msg_id: ext.string_opt("offsetMsgId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn check_transaction_state_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("tranStateTableOffset", "1700000000000"),
            ("commitLogOffset", "1700000000000"),
            ("msgId", "v_msgId"),
            ("transactionId", "v_transactionId"),
            ("offsetMsgId", "v_offsetMsgId"),
            ("bname", "broker-a"),
        ]);
        let h = CheckTransactionStateRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_deref(), Some("v_topic"));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn check_transaction_state_request_header_missing_tran_state_table_offset_is_an_error() {
        let err = CheckTransactionStateRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "tranStateTableOffset",
                ..
            }
        ));
    }
}
