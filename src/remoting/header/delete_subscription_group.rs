//! DELETE_SUBSCRIPTIONGROUP (207) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `DeleteSubscriptionGroupRequestHeader`.
///
/// ```text
/// key          type     req
/// groupName    String   Y
/// cleanOffset  Boolean  P default false
/// + rpc        bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteSubscriptionGroupRequestHeader {
    pub group_name: String,
    pub clean_offset: bool,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for DeleteSubscriptionGroupRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("groupName", &self.group_name);
        ext.put("cleanOffset", self.clean_offset);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            group_name: ext.string("groupName")?,
            clean_offset: ext.bool_or("cleanOffset", false),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn delete_subscription_group_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("groupName", "v_groupName"),
            ("cleanOffset", "true"),
            ("bname", "broker-a"),
        ]);
        let h = DeleteSubscriptionGroupRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.group_name.as_str(), "v_groupName");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn delete_subscription_group_request_header_missing_group_name_is_an_error() {
        let err = DeleteSubscriptionGroupRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "groupName",
                ..
            }
        ));
    }
}
