//! GET_NAMESRV_CONFIG and UPDATE_NAMESRV_CONFIG: Java properties text bodies.

use super::{failure, success, HandlerResult};
use crate::namesrv::config::parse_properties;
use crate::namesrv::NameServer;
use crate::remoting::command::RemotingCommand;
use crate::remoting::response_code::ResponseCode;

pub(super) fn get_namesrv_config(ns: &NameServer, req: &RemotingCommand) -> HandlerResult {
    let text = ns.config().to_properties_text();
    Ok(success(req).with_body(text))
}

/// Applies the properties in the body; black-listed keys refuse the whole update, as in Java.
pub(super) fn update_namesrv_config(ns: &NameServer, req: &RemotingCommand) -> HandlerResult {
    let body = req.body.to_bytes();
    if body.is_empty() {
        return Ok(success(req));
    }
    let pairs = parse_properties(&String::from_utf8_lossy(&body));
    let black_list = ns.config().black_list();
    if pairs.iter().any(|(k, _)| black_list.contains(k)) {
        return Ok(failure(
            req,
            ResponseCode::NO_PERMISSION,
            "Can not update config in black list.",
        ));
    }
    match ns.update_config(&pairs) {
        Ok(()) => Ok(success(req)),
        Err(e) => Ok(failure(req, ResponseCode::SYSTEM_ERROR, e.to_string())),
    }
}
