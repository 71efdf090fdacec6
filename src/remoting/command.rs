//! `RemotingCommand`: the logical header (code, language, version, opaque, flag, remark,
//! extFields) plus a body, as Java's `RemotingCommand` carries them.

use bytes::{Bytes, BytesMut};

use super::CURRENT_VERSION;
use crate::common::pairs::Pairs;

/// flag bit 0: this command is a response.
pub const FLAG_RESPONSE: i32 = 0x1;
/// flag bit 1: the request is oneway; the receiver must not answer.
pub const FLAG_ONEWAY: i32 = 0x2;

/// Header serialization, the high byte of the frame's second int.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SerializeType {
    #[default]
    Json = 0,
    RocketMq = 1,
}

impl SerializeType {
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Self::Json),
            1 => Some(Self::RocketMq),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "JSON",
            Self::RocketMq => "ROCKETMQ",
        }
    }
}

/// `LanguageCode`: a name in JSON headers, a byte in binary ones. Unknown names are kept as `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LanguageCode {
    #[default]
    Java,
    Cpp,
    Dotnet,
    Python,
    Delphi,
    Erlang,
    Ruby,
    Other,
    Http,
    Go,
    Php,
    Oms,
    Rust,
    NodeJs,
    /// A name or byte this table does not know; kept so it can be reported back.
    Unknown(String),
}

const LANGUAGES: [(LanguageCode, &str); 14] = [
    (LanguageCode::Java, "JAVA"),
    (LanguageCode::Cpp, "CPP"),
    (LanguageCode::Dotnet, "DOTNET"),
    (LanguageCode::Python, "PYTHON"),
    (LanguageCode::Delphi, "DELPHI"),
    (LanguageCode::Erlang, "ERLANG"),
    (LanguageCode::Ruby, "RUBY"),
    (LanguageCode::Other, "OTHER"),
    (LanguageCode::Http, "HTTP"),
    (LanguageCode::Go, "GO"),
    (LanguageCode::Php, "PHP"),
    (LanguageCode::Oms, "OMS"),
    (LanguageCode::Rust, "RUST"),
    (LanguageCode::NodeJs, "NODE_JS"),
];

impl LanguageCode {
    pub fn from_name(name: &str) -> Self {
        LANGUAGES
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(l, _)| l.clone())
            .unwrap_or_else(|| Self::Unknown(name.to_string()))
    }

    pub fn from_byte(b: u8) -> Self {
        LANGUAGES
            .get(b as usize)
            .map(|(l, _)| l.clone())
            .unwrap_or_else(|| Self::Unknown(b.to_string()))
    }

    pub fn name(&self) -> &str {
        match self {
            Self::Unknown(s) => s,
            known => LANGUAGES
                .iter()
                .find(|(l, _)| l == known)
                .map(|(_, n)| *n)
                .unwrap_or("OTHER"),
        }
    }

    /// The binary code; unknown languages are written as OTHER (7).
    pub fn code(&self) -> u8 {
        LANGUAGES.iter().position(|(l, _)| l == self).unwrap_or(7) as u8
    }
}

/// Tags [`Pairs`] holding a command's `extFields`.
pub enum ExtFieldsTag {}

/// `extFields`: the flattened custom header, every value a string. Insertion order is kept.
pub type ExtFields = Pairs<ExtFieldsTag>;

/// A frame body as a list of byte chunks, so a response can carry records that borrow the
/// store's mapped pages without copying them into one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    parts: Vec<Bytes>,
}

impl Body {
    pub fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    pub fn push(&mut self, part: Bytes) {
        if !part.is_empty() {
            self.parts.push(part);
        }
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The body as one contiguous `Bytes` (free when it already is one chunk).
    pub fn to_bytes(&self) -> Bytes {
        match self.parts.as_slice() {
            [] => Bytes::new(),
            [one] => one.clone(),
            many => {
                let mut buf = BytesMut::with_capacity(self.len());
                many.iter().for_each(|p| buf.extend_from_slice(p));
                buf.freeze()
            }
        }
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        let mut body = Body::default();
        body.push(b);
        body
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Self {
        Bytes::from(v).into()
    }
}

impl From<String> for Body {
    fn from(s: String) -> Self {
        Bytes::from(s).into()
    }
}

impl From<Vec<Bytes>> for Body {
    fn from(parts: Vec<Bytes>) -> Self {
        let mut body = Body::default();
        parts.into_iter().for_each(|p| body.push(p));
        body
    }
}

/// One request or response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotingCommand {
    pub code: i32,
    pub language: LanguageCode,
    pub version: i32,
    pub opaque: i32,
    pub flag: i32,
    pub remark: Option<String>,
    pub ext_fields: Option<ExtFields>,
    /// How the header was (or will be) serialized.
    pub serialize_type: SerializeType,
    pub body: Body,
}

impl Default for RemotingCommand {
    fn default() -> Self {
        Self {
            code: 0,
            language: LanguageCode::Java,
            version: CURRENT_VERSION,
            opaque: 0,
            flag: 0,
            remark: None,
            ext_fields: None,
            serialize_type: SerializeType::Json,
            body: Body::default(),
        }
    }
}

impl RemotingCommand {
    /// A new request with `code` and an empty `extFields` map.
    pub fn request(code: i32) -> Self {
        Self {
            code,
            ext_fields: Some(ExtFields::new()),
            ..Self::default()
        }
    }

    /// A response to `request`: same opaque, response flag set, answered in JSON as Java does.
    pub fn response_to(request: &RemotingCommand, code: i32, remark: Option<String>) -> Self {
        Self {
            code,
            opaque: request.opaque,
            flag: FLAG_RESPONSE,
            remark,
            ..Self::default()
        }
    }

    pub fn is_response(&self) -> bool {
        self.flag & FLAG_RESPONSE != 0
    }

    pub fn is_oneway(&self) -> bool {
        self.flag & FLAG_ONEWAY != 0
    }

    pub fn mark_oneway(&mut self) {
        self.flag |= FLAG_ONEWAY;
    }

    pub fn with_body(mut self, body: impl Into<Body>) -> Self {
        self.body = body.into();
        self
    }

    pub fn with_remark(mut self, remark: impl Into<String>) -> Self {
        self.remark = Some(remark.into());
        self
    }

    /// The value of extFields `key`, if present.
    pub fn ext(&self, key: &str) -> Option<&str> {
        self.ext_fields.as_ref().and_then(|e| e.get(key))
    }

    /// The extFields map, created if absent.
    pub fn ext_mut(&mut self) -> &mut ExtFields {
        self.ext_fields.get_or_insert_with(ExtFields::new)
    }
}
