//! The optional keys every 5.x request header inherits from `RpcRequestHeader` / `TopicRequestHeader`.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `RpcRequestHeader` (+ `TopicRequestHeader.lo`): all optional, ignorable for ordinary topics.
///
/// ```text
/// key    type     req
/// ns     String   N   namespace (deprecated)
/// nsd    Boolean  N   namespace already applied (deprecated)
/// bname  String   N   target broker name
/// oway   Boolean  N   oneway marker of the internal RPC client
/// lo     Boolean  N   logical queue (static topics)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RpcRequestHeader {
    pub namespace: Option<String>,
    pub namespaced: Option<bool>,
    pub broker_name: Option<String>,
    pub oneway: Option<bool>,
    pub logic: Option<bool>,
}

impl CommandHeader for RpcRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("ns", &self.namespace);
        ext.put_opt("nsd", &self.namespaced);
        ext.put_opt("bname", &self.broker_name);
        ext.put_opt("oway", &self.oneway);
        ext.put_opt("lo", &self.logic);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            namespace: ext.string_opt("ns"),
            namespaced: ext.bool_opt("nsd"),
            broker_name: ext.string_opt("bname"),
            oneway: ext.bool_opt("oway"),
            logic: ext.bool_opt("lo"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn rpc_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("ns", "n"),
            ("nsd", "false"),
            ("bname", "b"),
            ("oway", "true"),
            ("lo", "true"),
        ]);
        let h = RpcRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.broker_name.as_deref(), Some("b"));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
        assert_eq!(
            RpcRequestHeader::read_from(&ExtFields::new()).unwrap(),
            RpcRequestHeader::default()
        );
    }
}
