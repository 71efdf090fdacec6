//! Well-known message property keys (`MessageConst`) and `MessageSysFlag` bits.

// --- property keys (MessageConst.PROPERTY_*) ---
pub const PROPERTY_KEYS: &str = "KEYS";
pub const PROPERTY_TAGS: &str = "TAGS";
pub const PROPERTY_WAIT_STORE_MSG_OK: &str = "WAIT";
pub const PROPERTY_DELAY_TIME_LEVEL: &str = "DELAY";
pub const PROPERTY_RETRY_TOPIC: &str = "RETRY_TOPIC";
pub const PROPERTY_REAL_TOPIC: &str = "REAL_TOPIC";
pub const PROPERTY_REAL_QUEUE_ID: &str = "REAL_QID";
pub const PROPERTY_TRANSACTION_PREPARED: &str = "TRAN_MSG";
pub const PROPERTY_PRODUCER_GROUP: &str = "PGROUP";
pub const PROPERTY_MIN_OFFSET: &str = "MIN_OFFSET";
pub const PROPERTY_MAX_OFFSET: &str = "MAX_OFFSET";
pub const PROPERTY_BUYER_ID: &str = "BUYER_ID";
pub const PROPERTY_ORIGIN_MESSAGE_ID: &str = "ORIGIN_MESSAGE_ID";
pub const PROPERTY_TRANSFER_FLAG: &str = "TRANSFER_FLAG";
pub const PROPERTY_CORRECTION_FLAG: &str = "CORRECTION_FLAG";
pub const PROPERTY_MQ2_FLAG: &str = "MQ2_FLAG";
pub const PROPERTY_RECONSUME_TIME: &str = "RECONSUME_TIME";
pub const PROPERTY_MSG_REGION: &str = "MSG_REGION";
pub const PROPERTY_TRACE_SWITCH: &str = "TRACE_ON";
pub const PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: &str = "UNIQ_KEY";
pub const PROPERTY_EXTEND_UNIQ_INFO: &str = "EXTEND_UNIQ_INFO";
pub const PROPERTY_MAX_RECONSUME_TIMES: &str = "MAX_RECONSUME_TIMES";
pub const PROPERTY_CONSUME_START_TIMESTAMP: &str = "CONSUME_START_TIME";
pub const PROPERTY_INNER_NUM: &str = "INNER_NUM";
pub const PROPERTY_INNER_BASE: &str = "INNER_BASE";
pub const DUP_INFO: &str = "DUP_INFO";
pub const PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS: &str = "CHECK_IMMUNITY_TIME_IN_SECONDS";
pub const PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET: &str = "TRAN_PREPARED_QUEUE_OFFSET";
pub const PROPERTY_TRANSACTION_ID: &str = "__transactionId__";
pub const PROPERTY_TRANSACTION_CHECK_TIMES: &str = "TRANSACTION_CHECK_TIMES";
pub const PROPERTY_INSTANCE_ID: &str = "INSTANCE_ID";
pub const PROPERTY_CORRELATION_ID: &str = "CORRELATION_ID";
pub const PROPERTY_MESSAGE_REPLY_TO_CLIENT: &str = "REPLY_TO_CLIENT";
pub const PROPERTY_MESSAGE_TTL: &str = "TTL";
pub const PROPERTY_REPLY_MESSAGE_ARRIVE_TIME: &str = "ARRIVE_TIME";
pub const PROPERTY_PUSH_REPLY_TIME: &str = "PUSH_REPLY_TIME";
pub const PROPERTY_CLUSTER: &str = "CLUSTER";
pub const PROPERTY_MESSAGE_TYPE: &str = "MSG_TYPE";
pub const PROPERTY_POP_CK: &str = "POP_CK";
pub const PROPERTY_POP_CK_OFFSET: &str = "POP_CK_OFFSET";
pub const PROPERTY_FIRST_POP_TIME: &str = "1ST_POP_TIME";
pub const PROPERTY_SHARDING_KEY: &str = "__SHARDINGKEY";
pub const PROPERTY_FORWARD_QUEUE_ID: &str = "PROPERTY_FORWARD_QUEUE_ID";
pub const PROPERTY_REDIRECT: &str = "REDIRECT";
pub const PROPERTY_INNER_MULTI_DISPATCH: &str = "INNER_MULTI_DISPATCH";
pub const PROPERTY_INNER_MULTI_QUEUE_OFFSET: &str = "INNER_MULTI_QUEUE_OFFSET";
/// Java 5.5: the lite topic of a message sent to a LITE parent topic.
pub const PROPERTY_LITE_TOPIC: &str = "__LITE_TOPIC";
pub const PROPERTY_TRACE_CONTEXT: &str = "TRACE_CONTEXT";
pub const PROPERTY_TIMER_DELAY_SEC: &str = "TIMER_DELAY_SEC";
pub const PROPERTY_TIMER_DELAY_MS: &str = "TIMER_DELAY_MS";
pub const PROPERTY_TIMER_DELIVER_MS: &str = "TIMER_DELIVER_MS";
pub const PROPERTY_TIMER_ENQUEUE_MS: &str = "TIMER_ENQUEUE_MS";
pub const PROPERTY_TIMER_DEQUEUE_MS: &str = "TIMER_DEQUEUE_MS";
pub const PROPERTY_TIMER_ROLL_TIMES: &str = "TIMER_ROLL_TIMES";
pub const PROPERTY_TIMER_OUT_MS: &str = "TIMER_OUT_MS";
pub const PROPERTY_TIMER_DEL_UNIQKEY: &str = "TIMER_DEL_UNIQKEY";
pub const PROPERTY_TIMER_DELAY_LEVEL: &str = "TIMER_DELAY_LEVEL";
pub const PROPERTY_BORN_HOST: &str = "__BORNHOST";
pub const PROPERTY_BORN_TIMESTAMP: &str = "BORN_TIMESTAMP";
pub const PROPERTY_CRC32: &str = "__CRC32#";
pub const PROPERTY_DLQ_ORIGIN_TOPIC: &str = "DLQ_ORIGIN_TOPIC";
pub const PROPERTY_DLQ_ORIGIN_MESSAGE_ID: &str = "DLQ_ORIGIN_MESSAGE_ID";
/// Prefix of client-side transient properties (never stored).
pub const PROPERTY_TRANSIENT_PREFIX: &str = "__RMQ.TRANSIENT.";
/// Legacy delay property, only looked at by client hooks.
pub const PROPERTY_START_DELIVER_TIME: &str = "__STARTDELIVERTIME";
/// Separator of several user keys inside `KEYS`.
pub const KEY_SEPARATOR: &str = " ";

/// Send-response ext keys that share names with properties.
pub const EXT_MSG_REGION: &str = PROPERTY_MSG_REGION;
pub const EXT_TRACE_ON: &str = PROPERTY_TRACE_SWITCH;

// --- MessageSysFlag ---
pub const COMPRESSED_FLAG: i32 = 0x1;
pub const MULTI_TAGS_FLAG: i32 = 0x1 << 1;
pub const TRANSACTION_NOT_TYPE: i32 = 0;
pub const TRANSACTION_PREPARED_TYPE: i32 = 0x1 << 2;
pub const TRANSACTION_COMMIT_TYPE: i32 = 0x2 << 2;
pub const TRANSACTION_ROLLBACK_TYPE: i32 = 0x3 << 2;
pub const BORNHOST_V6_FLAG: i32 = 0x1 << 4;
pub const STOREHOSTADDRESS_V6_FLAG: i32 = 0x1 << 5;
pub const NEED_UNWRAP_FLAG: i32 = 0x1 << 6;
pub const INNER_BATCH_FLAG: i32 = 0x1 << 7;
pub const COMPRESSION_LZ4_TYPE: i32 = 0x1 << 8;
pub const COMPRESSION_ZSTD_TYPE: i32 = 0x2 << 8;
pub const COMPRESSION_ZLIB_TYPE: i32 = 0x3 << 8;
pub const COMPRESSION_TYPE_COMPARATOR: i32 = 0x7 << 8;

/// The transaction type bits (`flag & 0xC`).
pub fn transaction_value(sys_flag: i32) -> i32 {
    sys_flag & TRANSACTION_ROLLBACK_TYPE
}

/// Replaces the transaction type bits with `ty`.
pub fn reset_transaction_value(sys_flag: i32, ty: i32) -> i32 {
    (sys_flag & !TRANSACTION_ROLLBACK_TYPE) | (ty & TRANSACTION_ROLLBACK_TYPE)
}

pub fn is_compressed(sys_flag: i32) -> bool {
    sys_flag & COMPRESSED_FLAG != 0
}

/// Compression algorithm of a compressed body; the value 0 (old clients) means zlib.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionType {
    Lz4,
    Zstd,
    Zlib,
}

pub fn compression_type(sys_flag: i32) -> CompressionType {
    match (sys_flag & COMPRESSION_TYPE_COMPARATOR) >> 8 {
        1 => CompressionType::Lz4,
        2 => CompressionType::Zstd,
        _ => CompressionType::Zlib,
    }
}

// --- PullSysFlag ---
pub const PULL_FLAG_COMMIT_OFFSET: i32 = 0x1;
pub const PULL_FLAG_SUSPEND: i32 = 0x1 << 1;
pub const PULL_FLAG_SUBSCRIPTION: i32 = 0x1 << 2;
pub const PULL_FLAG_CLASS_FILTER: i32 = 0x1 << 3;
pub const PULL_FLAG_LITE_PULL_MESSAGE: i32 = 0x1 << 4;

// --- TopicSysFlag ---
pub const TOPIC_FLAG_UNIT: i32 = 0x1;
pub const TOPIC_FLAG_UNIT_SUB: i32 = 0x1 << 1;

/// Delay level table of the broker's default `messageDelayLevel`, in milliseconds (levels 1..=18).
pub const DEFAULT_DELAY_LEVELS_MS: [i64; 18] = [
    1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000, 360_000, 420_000,
    480_000, 540_000, 600_000, 1_200_000, 1_800_000, 3_600_000, 7_200_000,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysflag_values_match_java() {
        assert_eq!(
            (
                TRANSACTION_PREPARED_TYPE,
                TRANSACTION_COMMIT_TYPE,
                TRANSACTION_ROLLBACK_TYPE
            ),
            (4, 8, 12)
        );
        assert_eq!((BORNHOST_V6_FLAG, STOREHOSTADDRESS_V6_FLAG), (0x10, 0x20));
        assert_eq!((NEED_UNWRAP_FLAG, INNER_BATCH_FLAG), (0x40, 0x80));
        assert_eq!(COMPRESSION_ZLIB_TYPE | COMPRESSED_FLAG, 0x301);
        assert_eq!(transaction_value(0x301 | 8), 8);
        assert_eq!(
            reset_transaction_value(0x305, TRANSACTION_COMMIT_TYPE),
            0x309
        );
    }

    #[test]
    fn compression_zero_means_zlib() {
        assert_eq!(compression_type(0x1), CompressionType::Zlib);
        assert_eq!(compression_type(0x101), CompressionType::Lz4);
        assert_eq!(compression_type(0x201), CompressionType::Zstd);
        assert_eq!(compression_type(0x301), CompressionType::Zlib);
    }
}
