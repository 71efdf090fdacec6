//! WIRE: the RocketMQ Remoting protocol, sans-IO — bytes in, typed values out. No sockets, no store.
//!
//! A frame is `[len:i32][type<<24|headerLen:i32][header][body]` (see `codec`); the header is a
//! `RemotingCommand` serialized as fastjson-style JSON (type 0) or ROCKETMQ binary (type 1).

pub mod body;
pub mod codec;
pub mod command;
pub mod error;
pub mod header;
pub mod request_code;
pub mod response_code;
pub mod serialize;

pub use codec::{FrameCodec, MAX_FRAME_LENGTH};
pub use command::{Body, ExtFields, LanguageCode, RemotingCommand, SerializeType};
pub use error::RemotingError;
pub use request_code::RequestCode;
pub use response_code::ResponseCode;

/// The `MQVersion.Version` ordinal rmqd puts in every command it sends (V5_3_3).
pub const CURRENT_VERSION: i32 = 479;
