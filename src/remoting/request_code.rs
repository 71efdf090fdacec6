//! Every RequestCode of RocketMQ 5.x (remoting-protocol.md §5.1), with its number.

macro_rules! code_table {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $num:expr,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        pub enum $name { $($variant,)* }

        impl $name {
            /// The code for a wire number, `None` when the number is not in the table.
            pub fn from_code(code: i32) -> Option<Self> {
                match code { $($num => Some(Self::$variant),)* _ => None }
            }

            /// The wire number.
            pub fn code(self) -> i32 {
                match self { $(Self::$variant => $num,)* }
            }

            /// The Java constant name.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => stringify!($variant),)* }
            }
        }
    };
}
pub(crate) use code_table;

code_table! {
    /// A request's `code`.
    RequestCode {
        SEND_MESSAGE = 10,
        PULL_MESSAGE = 11,
        QUERY_MESSAGE = 12,
        QUERY_BROKER_OFFSET = 13,
        QUERY_CONSUMER_OFFSET = 14,
        UPDATE_CONSUMER_OFFSET = 15,
        UPDATE_AND_CREATE_TOPIC = 17,
        UPDATE_AND_CREATE_TOPIC_LIST = 18,
        GET_ALL_TOPIC_CONFIG = 21,
        GET_TOPIC_CONFIG_LIST = 22,
        GET_TOPIC_NAME_LIST = 23,
        UPDATE_BROKER_CONFIG = 25,
        GET_BROKER_CONFIG = 26,
        TRIGGER_DELETE_FILES = 27,
        GET_BROKER_RUNTIME_INFO = 28,
        SEARCH_OFFSET_BY_TIMESTAMP = 29,
        GET_MAX_OFFSET = 30,
        GET_MIN_OFFSET = 31,
        GET_EARLIEST_MSG_STORETIME = 32,
        VIEW_MESSAGE_BY_ID = 33,
        HEART_BEAT = 34,
        UNREGISTER_CLIENT = 35,
        CONSUMER_SEND_MSG_BACK = 36,
        END_TRANSACTION = 37,
        GET_CONSUMER_LIST_BY_GROUP = 38,
        CHECK_TRANSACTION_STATE = 39,
        NOTIFY_CONSUMER_IDS_CHANGED = 40,
        LOCK_BATCH_MQ = 41,
        UNLOCK_BATCH_MQ = 42,
        GET_ALL_CONSUMER_OFFSET = 43,
        GET_ALL_DELAY_OFFSET = 45,
        CHECK_CLIENT_CONFIG = 46,
        GET_CLIENT_CONFIG = 47,
        UPDATE_AND_CREATE_ACL_CONFIG = 50,
        DELETE_ACL_CONFIG = 51,
        GET_BROKER_CLUSTER_ACL_INFO = 52,
        UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53,
        GET_TIMER_CHECK_POINT = 60,
        GET_TIMER_METRICS = 61,
        PUT_KV_CONFIG = 100,
        GET_KV_CONFIG = 101,
        DELETE_KV_CONFIG = 102,
        REGISTER_BROKER = 103,
        UNREGISTER_BROKER = 104,
        GET_ROUTEINFO_BY_TOPIC = 105,
        GET_BROKER_CLUSTER_INFO = 106,
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200,
        GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201,
        GET_TOPIC_STATS_INFO = 202,
        GET_CONSUMER_CONNECTION_LIST = 203,
        GET_PRODUCER_CONNECTION_LIST = 204,
        WIPE_WRITE_PERM_OF_BROKER = 205,
        GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
        DELETE_SUBSCRIPTIONGROUP = 207,
        GET_CONSUME_STATS = 208,
        SUSPEND_CONSUMER = 209,
        RESUME_CONSUMER = 210,
        RESET_CONSUMER_OFFSET_IN_CONSUMER = 211,
        RESET_CONSUMER_OFFSET_IN_BROKER = 212,
        ADJUST_CONSUMER_THREAD_POOL = 213,
        WHO_CONSUME_THE_MESSAGE = 214,
        DELETE_TOPIC_IN_BROKER = 215,
        DELETE_TOPIC_IN_NAMESRV = 216,
        REGISTER_TOPIC_IN_NAMESRV = 217,
        GET_KVLIST_BY_NAMESPACE = 219,
        RESET_CONSUMER_CLIENT_OFFSET = 220,
        GET_CONSUMER_STATUS_FROM_CLIENT = 221,
        INVOKE_BROKER_TO_RESET_OFFSET = 222,
        INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223,
        GET_TOPICS_BY_CLUSTER = 224,
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST = 225,
        QUERY_TOPIC_CONSUME_BY_WHO = 300,
        REGISTER_FILTER_SERVER = 301,
        REGISTER_MESSAGE_FILTER_CLASS = 302,
        QUERY_CONSUME_TIME_SPAN = 303,
        GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
        GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305,
        CLEAN_EXPIRED_CONSUMEQUEUE = 306,
        GET_CONSUMER_RUNNING_INFO = 307,
        QUERY_CORRECTION_OFFSET = 308,
        CONSUME_MESSAGE_DIRECTLY = 309,
        SEND_MESSAGE_V2 = 310,
        GET_UNIT_TOPIC_LIST = 311,
        GET_HAS_UNIT_SUB_TOPIC_LIST = 312,
        GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313,
        CLONE_GROUP_OFFSET = 314,
        VIEW_BROKER_STATS_DATA = 315,
        CLEAN_UNUSED_TOPIC = 316,
        GET_BROKER_CONSUME_STATS = 317,
        UPDATE_NAMESRV_CONFIG = 318,
        GET_NAMESRV_CONFIG = 319,
        SEND_BATCH_MESSAGE = 320,
        QUERY_CONSUME_QUEUE = 321,
        QUERY_DATA_VERSION = 322,
        RESUME_CHECK_HALF_MESSAGE = 323,
        SEND_REPLY_MESSAGE = 324,
        SEND_REPLY_MESSAGE_V2 = 325,
        PUSH_REPLY_MESSAGE_TO_CLIENT = 326,
        ADD_WRITE_PERM_OF_BROKER = 327,
        GET_ALL_PRODUCER_INFO = 328,
        DELETE_EXPIRED_COMMITLOG = 329,
        QUERY_TOPICS_BY_CONSUMER = 343,
        QUERY_SUBSCRIPTION_BY_CONSUMER = 345,
        GET_TOPIC_CONFIG = 351,
        GET_SUBSCRIPTIONGROUP_CONFIG = 352,
        UPDATE_AND_GET_GROUP_FORBIDDEN = 353,
        CHECK_ROCKSDB_CQ_WRITE_PROGRESS = 354,
        EXPORT_ROCKSDB_CONFIG_TO_JSON = 355,
        LITE_PULL_MESSAGE = 361,
        RECALL_MESSAGE = 370,
        QUERY_ASSIGNMENT = 400,
        SET_MESSAGE_REQUEST_MODE = 401,
        GET_ALL_MESSAGE_REQUEST_MODE = 402,
        UPDATE_AND_CREATE_STATIC_TOPIC = 513,
        GET_BROKER_MEMBER_GROUP = 901,
        ADD_BROKER = 902,
        REMOVE_BROKER = 903,
        BROKER_HEARTBEAT = 904,
        NOTIFY_MIN_BROKER_ID_CHANGE = 905,
        EXCHANGE_BROKER_HA_INFO = 906,
        GET_BROKER_HA_STATUS = 907,
        RESET_MASTER_FLUSH_OFFSET = 908,
        CONTROLLER_ALTER_SYNC_STATE_SET = 1001,
        CONTROLLER_ELECT_MASTER = 1002,
        CONTROLLER_REGISTER_BROKER = 1003,
        CONTROLLER_GET_REPLICA_INFO = 1004,
        CONTROLLER_GET_METADATA_INFO = 1005,
        CONTROLLER_GET_SYNC_STATE_DATA = 1006,
        GET_BROKER_EPOCH_CACHE = 1007,
        NOTIFY_BROKER_ROLE_CHANGED = 1008,
        UPDATE_CONTROLLER_CONFIG = 1009,
        GET_CONTROLLER_CONFIG = 1010,
        CLEAN_BROKER_DATA = 1011,
        CONTROLLER_GET_NEXT_BROKER_ID = 1012,
        CONTROLLER_APPLY_BROKER_ID = 1013,
        BROKER_CLOSE_CHANNEL_REQUEST = 1014,
        CHECK_NOT_ACTIVE_BROKER_REQUEST = 1015,
        GET_BROKER_LIVE_INFO_REQUEST = 1016,
        GET_SYNC_STATE_DATA_REQUEST = 1017,
        RAFT_BROKER_HEART_BEAT_EVENT_REQUEST = 1018,
        UPDATE_COLD_DATA_FLOW_CTR_CONFIG = 2001,
        REMOVE_COLD_DATA_FLOW_CTR_CONFIG = 2002,
        GET_COLD_DATA_FLOW_CTR_INFO = 2003,
        SET_COMMITLOG_READ_MODE = 2004,
        AUTH_CREATE_USER = 3001,
        AUTH_UPDATE_USER = 3002,
        AUTH_DELETE_USER = 3003,
        AUTH_GET_USER = 3004,
        AUTH_LIST_USER = 3005,
        AUTH_CREATE_ACL = 3006,
        AUTH_UPDATE_ACL = 3007,
        AUTH_DELETE_ACL = 3008,
        AUTH_GET_ACL = 3009,
        AUTH_LIST_ACL = 3010,
        POP_MESSAGE = 200050,
        ACK_MESSAGE = 200051,
        PEEK_MESSAGE = 200052,
        CHANGE_MESSAGE_INVISIBLETIME = 200053,
        NOTIFICATION = 200054,
        POLLING_INFO = 200055,
        POP_ROLLBACK = 200056,
        POP_LITE_MESSAGE = 200070,
        LITE_SUBSCRIPTION_CTL = 200071,
        ACK_LITE_MESSAGE = 200072,
        NOTIFY_UNSUBSCRIBE_LITE = 200073,
        GET_BROKER_LITE_INFO = 200074,
        GET_PARENT_TOPIC_INFO = 200075,
        GET_LITE_TOPIC_INFO = 200076,
        GET_LITE_CLIENT_INFO = 200077,
        GET_LITE_GROUP_INFO = 200078,
        TRIGGER_LITE_DISPATCH = 200079,
        BATCH_ACK_MESSAGE = 200151,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for code in [10, 11, 105, 310, 361, 200050, 200151] {
            assert_eq!(RequestCode::from_code(code).unwrap().code(), code);
        }
        assert_eq!(RequestCode::from_code(9999), None);
        assert_eq!(RequestCode::SEND_MESSAGE_V2.name(), "SEND_MESSAGE_V2");
    }
}
