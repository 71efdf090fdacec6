//! QUERY_MESSAGE (12, by key, unique key or (5.5) tags through the index), VIEW_MESSAGE_BY_ID (33, by
//! commit-log offset). Records are answered as stored.

use std::sync::Arc;

use super::{ok, read_header, reply, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::remoting::command::Body;
use crate::remoting::header::query_message::{
    QueryMessageRequestHeader, QueryMessageResponseHeader,
};
use crate::remoting::header::view_message::ViewMessageRequestHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::index::IndexKind;

/// Java 5.5 `MessageConst.INDEX_TAG_TYPE`.
const INDEX_TAG_TYPE: &str = "T";

/// Java `defaultQueryMaxNum`, used instead of `maxNum` for unique-key queries.
const DEFAULT_QUERY_MAX_NUM: i32 = 32;

pub fn query_message(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: QueryMessageRequestHeader = read_header(request)?;
    let unique = request
        .ext("_UNIQUE_KEY_QUERY")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let max_num = if unique {
        DEFAULT_QUERY_MAX_NUM
    } else {
        h.max_num
    };
    // Java 5.5: a unique-key query is a key query; `indexType=T` looks up the tags entries;
    // anything else (absent, empty, `K`) the keys
    let kind = if !unique && h.index_type.as_deref() == Some(INDEX_TAG_TYPE) {
        IndexKind::Tag
    } else {
        IndexKind::Key
    };
    let mut r = ctx.store.query_message_by(
        kind,
        &h.topic,
        &h.key,
        max_num.max(0) as usize,
        h.begin_timestamp,
        h.end_timestamp,
    );
    let header = QueryMessageResponseHeader {
        index_last_update_timestamp: r.index_last_update_timestamp,
        index_last_update_phyoffset: r.index_last_update_phyoffset,
    };
    if r.messages.is_empty() {
        let remark = "can not find message, maybe time range not correct";
        let mut response = reply(request, ResponseCode::QUERY_NOT_FOUND, remark);
        header.write_to(response.ext_mut());
        return Ok(response);
    }
    fit_in_one_frame(&mut r.messages);
    Ok(success_with(request, header).with_body(Body::from(r.messages)))
}

/// Room for a response body: the clients refuse frames over 16 MiB (Java's and Go's decoders),
/// less room for the header.
const MAX_RESPONSE_BODY: usize = crate::remoting::MAX_FRAME_LENGTH - 64 * 1024;

/// Drops the messages after those that fit in one frame the clients accept (at least one is
/// kept: a stored message is far smaller). Java answers with all of them, and a query for a key
/// of large messages then reaches no client; fewer is what `maxNum` allows anyway.
fn fit_in_one_frame(messages: &mut Vec<bytes::Bytes>) {
    let mut total = 0usize;
    let fits = messages
        .iter()
        .take_while(|m| {
            total += m.len();
            total <= MAX_RESPONSE_BODY
        })
        .count()
        .max(1);
    if fits < messages.len() {
        tracing::debug!(
            kept = fits,
            found = messages.len(),
            "QUERY_MESSAGE answer cut to one frame the clients accept"
        );
        messages.truncate(fits);
    }
}

pub fn view_message_by_id(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: ViewMessageRequestHeader = read_header(request)?;
    match ctx.store.lookup_message_by_offset(h.offset) {
        Some(record) => Ok(ok(request).with_body(record)),
        None => Err(BrokerError::system(format!(
            "can not find message by the offset, {}",
            h.offset
        ))),
    }
}
