// The decoders every fuzz target and `tests/remoting_fuzz.rs` drive, shared with `include!`.
// Each function feeds untrusted input to decoders and ignores the outcome: the property checked
// is "returns instead of panicking". (No `//!` here: this file is included, not a module.)

use rmqd::common::batch::decode_batch;
use rmqd::common::msg_id::decode_msg_id;
use rmqd::common::properties::Properties;
use rmqd::common::filter::SqlFilter;
use rmqd::common::tag::TagFilter;
use rmqd::remoting::body::cluster_info::ClusterInfo;
use rmqd::remoting::body::kv_table::KVTable;
use rmqd::remoting::body::broker_stats::{BrokerStatsData, ProducerTableInfo};
use rmqd::remoting::body::register_broker::{
    decode_topic_config_line, RegisterBrokerBody, TopicConfigSerializeWrapper,
};
use rmqd::remoting::body::topic_list::TopicList;
use rmqd::remoting::body::topic_route::TopicRouteData;
use rmqd::remoting::header::namesrv::*;
use rmqd::remoting::body::fastjson;
use rmqd::remoting::body::properties_text::decode_properties_text;
use rmqd::remoting::body::*;
use rmqd::remoting::header::view_broker_stats_data::ViewBrokerStatsDataRequestHeader;
use rmqd::remoting::header::*;
use rmqd::remoting::{ExtFields, FrameCodec};

/// Every extFields key some header reads; fuzzed maps pick keys from here most of the time.
pub const HEADER_KEYS: &[&str] = &[
    "MSG_REGION", "TRACE_ON", "_UNIQUE_KEY_QUERY", "a", "attributes", "b", "batch", "batchUniqId",
    "beginTimestamp", "bname", "bornHost", "bornTimestamp", "boundaryType", "brokerName", "c", "cleanOffset",
    "clientID", "clientId", "commitLogOffset", "commitOffset", "commitOrRollback", "committed",
    "consumerGroup", "count", "d", "dataVersion", "defaultTopic", "defaultTopicQueueNums",
    "delayLevel", "e", "endTimestamp", "expressionType", "f", "flag", "forbiddenType", "force",
    "fromTransactionCheck", "g", "group", "groupName", "groupSeq", "groupSysFlag", "h", "i",
    "index", "indexLastUpdatePhyoffset", "indexLastUpdateTimestamp", "isForce", "j",
    "jstackEnable", "k", "key", "l", "lo", "m", "maxGroupNum", "maxMsgBytes", "maxMsgNums",
    "maxNum", "maxOffset", "maxReconsumeTimes", "maxTopicNum", "minOffset", "msgId", "n",
    "nextBeginOffset", "ns", "nsd", "offset", "offsetDelta", "offsetMsgId", "order", "originMsgId",
    "originTopic", "oway", "perm", "producerGroup", "properties", "proxyFrowardClientId",
    "queueId", "queueOffset", "readQueueNums", "recallHandle", "reconsumeTimes", "requestSource",
    "setZeroIfNotFound", "storeHost", "storeTimestamp", "subVersion", "subscription", "suggestWhichBrokerId",
    "suspendTimeoutMillis", "sysFlag", "timestamp", "topic", "topicFilterType", "topicList",
    "topicSeq", "topicSysFlag", "totalGroupNum", "totalTopicNum", "tranStateTableOffset",
    "transactionId", "unitMode", "version", "writeQueueNums",
    // NameServer headers.
    "acceptStandardJsonOnly", "brokerAddr", "brokerId", "cluster", "clusterName", "compressed",
    "confirmOffset", "electionPriority", "enableActingMaster", "epoch", "haServerAddr",
    "heartbeatTimeoutMillis", "heartbeatTimeoutMills", "masterAddr", "namespace", "value",
    // Appended, so that the selectors of a kept corpus keep their keys: VIEW_BROKER_STATS_DATA.
    "statsName", "statsKey",
    // Appended: the POP headers.
    "invisibleTime", "pollTime", "bornTime", "initMode", "expType", "exp", "attemptId",
    "extraInfo", "liteTopic", "popTime", "reviveQid", "restNum", "startOffsetInfo",
    "msgOffsetInfo", "orderCountInfo", "hasMsg", "pollingFull", "pollingNum",
    // Appended: the NameServer's answer headers.
    "changed", "wipeTopicCount", "addTopicCount",
    // Appended: QUERY_MESSAGE's 5.5 fields.
    "indexType", "lastKey",
];

/// Reads `ext` with every typed header.
pub fn decode_all_headers(ext: &ExtFields) {
    let _ = CheckTransactionStateRequestHeader::read_from(ext);
    let _ = ack_message::AckMessageRequestHeader::read_from(ext);
    let _ = ack_message::ChangeInvisibleTimeRequestHeader::read_from(ext);
    let _ = ack_message::ChangeInvisibleTimeResponseHeader::read_from(ext);
    let _ = pop_message::PopMessageRequestHeader::read_from(ext);
    let _ = notification::NotificationRequestHeader::read_from(ext);
    let _ = rmqd::remoting::header::pop_lite::PopLiteMessageRequestHeader::read_from(ext);
    let _ = rmqd::remoting::header::pop_lite::PopLiteMessageResponseHeader::read_from(ext);
    let _ = rmqd::remoting::header::pop_lite::NotifyUnsubscribeLiteRequestHeader::read_from(ext);
    let _ = notification::NotificationResponseHeader::read_from(ext);
    let _ = notification::PollingInfoRequestHeader::read_from(ext);
    let _ = notification::PollingInfoResponseHeader::read_from(ext);
    let _ = notification::PeekMessageRequestHeader::read_from(ext);
    let _ = pop_message::PopMessageResponseHeader::read_from(ext);
    if let Some(extra) = ext.get("extraInfo") {
        let _ = rmqd::broker::pop::records::Receipt::parse(extra);
    }
    let _ = ConsumeMessageDirectlyResultRequestHeader::read_from(ext);
    let _ = ConsumerSendMsgBackRequestHeader::read_from(ext);
    let _ = CreateTopicRequestHeader::read_from(ext);
    let _ = recall_message::RecallMessageRequestHeader::read_from(ext);
    let _ = recall_message::RecallMessageResponseHeader::read_from(ext);
    let _ = DeleteSubscriptionGroupRequestHeader::read_from(ext);
    let _ = DeleteTopicRequestHeader::read_from(ext);
    let _ = EndTransactionRequestHeader::read_from(ext);
    let _ = GetAllSubscriptionGroupRequestHeader::read_from(ext);
    let _ = GetAllSubscriptionGroupResponseHeader::read_from(ext);
    let _ = GetAllTopicConfigRequestHeader::read_from(ext);
    let _ = GetAllTopicConfigResponseHeader::read_from(ext);
    let _ = GetBrokerConfigResponseHeader::read_from(ext);
    let _ = GetConsumeStatsRequestHeader::read_from(ext);
    let _ = GetConsumerConnectionListRequestHeader::read_from(ext);
    let _ = GetConsumerListByGroupRequestHeader::read_from(ext);
    let _ = GetConsumerRunningInfoRequestHeader::read_from(ext);
    let _ = GetEarliestMsgStoretimeRequestHeader::read_from(ext);
    let _ = GetEarliestMsgStoretimeResponseHeader::read_from(ext);
    let _ = GetMaxOffsetRequestHeader::read_from(ext);
    let _ = GetMaxOffsetResponseHeader::read_from(ext);
    let _ = GetMinOffsetRequestHeader::read_from(ext);
    let _ = GetMinOffsetResponseHeader::read_from(ext);
    let _ = GetProducerConnectionListRequestHeader::read_from(ext);
    let _ = GetTopicConfigRequestHeader::read_from(ext);
    let _ = GetTopicStatsInfoRequestHeader::read_from(ext);
    let _ = NotifyConsumerIdsChangedRequestHeader::read_from(ext);
    let _ = PullMessageRequestHeader::read_from(ext);
    let _ = PullMessageResponseHeader::read_from(ext);
    let _ = QueryConsumeQueueRequestHeader::read_from(ext);
    let _ = QueryConsumerOffsetRequestHeader::read_from(ext);
    let _ = QueryConsumerOffsetResponseHeader::read_from(ext);
    let _ = QueryMessageRequestHeader::read_from(ext);
    let _ = QueryMessageResponseHeader::read_from(ext);
    let _ = QueryTopicConsumeByWhoRequestHeader::read_from(ext);
    let _ = ReplyMessageRequestHeader::read_from(ext);
    let _ = ResetOffsetRequestHeader::read_from(ext);
    let _ = RpcRequestHeader::read_from(ext);
    let _ = SearchOffsetRequestHeader::read_from(ext);
    let _ = SearchOffsetResponseHeader::read_from(ext);
    let _ = SendMessageRequestHeader::read_from(ext);
    let _ = SendMessageRequestHeaderV2::read_from(ext);
    let _ = SendMessageResponseHeader::read_from(ext);
    let _ = UnregisterClientRequestHeader::read_from(ext);
    let _ = UpdateConsumerOffsetRequestHeader::read_from(ext);
    let _ = ViewMessageRequestHeader::read_from(ext);
    let _ = ViewBrokerStatsDataRequestHeader::read_from(ext);
    let _ = ConsumerGroupRequestHeader::read_from(ext);
    let _ = OffsetResponseHeader::read_from(ext);
    let _ = QueueRequestHeader::read_from(ext);
    let _ = TopicRequestHeader::read_from(ext);
    let _ = BrokerHeartbeatRequestHeader::read_from(ext);
    let _ = BrokerIdentityHeader::read_from(ext);
    let _ = DeleteTopicFromNamesrvRequestHeader::read_from(ext);
    let _ = GetBrokerMemberGroupRequestHeader::read_from(ext);
    let _ = GetRouteInfoRequestHeader::read_from(ext);
    let _ = KVConfigKeyHeader::read_from(ext);
    let _ = PutKVConfigRequestHeader::read_from(ext);
    let _ = RegisterBrokerRequestHeader::read_from(ext);
    let _ = RegisterBrokerResponseHeader::read_from(ext);
    let _ = GetKVListByNamespaceRequestHeader::read_from(ext);
    let _ = WipeWritePermOfBrokerRequestHeader::read_from(ext);
    let _ = RegisterTopicRequestHeader::read_from(ext);
    let _ = GetTopicsByClusterRequestHeader::read_from(ext);
    let _ = QueryDataVersionResponseHeader::read_from(ext);
    let _ = GetKVConfigResponseHeader::read_from(ext);
    let _ = WipeWritePermOfBrokerResponseHeader::read_from(ext);
    let _ = AddWritePermOfBrokerResponseHeader::read_from(ext);
    for code in [10, 310, 320, 324, 325] {
        let _ = SendMessageRequestHeader::read_for_code(code, ext);
    }
}

/// Decodes `body` with every body decoder and the message-level decoders.
pub fn decode_all_bodies(body: &[u8]) {
    let _ = HeartbeatData::decode(body);
    let _ = ProducerConnection::decode(body);
    let _ = ConsumerConnection::decode(body);
    let _ = ConsumeStats::decode(body);
    let _ = TopicStatsTable::decode(body);
    let _ = GetConsumerListByGroupResponseBody::decode(body);
    let _ = LockBatchRequestBody::decode(body);
    let _ = pop::QueryAssignmentRequestBody::decode(body);
    let _ = pop::QueryAssignmentResponseBody::decode(body);
    let _ = pop::SetMessageRequestModeRequestBody::decode(body);
    let _ = rmqd::remoting::body::lite::LiteSubscriptionCtlRequestBody::decode(body);
    if let Ok(b) = pop::BatchAckMessageRequestBody::decode(body) {
        b.acks.iter().for_each(|a| drop(a.offsets()));
    }
    let _ = fastjson::from_slice::<rmqd::broker::pop::records::PopCheckPoint>(body);
    let _ = fastjson::from_slice::<rmqd::broker::pop::records::AckMsg>(body);
    let _ = LockBatchResponseBody::decode(body);
    let _ = UnlockBatchRequestBody::decode(body);
    let _ = QueryConsumeQueueResponseBody::decode(body);
    let _ = ConsumerRunningInfo::decode(body);
    let _ = ResetOffsetBody::decode(body);
    let _ = TopicConfigAndMappingSerializeWrapper::decode(body);
    let _ = TopicConfigAndQueueMapping::decode(body);
    let _ = SubscriptionGroupConfig::decode(body);
    let _ = SubscriptionGroupWrapper::decode(body);
    let _ = topic_config_list::CreateTopicListRequestBody::decode(body);
    let _ = topic_config_list::SubscriptionGroupList::decode(body);
    // RECALL_MESSAGE's handle (a header value) and its Base64
    let _ = rmqd::common::recall_handle::RecallHandle::decode(&String::from_utf8_lossy(body));
    let _ = GroupList::decode(body);
    let _ = BrokerStatsData::decode(body);
    let _ = ProducerTableInfo::decode(body);
    let _ = TopicConfigSerializeWrapper::decode(body);
    let _ = fastjson::normalize(body);
    let _ = fastjson::from_slice::<serde_json::Value>(body);
    let _ = decode_properties_text(body);
    let _ = decode_batch(body);
    let _ = rmqd::broker::transaction::parse_op_body(body);
    let props = Properties::decode_bytes(body);
    let text = String::from_utf8_lossy(body);
    let _ = decode_msg_id(&text);
    let _ = TagFilter::parse(&text);
    let _ = Properties::decode(&props.encode());
    // LMQ: the put's offsets and the dispatch's targets from any properties
    if let Some(names) = rmqd::store::lmq::dispatch_names("T", body) {
        let put = rmqd::store::lmq::assign_offsets(&text, names, |n| n.len() as i64);
        let _ = rmqd::store::lmq::dispatch_targets("T", put.properties.as_bytes(), 3, true);
    }
    let _ = rmqd::store::lmq::dispatch_targets("T", body, 0, true);
    decode_namesrv_bodies(body);
    if let Ok(f) = SqlFilter::compile(&text) {
        let _ = f.evaluate(&props);
        let _ = f.matches(&props);
    }
    let _ = rmqd::common::topic::validate_topic(&text);
    let _ = rmqd::common::topic::validate_group(&text);
}

/// The NameServer's bodies: register-broker (JSON and deflated, every version), routes, cluster
/// info, KV table, topic list, data version, one topic-config line.
pub fn decode_namesrv_bodies(body: &[u8]) {
    for version in [0, 400] {
        let _ = RegisterBrokerBody::decode(body, false, version);
        let _ = RegisterBrokerBody::decode_compressed(body, version);
    }
    let _ = TopicRouteData::decode(body);
    let _ = ClusterInfo::decode(body);
    let _ = KVTable::decode(body);
    let _ = TopicList::decode(body);
    let _ = rmqd::common::data_version::DataVersion::decode(body);
    let _ = decode_topic_config_line(&String::from_utf8_lossy(body));
}

/// Config files as the broker and the NameServer read them: `broker.conf` and `namesrv.conf`
/// (Java properties, then every key set on the broker's and the store's config), and the JSON
/// files under `config/` (topics, consumer offsets, subscription groups, delay offsets).
pub fn decode_config_files(data: &[u8]) {
    use rmqd::store::config_files::{self, DelayOffsetWrapper};
    let text = String::from_utf8_lossy(data);
    let mut broker = rmqd::broker::config::BrokerConfig::default();
    let mut store = rmqd::store::MessageStoreConfig::with_root("/nonexistent-rmqd-fuzz");
    for (k, v) in rmqd::common::java_properties::parse(&text) {
        let _ = broker.set(&k, &v);
        let _ = store.set(&k, &v);
    }
    let _ = store.sanitize();
    let _ = broker.key_values();
    let _ = rmqd::namesrv::config::NamesrvConfig::from_properties_text(&text);
    let _ = rmqd::common::fastjson::normalize(&text);
    let _ = config_files::from_fastjson::<config_files::TopicConfigSerializeWrapper>(&text);
    let _ = config_files::from_fastjson::<DelayOffsetWrapper>(&text);
    let _ = rmqd::broker::metadata::offsets::parse_offset_table(&text);
    let _ = rmqd::common::subscription_group::SubscriptionGroupWrapper::decode(data);
    let _ = rmqd::broker::pop::order_info::parse(&text);
    let _ = rmqd::broker::pop::request_mode::parse(&text);
    decode_config_kv_values(data);
}

/// The values of Java 5.5's config RocksDBs (`storeType=defaultRocksDB`: topics, subscription
/// groups and their forbidden bits, consumer offsets), as rmqd decodes them at start.
pub fn decode_config_kv_values(data: &[u8]) {
    use rmqd::broker::metadata::kv::decode_entries;
    let entry = [("fuzz".to_string(), data.to_vec())];
    let _ = decode_entries::<rmqd::common::topic::TopicConfig>("topic", &entry);
    let _ = decode_entries::<rmqd::remoting::body::subscription_group::SubscriptionGroupConfig>(
        "subscription group",
        &entry,
    );
    let _ = decode_entries::<std::collections::BTreeMap<String, i32>>("forbidden", &entry);
    let _ = decode_entries::<rmqd::broker::metadata::offsets::OffsetValue>("offset", &entry);
    let _ = decode_entries::<rmqd::remoting::body::data_version::DataVersion>("version", &entry);
}

/// Store records and file headers: a commit-log record (with and without CRC check, and as the
/// broker decodes a looked-up message), a consume-queue unit, an index header, the checkpoint, a
/// file name.
pub fn decode_store_bytes(data: &[u8]) {
    use rmqd::store::commitlog::record;
    for check_crc in [false, true] {
        if let Ok(record::Decoded::Record(rec)) = record::decode(data, check_crc) {
            let _ = rec.topic_str();
            let _ = rec.tran_type();
        }
    }
    let _ = rmqd::broker::transaction::decode_stored(data);
    let _ = rmqd::store::consumequeue::CqUnit::decode(data);
    let _ = rmqd::store::index::IndexHeader::decode(data);
    let _ = rmqd::store::checkpoint::decode(data);
    let _ = rmqd::store::paths::parse_offset_file_name(&String::from_utf8_lossy(data));
}

/// The RocksDB consume queue's key and value decoders (`store::consumequeue::rocksdb_codec`) on
/// the whole input and on a split `n | key (n bytes) | value`; whatever decodes must encode back
/// to the same bytes (keys up to Java's 300 bytes: the encoders refuse longer ones, the decoders
/// read them).
pub fn decode_rocksdb_cq(data: &[u8]) {
    use rmqd::store::consumequeue::rocksdb_codec as c;
    let (key, value) = match data.split_first() {
        Some((&n, rest)) if (n as usize) <= rest.len() => rest.split_at(n as usize),
        _ => (data, &[][..]),
    };
    for b in [data, key, value] {
        let fits = b.len() <= c::MAX_KEY_LEN;
        if let Ok(k) = c::decode_cq_key(b) {
            let again = c::encode_cq_key(k.topic, k.queue_id, k.cq_offset);
            assert!(!fits || again.ok().as_deref() == Some(b));
        }
        if let Ok(k) = c::decode_offset_key(b) {
            let again = c::encode_offset_key(k.topic, k.kind, k.queue_id);
            assert!(!fits || again.ok().as_deref() == Some(b));
            let _ = c::is_checkpoint_key(b);
        }
        if let Ok(v) = c::decode_cq_value(b) {
            assert_eq!(&c::encode_cq_value(&v)[..], b);
        }
        if let Ok(v) = c::decode_offset_value(b) {
            assert_eq!(&c::encode_offset_value(&v)[..], b);
        }
        let _ = c::decode_checkpoint_value(b);
    }
}

/// Builds an extFields map from bytes: lines of `selector value`, where a selector byte below
/// `HEADER_KEYS.len()` picks a known key and anything else makes the line `key=value`.
pub fn ext_from_bytes(data: &[u8]) -> ExtFields {
    let mut ext = ExtFields::new();
    for line in data.split(|&b| b == b'\n') {
        let Some((&sel, rest)) = line.split_first() else {
            continue;
        };
        let rest = String::from_utf8_lossy(rest).into_owned();
        match HEADER_KEYS.get(sel as usize) {
            Some(key) => ext.insert(*key, rest),
            None => {
                let all = String::from_utf8_lossy(line).into_owned();
                let (k, v) = all.split_once('=').unwrap_or((all.as_str(), ""));
                ext.insert(k, v);
            }
        }
    }
    ext
}

/// Reads `data` as a bare JSON and a bare ROCKETMQ header, then feeds it to the frame codec until
/// it stops producing frames and runs the header and body decoders over whatever decoded.
pub fn decode_frames(data: &[u8]) {
    let _ = rmqd::remoting::serialize::json::decode_header(data);
    let _ = rmqd::remoting::serialize::rocketmq::decode_header(data);
    let codec = FrameCodec::default();
    let mut buf = bytes::BytesMut::from(data);
    for _ in 0..64 {
        match codec.decode_frame(&mut buf) {
            Ok(Some(cmd)) => {
                if let Some(ext) = &cmd.ext_fields {
                    decode_all_headers(ext);
                }
                decode_all_bodies(&cmd.body.to_bytes());
            }
            Ok(None) | Err(_) => break,
        }
    }
    read_frames_in_chunks(data);
}

/// The connection reader's loop (`server::reader::FrameReader::next`) without the socket: the
/// first byte sets a chunk size, the rest arrives in chunks of it; after each chunk the announced
/// length (what the reader takes receive budget for) is read, then frames are decoded. Checked:
/// the announced length and the decoder agree (an announced length that is refused is refused by
/// the decoder too, and a decoded frame took exactly `4 + announced` bytes off the buffer).
pub fn read_frames_in_chunks(data: &[u8]) {
    let Some((&chunk, stream)) = data.split_first() else {
        return;
    };
    let codec = FrameCodec::with_max_frame_length(4096);
    let mut buf = bytes::BytesMut::new();
    for part in stream.chunks(1 + chunk as usize) {
        buf.extend_from_slice(part);
        loop {
            let announced = codec.announced_length(&buf);
            let before = buf.len();
            match (announced, codec.decode_frame(&mut buf)) {
                (Ok(Some(length)), Ok(Some(_))) => assert_eq!(before - buf.len(), 4 + length),
                (Ok(_), Ok(None)) => break,
                (Ok(Some(_)), Err(_)) => return,
                (Err(_), Err(_)) => return,
                (announced, decoded) => {
                    panic!("announced {announced:?} but decoded {:?}", decoded.map(|c| c.is_some()))
                }
            }
        }
    }
}
