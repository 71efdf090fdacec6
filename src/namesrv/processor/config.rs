//! GET_NAMESRV_CONFIG and UPDATE_NAMESRV_CONFIG: Java properties text bodies.

use super::{success, ProcessorResult, RequestContext};
use crate::namesrv::config::parse_properties;
use crate::namesrv::error::NamesrvError;
use crate::namesrv::NameServer;
use crate::remoting::command::RemotingCommand;
use crate::remoting::response_code::ResponseCode;

pub(super) fn get_namesrv_config(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let text = ns.config().to_properties_text();
    Ok(success(req).with_body(text))
}

/// Applies the properties in the body; black-listed keys refuse the whole update, as in Java.
pub(super) fn update_namesrv_config(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let body = req.body.to_bytes();
    if body.is_empty() {
        return Ok(success(req));
    }
    let pairs = parse_properties(&String::from_utf8_lossy(&body));
    let black_list = ns.config().black_list();
    if pairs.iter().any(|(k, _)| black_list.contains(k)) {
        return Err(NamesrvError::refused(
            ResponseCode::NO_PERMISSION,
            "Can not update config in black list.",
        ));
    }
    ns.update_config(&pairs)?;
    Ok(success(req))
}
