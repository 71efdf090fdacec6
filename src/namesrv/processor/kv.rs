//! PUT/GET/DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE.

use super::{header, reply, success, with_header, ProcessorResult, RequestContext};
use crate::namesrv::NameServer;
use crate::remoting::command::RemotingCommand;
use crate::remoting::header::namesrv::{
    DeleteKVConfigRequestHeader, GetKVConfigRequestHeader, GetKVConfigResponseHeader,
    GetKVListByNamespaceRequestHeader, PutKVConfigRequestHeader,
};
use crate::remoting::response_code::ResponseCode;

pub(super) fn put_kv_config(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: PutKVConfigRequestHeader = header(req)?;
    ns.kv.put(&h.namespace, &h.key, &h.value);
    Ok(success(req))
}

pub(super) fn get_kv_config(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: GetKVConfigRequestHeader = header(req)?;
    match ns.kv.get(&h.namespace, &h.key) {
        Some(value) => Ok(with_header(
            success(req),
            &GetKVConfigResponseHeader { value },
        )),
        None => Ok(reply(
            req,
            ResponseCode::QUERY_NOT_FOUND,
            format!("No config item, Namespace: {} Key: {}", h.namespace, h.key),
        )),
    }
}

pub(super) fn delete_kv_config(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: DeleteKVConfigRequestHeader = header(req)?;
    ns.kv.delete(&h.namespace, &h.key);
    Ok(success(req))
}

pub(super) fn get_kv_list_by_namespace(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: GetKVListByNamespaceRequestHeader = header(req)?;
    match ns.kv.kv_list(&h.value) {
        Some(table) => Ok(success(req).with_body(table.encode())),
        None => Ok(reply(
            req,
            ResponseCode::QUERY_NOT_FOUND,
            format!("No config item, Namespace: {}", h.value),
        )),
    }
}
