//! GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) paging request and response headers (5.x).

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetAllSubscriptionGroupRequestHeader`.
///
/// ```text
/// key          type     req
/// groupSeq     Integer  N
/// dataVersion  String   N
/// maxGroupNum  Integer  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetAllSubscriptionGroupRequestHeader {
    pub group_seq: Option<i32>,
    pub data_version: Option<String>,
    pub max_group_num: Option<i32>,
}

impl CommandHeader for GetAllSubscriptionGroupRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("groupSeq", &self.group_seq);
        ext.put_opt("dataVersion", &self.data_version);
        ext.put_opt("maxGroupNum", &self.max_group_num);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            group_seq: ext.i32_opt("groupSeq")?,
            data_version: ext.string_opt("dataVersion"),
            max_group_num: ext.i32_opt("maxGroupNum")?,
        })
    }
}

/// `GetAllSubscriptionGroupResponseHeader`.
///
/// ```text
/// key            type     req
/// totalGroupNum  Integer  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetAllSubscriptionGroupResponseHeader {
    pub total_group_num: Option<i32>,
}

impl CommandHeader for GetAllSubscriptionGroupResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("totalGroupNum", &self.total_group_num);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            total_group_num: ext.i32_opt("totalGroupNum")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_all_subscription_group_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("groupSeq", "3"),
            ("dataVersion", "v_dataVersion"),
            ("maxGroupNum", "3"),
        ]);
        let h = GetAllSubscriptionGroupRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.group_seq, Some(3));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_all_subscription_group_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("totalGroupNum", "3")]);
        let h = GetAllSubscriptionGroupResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.total_group_num, Some(3));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }
}
