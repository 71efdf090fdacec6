package compat.lite;

import static compat.lite.LiteMain.ackLite;
import static compat.lite.LiteMain.admin;
import static compat.lite.LiteMain.body;
import static compat.lite.LiteMain.broker;
import static compat.lite.LiteMain.check;
import static compat.lite.LiteMain.classic;
import static compat.lite.LiteMain.consumerOffset;
import static compat.lite.LiteMain.ctl;
import static compat.lite.LiteMain.ctlOk;
import static compat.lite.LiteMain.decode;
import static compat.lite.LiteMain.fileOffset;
import static compat.lite.LiteMain.group;
import static compat.lite.LiteMain.liteMsg;
import static compat.lite.LiteMain.lmq;
import static compat.lite.LiteMain.maxOffset;
import static compat.lite.LiteMain.mkLite;
import static compat.lite.LiteMain.parent;
import static compat.lite.LiteMain.popLite;
import static compat.lite.LiteMain.raw;
import static compat.lite.LiteMain.receipt;
import static compat.lite.LiteMain.runId;
import static compat.lite.LiteMain.sleep;
import static compat.lite.LiteMain.store;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONObject;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.lite.LiteSubscriptionAction;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.body.GetLiteTopicInfoResponseBody;
import org.apache.rocketmq.remoting.protocol.body.GetParentTopicInfoResponseBody;
import org.apache.rocketmq.remoting.protocol.header.PopLiteMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

/**
 * LITE-SW-J2R / LITE-SW-R2J (compat-tests/suites/lite.sh, lite_swap_case): a lite store moves between the Java 5.5.0
 * broker and rmqd (same broker.conf, SIGTERM between). Two halves, one JVM each, on the broker of the swap case:
 * LITE-SW-WRITE on the first broker, LITE-SW-VERIFY on the second. Names: LITESW_<runId>_p / _g, lite topics a, b.
 * The WRITE half saves what it sent (msgIds, CommitLog offsets) and the lite consume-queue units it read from the
 * store in &lt;store&gt;/../lite-sw-state.json; the VERIFY half checks the second broker serves the same.
 */
final class LiteSwap {
    private LiteSwap() {
    }

    static final String ID = "SW";

    static Path stateFile() {
        return store.toAbsolutePath().getParent().resolve("lite-sw-state.json");
    }

    /** the lite CQ units while a broker runs on the store: the file on disk, or QUERY_CONSUME_QUEUE with RocksDB
     * (LiteStore.unitsLive), waited for up to ms */
    static List<long[]> awaitUnits(String lmqName, int n, long ms) throws Exception {
        long end = System.currentTimeMillis() + ms;
        List<long[]> u = LiteStore.unitsLive(lmqName, n);
        while (u.size() < n && System.currentTimeMillis() < end) {
            sleep(200);
            u = LiteStore.unitsLive(lmqName, n);
        }
        return u;
    }

    /** the units a stopped broker left on disk (RocksDB: flushed at its SIGTERM, so visible to a read-only open even
     * while the next broker runs on the store); a read-only open racing a compaction of the running broker is retried */
    static List<long[]> unitsOnDisk(String lmqName, int n) throws Exception {
        Exception last = null;
        for (int i = 0; i < 5; i++) {
            try {
                return LiteStore.unitsOnDisk(lmqName, n);
            } catch (Exception e) {
                last = e;
                sleep(300);
            }
        }
        throw last;
    }

    static String units(List<long[]> u) {
        StringBuilder b = new StringBuilder("[");
        for (long[] x : u) b.append(b.length() > 1 ? " " : "").append(x[0]).append('/').append(x[1]).append('/').append(x[2]);
        return b.append(']').toString();
    }

    /** the CommitLog offset an offsetMsgId (broker address + physical offset) names */
    static long phyOf(String offsetMsgId) throws Exception {
        return MessageDecoder.decodeMessageId(offsetMsgId).getOffset();
    }

    /** LITE-SW-WRITE: on the first broker. */
    static String write() throws Exception {
        mkLite(ID, 1440, "+lite.sub.model=Exclusive");
        String t = parent(ID), g = group(ID), cid = "rawsw1@" + runId;
        JSONObject state = new JSONObject(new LinkedHashMap<>());
        JSONObject sent = new JSONObject(new LinkedHashMap<>());
        DefaultMQProducer p = classic(ID);
        try {
            for (int i = 0; i < 5; i++) {
                for (String l : List.of("a", "b")) {
                    Message m = liteMsg(t, l, l + "-" + i);
                    m.setTags("tag" + l); // indexed as topic#T#tag<l> by Java 5.5 (and rmqd with rmqdIndexTags)
                    SendResult r = p.send(m);
                    check(r.getSendStatus() == SendStatus.SEND_OK, "send " + l + "-" + i + ": " + r);
                    JSONObject e = new JSONObject(new LinkedHashMap<>());
                    e.put("msgId", r.getMsgId());
                    e.put("offsetMsgId", r.getOffsetMsgId());
                    e.put("phy", phyOf(r.getOffsetMsgId()));
                    sent.put(l + "-" + i, e);
                }
            }
        } finally {
            p.shutdown();
        }
        state.put("sent", sent);
        // the dispatch of the lite units follows the send's acknowledgement (in Java too)
        long ma = awaitMax(lmq(t, "a"), 5), mb = awaitMax(lmq(t, "b"), 5);
        check(ma == 5 && mb == 5, "GET_MAX_OFFSET of the lite queues before the swap: a=" + ma + " b=" + mb);
        // the lite consume queues on disk: unit i of a / b = the CommitLog offset of <lite>-i
        JSONObject cq = new JSONObject(new LinkedHashMap<>());
        for (String l : List.of("a", "b")) {
            List<long[]> u = awaitUnits(lmq(t, l), 5, 10000);
            check(u.size() == 5, lmq(t, l) + " units (" + LiteStore.unitsWhere(true) + ") before the swap: " + units(u));
            for (int i = 0; i < 5; i++) {
                long want = sent.getJSONObject(l + "-" + i).getLongValue("phy");
                check(u.get(i)[0] == want, lmq(t, l) + " unit " + i + " (" + LiteStore.unitsWhere(true) + ") " + units(u)
                    + ": CommitLog offset " + u.get(i)[0] + ", the send said " + want);
            }
            List<List<Long>> ul = new ArrayList<>();
            for (long[] x : u) ul.add(List.of(x[0], x[1], x[2]));
            cq.put(l, ul);
        }
        state.put("cq", cq);
        // a raw client takes the first 3 of a and acks them: offset 3 for (g, a)
        ctlOk(LiteSubscriptionAction.PARTIAL_ADD, cid, g, t, Set.of("a"));
        RemotingCommand r = popLite(raw, cid, g, t, 3, 30000, 3000);
        check(r.getCode() == 0, "POP_LITE on the first broker: " + r.getCode() + " " + r.getRemark());
        PopLiteMessageResponseHeader h = r.decodeCommandCustomHeader(PopLiteMessageResponseHeader.class);
        List<MessageExt> ms = decode(r);
        List<String> bodies = new ArrayList<>();
        for (MessageExt m : ms) bodies.add(body(m));
        check(bodies.equals(List.of("a-0", "a-1", "a-2")), "POP_LITE maxMsgNum 3 on the first broker: " + bodies);
        for (int i = 0; i < 3; i++) {
            RemotingCommand ar = ackLite(g, t, "a", receipt(h, t, i), i);
            check(ar.getCode() == 0, "ACK a offset " + i + ": " + ar.getCode() + " " + ar.getRemark());
        }
        long co = consumerOffset(g, lmq(t, "a"));
        check(co == 3, "QUERY_CONSUMER_OFFSET of a after 3 acks: " + co);
        // the broker writes config/lmqConsumerOffset.json every flushConsumerOffsetInterval (5 s; Java: first after
        // 10 s) and on SIGTERM: wait for the periodic write, so the file the second broker reads has it either way
        long t0 = System.currentTimeMillis();
        String persisted;
        if (LiteStore.rocks()) {
            // Java: RocksDBConsumerOffsetManager writes config/consumerOffsets (WAL on) every 5 s and at SIGTERM;
            // reported here, asserted after the second broker's SIGTERM (LITE-SW-AFTER) and by the second broker
            Long fo = null;
            while (System.currentTimeMillis() - t0 < 20000) {
                fo = kvOffset(lmq(t, "a"), g);
                if (fo != null && fo == 3) break;
                sleep(500);
            }
            persisted = fo != null && fo == 3 ? "in config/consumerOffsets (RocksDB KV) after " + (System.currentTimeMillis() - t0) + " ms"
                : "NOT in config/consumerOffsets (RocksDB KV) after 20 s (" + fo + ")";
        } else {
            Long fo = LiteMain.awaitFileOffset(lmq(t, "a"), g, 3, 20000);
            check(fo != null && fo == 3, "lmqConsumerOffset.json offsetTable[" + lmq(t, "a") + "@" + g + "] = " + fo + " after 20 s");
            persisted = "in lmqConsumerOffset.json after " + (System.currentTimeMillis() - t0) + " ms";
        }
        Files.writeString(stateFile(), JSON.toJSONString(state, true));
        // the subscription stays (it lives in the first broker's memory only); the second broker starts without it
        return "10 sent (a-0..4, b-0..4), max offsets 5/5, lite CQ units (" + LiteStore.unitsWhere(true)
            + ") = the sends' CommitLog offsets (" + units(LiteStore.unitsLive(lmq(t, "a"), 5)) + "); POP_LITE 3 + ACK: offset 3, "
            + persisted;
    }

    /** LITE-SW-VERIFY: on the second broker, started on the store of the first. */
    static String verify() throws Exception {
        String t = parent(ID), g = group(ID), cid = "rawsw2@" + runId;
        check(Files.exists(stateFile()), "no " + stateFile() + " (the WRITE half did not finish)");
        JSONObject state = JSON.parseObject(Files.readString(stateFile()));
        JSONObject sent = state.getJSONObject("sent");
        StringBuilder sb = new StringBuilder();
        // the route of the parent again on the NameServer (the classic producer needs it)
        long end = System.currentTimeMillis() + 30000;
        boolean routed = false;
        while (!routed && System.currentTimeMillis() < end) {
            try {
                routed = !admin.examineTopicRouteInfo(t).getQueueDatas().isEmpty();
            } catch (Exception ignored) {
            }
            if (!routed) sleep(300);
        }
        check(routed, "route of " + t + " not on the NameServer 30 s after the second broker started");
        // the lite consume queues the first broker wrote (on disk: the file, or the RocksDB it flushed at SIGTERM)
        // are the ones it answered before the swap, and the ones the second broker serves
        for (String l : List.of("a", "b")) {
            String before = JSON.toJSONString(state.getJSONObject("cq").getJSONArray(l));
            List<long[]> u = unitsOnDisk(lmq(t, l), 5);
            check(JSON.toJSONString(toLists(u)).equals(before),
                lmq(t, l) + " units on disk (" + LiteStore.unitsWhere(false) + ") " + units(u) + ", before the swap " + before);
            if (LiteStore.rocks()) {
                List<long[]> b = LiteStore.unitsOfBroker(lmq(t, l), 5);
                check(JSON.toJSONString(toLists(b)).equals(before),
                    lmq(t, l) + " units the second broker answers (QUERY_CONSUME_QUEUE) " + units(b) + ", before the swap " + before);
            }
        }
        sb.append("lite CQ units unchanged (").append(LiteStore.unitsWhere(false)).append(LiteStore.rocks() ? ", QUERY_CONSUME_QUEUE" : "")
            .append("); ");
        long ma = maxOffset(lmq(t, "a")), mb = maxOffset(lmq(t, "b"));
        check(ma == 5 && mb == 5, "GET_MAX_OFFSET of the lite queues after the swap: a=" + ma + " b=" + mb);
        long ca = consumerOffset(g, lmq(t, "a")), cb = consumerOffset(g, lmq(t, "b"));
        check(ca == 3, "QUERY_CONSUMER_OFFSET of a after the swap: " + ca + " (want 3)");
        sb.append("max offsets 5/5, offset of a 3 (b ").append(cb).append("); ");
        // metadata
        TopicConfig tc = admin.examineTopicConfig(broker, t);
        Map<String, String> ta = tc.getAttributes();
        check("LITE".equals(ta.get("message.type")) && "1440".equals(ta.get("lite.topic.expiration")), "GET_TOPIC_CONFIG attributes " + ta);
        SubscriptionGroupConfig gc = admin.examineSubscriptionGroupConfig(broker, g);
        Map<String, String> ga = gc.getAttributes();
        check(t.equals(ga.get("lite.bind.topic")) && "Exclusive".equals(ga.get("lite.sub.model")), "GET_SUBSCRIPTIONGROUP_CONFIG attributes " + ga);
        GetParentTopicInfoResponseBody pi = admin.getParentTopicInfo(broker, t);
        check(pi.getTtl() == 1440 && pi.getLiteTopicCount() == 2 && pi.getGroups() != null && pi.getGroups().contains(g),
            "GET_PARENT_TOPIC_INFO " + JSON.toJSONString(pi));
        GetLiteTopicInfoResponseBody ti = admin.getLiteTopicInfo(broker, t, "a");
        check(ti.getTopicOffset() != null && ti.getTopicOffset().getMaxOffset() == 5 && ti.getTopicOffset().getMinOffset() == 0,
            "GET_LITE_TOPIC_INFO a " + JSON.toJSONString(ti));
        sb.append("attributes kept, parent info ttl 1440 liteTopicCount 2, lite topic info a 0..5; ");
        // the stored messages by their offsetMsgId (CommitLog offset)
        for (Map.Entry<String, Object> e : sent.entrySet()) {
            MessageExt m = admin.viewMessage(t, ((JSONObject) e.getValue()).getString("offsetMsgId"));
            check(e.getKey().equals(body(m)) && e.getKey().substring(0, 1).equals(m.getProperty(MessageConst.PROPERTY_LITE_TOPIC))
                && lmq(t, e.getKey().substring(0, 1)).equals(m.getProperty(MessageConst.PROPERTY_INNER_MULTI_DISPATCH))
                && e.getKey().substring(2).equals(m.getProperty(MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET)),
                "viewMessage " + e.getKey() + ": " + body(m) + " " + m.getProperties());
        }
        sb.append("10 viewMessage by offsetMsgId; ");
        // the first broker's tag index entries (topic#T#taga), served by the second: a query by tag (indexType=T, the
        // admin API and mqadmin queryMsgByKey -p T of 5.5.0) finds a-0..a-4
        Set<String> byTag = new TreeSet<>();
        try {
            QueryResult qr = admin.queryMessage(null, t, "taga", 64, 0, Long.MAX_VALUE, MessageConst.INDEX_TAG_TYPE, null);
            for (MessageExt m : qr.getMessageList()) byTag.add(body(m));
        } catch (MQClientException e) {
            check(false, "QUERY_MESSAGE indexType=T key taga on the second broker: " + e.getMessage());
        }
        check(byTag.equals(Set.of("a-0", "a-1", "a-2", "a-3", "a-4")), "query by tag taga on the second broker: " + byTag);
        String byTagOut = LiteMain.mqadmin("queryMsgByKey", "-t", t, "-k", "taga", "-p", "T");
        for (int i = 0; i < 5; i++) {
            String id = sent.getJSONObject("a-" + i).getString("msgId");
            check(byTagOut.contains(id), "mqadmin queryMsgByKey -p T taga: no " + id + " in " + LiteMain.cut(byTagOut, 600));
        }
        sb.append("query by tag (indexType=T, queryMsgByKey -p T): a-0..a-4; ");
        // a new raw client subscribes a and b: a from 3, b from 0 (no offset: the start)
        ctlOk(LiteSubscriptionAction.PARTIAL_ADD, cid, g, t, Set.of("a", "b"));
        Map<String, List<String>> got = new TreeMap<>();
        List<String> trail = new ArrayList<>();
        int pops = 0, total = 0;
        long t0 = System.currentTimeMillis();
        end = t0 + 30000;
        while (total < 7 && System.currentTimeMillis() < end) {
            RemotingCommand r = popLite(raw, cid, g, t, 32, 30000, 2000);
            pops++;
            if (r.getCode() != 0) {
                trail.add(String.valueOf(r.getCode()));
                continue;
            }
            PopLiteMessageResponseHeader h = r.decodeCommandCustomHeader(PopLiteMessageResponseHeader.class);
            List<String> one = new ArrayList<>();
            for (MessageExt m : decode(r)) {
                String lite = m.getProperty(MessageConst.PROPERTY_LITE_TOPIC);
                String qo = m.getProperty(MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET);
                String b = body(m);
                one.add(b + "@" + qo);
                got.computeIfAbsent(lite, k -> new ArrayList<>()).add(b + "@" + qo);
                total++;
                JSONObject s = sent.getJSONObject(b);
                check(s != null && s.getString("msgId").equals(m.getMsgId()) && t.equals(m.getTopic()),
                    "popped " + b + " msgId " + m.getMsgId() + " topic " + m.getTopic() + ", sent as " + s);
                long off = Long.parseLong(qo);
                RemotingCommand ar = ackLite(g, t, lite, receipt(h, t, off), off);
                check(ar.getCode() == 0, "ACK " + lite + " offset " + off + " on the second broker: " + ar.getCode() + " " + ar.getRemark());
            }
            trail.add(one.toString());
        }
        long took = System.currentTimeMillis() - t0;
        Map<String, List<String>> want = new TreeMap<>();
        want.put("a", List.of("a-3@3", "a-4@4"));
        want.put("b", List.of("b-0@0", "b-1@1", "b-2@2", "b-3@3", "b-4@4"));
        check(got.equals(want), "POP_LITE on the second broker (" + pops + " pops in " + took + " ms): " + got + " want " + want
            + "; pops " + trail);
        sleep(300);
        long ca2 = consumerOffset(g, lmq(t, "a")), cb2 = consumerOffset(g, lmq(t, "b"));
        check(ca2 == 5 && cb2 == 5, "QUERY_CONSUMER_OFFSET after the acks: a=" + ca2 + " b=" + cb2);
        sb.append("new subscription: POP_LITE ").append(got).append(" in ").append(pops).append(" pops, ")
            .append(took).append(" ms, acked: offsets 5/5; ");
        // new sends to a continue the lite queue at 5
        DefaultMQProducer p = classic(ID + "v");
        SendResult sr;
        try {
            sr = p.send(liteMsg(t, "a", "a-5"));
            check(sr.getSendStatus() == SendStatus.SEND_OK, "send a-5: " + sr);
        } finally {
            p.shutdown();
        }
        MessageExt m5 = admin.viewMessage(t, sr.getOffsetMsgId());
        check("5".equals(m5.getProperty(MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET)), "a-5 stored with INNER_MULTI_QUEUE_OFFSET "
            + m5.getProperty(MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET));
        long ma6 = awaitMax(lmq(t, "a"), 6);
        check(ma6 == 6, "GET_MAX_OFFSET of a after a new send: " + ma6);
        List<long[]> u = awaitUnits(lmq(t, "a"), 6, 10000);
        check(u.size() == 6 && u.get(5)[0] == phyOf(sr.getOffsetMsgId()), lmq(t, "a") + " units (" + LiteStore.unitsWhere(true)
            + ") after the new send: " + units(u) + ", a-5 at CommitLog offset " + phyOf(sr.getOffsetMsgId()));
        state.put("a5", toLists(u).get(5));
        Files.writeString(stateFile(), JSON.toJSONString(state, true));
        RemotingCommand r = popLite(raw, cid, g, t, 32, 30000, 10000);
        List<MessageExt> ms = decode(r);
        check(r.getCode() == 0 && ms.size() == 1 && "a-5".equals(body(ms.get(0)))
            && "5".equals(ms.get(0).getProperty(MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET)),
            "POP_LITE of the new message: " + r.getCode() + " " + r.getRemark() + " " + ms.size());
        PopLiteMessageResponseHeader h = r.decodeCommandCustomHeader(PopLiteMessageResponseHeader.class);
        check(ackLite(g, t, "a", receipt(h, t, 5), 5).getCode() == 0, "ack a-5");
        sleep(300);
        long ca3 = consumerOffset(g, lmq(t, "a"));
        check(ca3 == 6, "QUERY_CONSUMER_OFFSET of a after a-5: " + ca3);
        RemotingCommand cr = ctl(raw, LiteSubscriptionAction.COMPLETE_REMOVE, cid, g, t, Set.of());
        check(cr.getCode() == 0, "COMPLETE_REMOVE " + cr.getCode());
        sb.append("a-5 sent: lite offset 5, CQ unit 5, popped and acked (offset 6)");
        if (LiteStore.rocks()) return sb.append("; config/consumerOffsets a now ").append(kvOffset(lmq(t, "a"), g)).toString();
        Long fo = fileOffset(lmq(t, "a"), g);
        return sb.append("; lmqConsumerOffset.json a now ").append(fo).toString();
    }

    /** offsetTable["<lmq>@<group>"]["0"] of the persisted offsets (LiteStore.offsetTables: lmqConsumerOffset.json or
     * the RocksDB KV config/consumerOffsets), or null */
    static Long kvOffset(String lmqName, String group) throws Exception {
        Map<String, JSONObject> t = LiteStore.offsetTables();
        JSONObject e = t == null ? null : t.get(lmqName + "@" + group);
        return e == null ? null : e.getLong("0");
    }

    /** LITE-SW-AFTER: after the second broker's SIGTERM (no broker on the store): the persisted offsets are a 6, b 5
     * (lmqConsumerOffset.json, or the RocksDB KV config/consumerOffsets) and, with RocksDB, the consume-queue units
     * the database holds are a-0..5 and b-0..4 as the brokers answered them. */
    static String after() throws Exception {
        String t = parent(ID), g = group(ID);
        JSONObject state = JSON.parseObject(Files.readString(stateFile()));
        // both checks run (their findings are reported together)
        List<String> bad = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        if (LiteStore.rocks()) {
            for (String l : List.of("a", "b")) {
                List<Object> want = new ArrayList<>(state.getJSONObject("cq").getJSONArray(l));
                if (l.equals("a")) want.add(state.getJSONArray("a5"));
                List<long[]> u = LiteStore.rocksUnits(lmq(t, l), 10);
                if (!JSON.toJSONString(toLists(u)).equals(JSON.toJSONString(want))) {
                    bad.add(lmq(t, l) + " units in the RocksDB consumequeue/ after the second broker's SIGTERM " + units(u) + ", want " + want);
                }
            }
            if (bad.isEmpty()) out.append("RocksDB consumequeue/ units a-0..5, b-0..4 as the brokers answered them; ");
        }
        Long a = kvOffset(lmq(t, "a"), g), b = kvOffset(lmq(t, "b"), g);
        if (a != null && a == 6 && b != null && b == 5) out.append(LiteStore.offsetsWhere()).append(" a 6, b 5");
        else bad.add(LiteStore.offsetsWhere() + " after the second broker's SIGTERM: a " + a + ", b " + b + " (want 6/5)");
        check(bad.isEmpty(), String.join("; ", bad) + (out.length() > 0 ? " (ok: " + out + ")" : ""));
        return out.toString();
    }

    /** GET_MAX_OFFSET of (lmq, 0) once it is want, or what it is after 5 s */
    static long awaitMax(String lmqName, long want) throws Exception {
        long end = System.currentTimeMillis() + 5000, m = maxOffset(lmqName);
        while (m != want && System.currentTimeMillis() < end) {
            sleep(100);
            m = maxOffset(lmqName);
        }
        return m;
    }

    static List<List<Long>> toLists(List<long[]> u) {
        List<List<Long>> out = new ArrayList<>();
        for (long[] x : u) out.add(List.of(x[0], x[1], x[2]));
        return out;
    }
}
