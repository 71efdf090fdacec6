//! Errors of the wire layer. Every variant says what was wrong and where.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RemotingError {
    #[error("frame length {length} outside 4..={max}")]
    FrameLength { length: i64, max: usize },
    #[error("bad header length {header_length} for a frame of {frame_length} bytes")]
    HeaderLength {
        header_length: usize,
        frame_length: usize,
    },
    #[error("header of {header_length} bytes is over the {max}-byte limit")]
    HeaderTooLong { header_length: usize, max: usize },
    #[error("header carries more than {max} extFields")]
    TooManyExtFields { max: usize },
    #[error("unknown serialize type {0}")]
    SerializeType(u8),
    #[error("bad JSON header: {0}")]
    Json(String),
    #[error("bad ROCKETMQ header at byte {offset}: {what}")]
    Binary { offset: usize, what: &'static str },
    #[error("header field {field}: {what}")]
    Header { field: &'static str, what: String },
    #[error("bad body: {0}")]
    Body(String),
}
