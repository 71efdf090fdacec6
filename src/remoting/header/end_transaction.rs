//! END_TRANSACTION (37) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `EndTransactionRequestHeader`: commit (8) or roll back (12) a half message.
///
/// ```text
/// key                   type     req
/// topic                 String   N
/// producerGroup         String   Y
/// tranStateTableOffset  Long     Y
/// commitLogOffset       Long     Y
/// commitOrRollback      Integer  Y
/// fromTransactionCheck  Boolean  P default false
/// msgId                 String   Y
/// transactionId         String   N
/// + rpc                 bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndTransactionRequestHeader {
    pub topic: Option<String>,
    pub producer_group: String,
    pub tran_state_table_offset: i64,
    pub commit_log_offset: i64,
    /// 0 unknown, 8 commit, 12 rollback (MessageSysFlag values).
    pub commit_or_rollback: i32,
    pub from_transaction_check: bool,
    pub msg_id: String,
    pub transaction_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for EndTransactionRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("topic", &self.topic);
        ext.put("producerGroup", &self.producer_group);
        ext.put("tranStateTableOffset", self.tran_state_table_offset);
        ext.put("commitLogOffset", self.commit_log_offset);
        ext.put("commitOrRollback", self.commit_or_rollback);
        ext.put("fromTransactionCheck", self.from_transaction_check);
        ext.put("msgId", &self.msg_id);
        ext.put_opt("transactionId", &self.transaction_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string_opt("topic"),
            producer_group: ext.string("producerGroup")?,
            tran_state_table_offset: ext.i64("tranStateTableOffset")?,
            commit_log_offset: ext.i64("commitLogOffset")?,
            commit_or_rollback: ext.i32("commitOrRollback")?,
            from_transaction_check: ext.bool_or("fromTransactionCheck", false),
            msg_id: ext.string("msgId")?,
            transaction_id: ext.string_opt("transactionId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn end_transaction_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("producerGroup", "v_producerGroup"),
            ("tranStateTableOffset", "1700000000000"),
            ("commitLogOffset", "1700000000000"),
            ("commitOrRollback", "3"),
            ("fromTransactionCheck", "true"),
            ("msgId", "v_msgId"),
            ("transactionId", "v_transactionId"),
            ("bname", "broker-a"),
        ]);
        let h = EndTransactionRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_deref(), Some("v_topic"));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn end_transaction_request_header_missing_producer_group_is_an_error() {
        let err = EndTransactionRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "producerGroup",
                ..
            }
        ));
    }
}
