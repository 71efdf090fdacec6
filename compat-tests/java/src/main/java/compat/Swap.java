package compat;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.admin.ConsumeStats;
import org.apache.rocketmq.remoting.protocol.admin.OffsetWrapper;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

/**
 * Issue 5: a store moves between two brokers (Java -> rmqd, rmqd -> Java; the Java -> Java run is the oracle).
 * The driver (compat-tests/swap.sh) starts the first broker, runs SW-WRITE (and, for the crash case, SW-LOAD
 * while it kills the broker with SIGKILL), stops it, starts the second broker on the same directory with the same
 * broker.conf and runs SW-VERIFY (and SW-LOADVERIFY). What the first broker stored is kept in the state dir.
 */
final class Swap {

    static void register() {
        Main.def("SW-WRITE", "swap", 240, "swap: workload on the first broker, store contents saved", Swap::write);
        Main.def("SW-VERIFY", "swap", 240, "swap: second broker serves the same store", Swap::verify);
        Main.def("SW-LOAD", "swap", 240, "swap: sync sends until the broker is killed, acks saved", Swap::load);
        Main.def("SW-LOADVERIFY", "swap", 180, "swap: every acknowledged SW-LOAD message present", Swap::loadVerify);
        Main.def("SW-PING", "swap", 60, "swap: the broker still sends and serves (lock refusal check)", Swap::ping);
        Main.def("SW-LIVE", "swap", 600, "swap: producer + push consumer running across broker swaps", Swap::live);
    }

    // topics and groups of one swap case (runId is unique per case)
    static String topicA(Main.Ctx c) {
        return "SWA_" + c.runId;
    }

    static String topicB(Main.Ctx c) {
        return "SWB_" + c.runId;
    }

    static String topicC(Main.Ctx c) {
        return "SWC_" + c.runId;
    }

    static String topicD(Main.Ctx c) {
        return "SWD_" + c.runId;
    }

    /** Created and never written: on rmqd its consume-queue files exist, empty (created with the topic). */
    static String topicE(Main.Ctx c) {
        return "SWE_" + c.runId;
    }

    static String groupA(Main.Ctx c) {
        return "SWGA_" + c.runId;
    }

    static String groupC(Main.Ctx c) {
        return "SWGC_" + c.runId;
    }

    static Path state(Main.Ctx c, String what) {
        return Paths.get(c.stateDir, "SW_" + c.runId + "." + what);
    }

    static final int A_PRE = 400;
    static final int A_POST = 150;
    static final int B_N = 100;
    static final int C_BATCHES = 20;
    static final int C_BATCH = 16;
    static final int GROUP_RETRY_MAX = 7;

    static Message aMessage(String topic, int i, Random rnd) {
        Message m = new Message(topic, Main.bytes("swap body " + i));
        m.setTags(i % 2 == 0 ? "TagA" : "TagB");
        m.setKeys(Arrays.asList("swk" + i, "swcommon"));
        m.putUserProperty("seq", String.valueOf(i));
        m.putUserProperty("unicode", "h\u00e9llo \u4f60\u597d");
        if (i % 10 == 3) {
            byte[] b = new byte[20 * 1024];
            rnd.nextBytes(b);
            m.setBody(b);
        } else if (i % 7 == 5) {
            StringBuilder sb = new StringBuilder();
            while (sb.length() < 8 * 1024) {
                sb.append("compressible swap line ").append(i).append(' ');
            }
            m.setBody(Main.bytes(sb.toString())); // > 4 KiB: the client compresses it (sysflag bit 0)
        }
        if (i % 13 == 0) {
            m.setFlag(9);
        }
        return m;
    }

    // ------------------------------------------------------------------ SW-WRITE
    static String write(Main.Ctx c) throws Exception {
        String ta = topicA(c), tb = topicB(c), tc = topicC(c);
        c.createTopic(ta, 4);
        c.createTopic(tb, 2);
        c.createTopic(tc, 8);
        c.createTopic(topicE(c), 3);
        SubscriptionGroupConfig sg = new SubscriptionGroupConfig();
        sg.setGroupName(groupA(c));
        sg.setRetryMaxTimes(GROUP_RETRY_MAX);
        sg.setConsumeBroadcastEnable(false);
        c.admin().createAndUpdateSubscriptionGroupConfig(c.brokerAddr, sg);

        DefaultMQProducer p = c.producer("SWP_" + c.runId);
        Random rnd = new Random(7);
        List<String> pre = new ArrayList<>();
        for (int i = 0; i < A_PRE; i++) {
            pre.add(Main.sendOk(p, aMessage(ta, i, rnd)).getMsgId());
        }
        for (int i = 0; i < B_N; i++) {
            byte[] b = new byte[30 * 1024];
            rnd.nextBytes(b);
            Message m = new Message(tb, "big", "swb" + i, b); // 3 MiB in all: CommitLog rolls (1 MiB files)
            Main.sendOk(p, m);
        }
        for (int k = 0; k < C_BATCHES; k++) {
            List<Message> batch = new ArrayList<>();
            for (int j = 0; j < C_BATCH; j++) {
                Message m = new Message(tc, "batch", "swc" + k + "_" + j, Main.bytes("batch " + k + "/" + j));
                m.putUserProperty("k", String.valueOf(k));
                batch.add(m);
            }
            SendResult r = p.send(batch, new MessageQueue(tc, c.brokerName, k % 8));
            Main.check(r.getSendStatus() == SendStatus.SEND_OK, "batch send " + r.getSendStatus());
        }

        // two groups consume everything there is, and commit it
        Main.Collector colA = c.consumeAll(groupA(c), ta, "*");
        Main.Collector colC = c.consumeAll(groupC(c), tc, "*");
        colA.awaitIds(pre, 60_000, "group A before the swap");
        // the inner messages of one batch share the batch's UNIQ_KEY when read back (the broker appends the
        // batch's properties to each), so count deliveries here
        Main.check(Main.waitFor(() -> colC.total.get() >= C_BATCHES * C_BATCH, 60_000),
            "group C before the swap: " + colC.total.get() + " of " + C_BATCHES * C_BATCH + " delivered");
        awaitCommitted(c, colA.consumer, groupA(c), 30_000);
        awaitCommitted(c, colC.consumer, groupC(c), 30_000);
        colA.consumer.shutdown();
        colC.consumer.shutdown();

        // messages after the committed offsets: group A must get exactly these after the swap
        List<String> post = new ArrayList<>();
        for (int i = A_PRE; i < A_PRE + A_POST; i++) {
            post.add(Main.sendOk(p, aMessage(ta, i, rnd)).getMsgId());
        }
        Files.createDirectories(Paths.get(c.stateDir));
        Files.write(state(c, "pre"), pre);
        Files.write(state(c, "post"), post);
        Files.write(state(c, "offsets"), offsetLines(c, groupA(c), groupC(c)));
        Map<String, String> dump = new TreeMap<>();
        for (String[] t : new String[][] {{ta, "4"}, {tb, "2"}, {tc, "8"}}) {
            dump.putAll(readAll(c, t[0], Integer.parseInt(t[1])));
        }
        int expect = A_PRE + A_POST + B_N + C_BATCHES * C_BATCH;
        Main.check(dump.size() == expect, "first broker holds " + dump.size() + " messages, sent " + expect);
        List<String> lines = new ArrayList<>();
        dump.forEach((k, v) -> lines.add(k + "\t" + v));
        Files.write(state(c, "msgs"), lines);
        Files.write(state(c, "topics"), topicLines(c));
        String extra = "";
        if (Boolean.getBoolean("swap.pending")) {
            // still waiting when the store changes hands: a timer (setDeliverTimeMs) and a delay level 5 (1 min)
            String td = topicD(c);
            c.createTopic(td, 1);
            long due = System.currentTimeMillis() + 60_000;
            Message tm = new Message(td, "timer", "swtimer", Main.bytes("timer " + c.runId));
            tm.setDeliverTimeMs(due);
            String timerId = Main.sendOk(p, tm).getMsgId();
            Message dm = new Message(td, "delay", "swdelay", Main.bytes("delay " + c.runId));
            dm.setDelayTimeLevel(5);
            long sentAt = System.currentTimeMillis();
            String delayId = Main.sendOk(p, dm).getMsgId();
            Files.write(state(c, "pending"), Arrays.asList(timerId + "\t" + due, delayId + "\t" + (sentAt + 60_000)));
            // and three transactions: committed, rolled back, and one left open (UNKNOW) for the next broker
            TransactionMQProducer tp = txProducer(c, LocalTransactionState.UNKNOW, null);
            List<String> tx = new ArrayList<>();
            for (String act : new String[] {"commit", "rollback", "open"}) {
                Message m = new Message(td, "tx", "sw" + act, Main.bytes("tx " + act));
                m.putUserProperty("act", act);
                SendResult r = tp.sendMessageInTransaction(m, null);
                Main.check(r.getSendStatus() == SendStatus.SEND_OK, act + " half message: " + r.getSendStatus());
                tx.add(act + "\t" + r.getMsgId());
            }
            tp.shutdown();
            Files.write(state(c, "tx"), tx);
            extra = "; a timer, a delay-level (1 min) and an open transaction pending";
        }
        return expect + " messages in 3 topics, 2 groups committed, store contents saved" + extra;
    }

    /**
     * consumer offset == broker offset on every queue of the group (the client committed everything). Each round
     * asks the consumer to send its offsets now (what its own 5 s persist timer does), so this does not wait for
     * the timer.
     */
    static void awaitCommitted(Main.Ctx c, DefaultMQPushConsumer consumer, String group, long timeoutMs) throws Exception {
        long end = System.currentTimeMillis() + timeoutMs;
        String last = "";
        while (System.currentTimeMillis() < end) {
            consumer.getDefaultMQPushConsumerImpl().persistConsumerOffset();
            ConsumeStats cs = c.admin().examineConsumeStats(group);
            boolean done = !cs.getOffsetTable().isEmpty();
            for (Map.Entry<MessageQueue, OffsetWrapper> e : cs.getOffsetTable().entrySet()) {
                if (e.getValue().getConsumerOffset() != e.getValue().getBrokerOffset()) {
                    done = false;
                    last = e.getKey() + " " + e.getValue().getConsumerOffset() + "/" + e.getValue().getBrokerOffset();
                }
            }
            if (done) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("group " + group + " did not commit everything within " + timeoutMs + " ms: " + last);
    }

    static List<String> offsetLines(Main.Ctx c, String... groups) throws Exception {
        List<String> out = new ArrayList<>();
        for (String g : groups) {
            ConsumeStats cs = c.admin().examineConsumeStats(g);
            for (Map.Entry<MessageQueue, OffsetWrapper> e : new TreeMap<>(cs.getOffsetTable()).entrySet()) {
                out.add(g + "\t" + e.getKey().getTopic() + "\t" + e.getKey().getQueueId() + "\t" + e.getValue().getConsumerOffset());
            }
        }
        return out;
    }

    static List<String> topicLines(Main.Ctx c) throws Exception {
        Map<String, TopicConfig> all = c.admin().getAllTopicConfig(c.brokerAddr, 10_000).getTopicConfigTable();
        List<String> out = new ArrayList<>();
        for (String t : new String[] {topicA(c), topicB(c), topicC(c)}) {
            TopicConfig tcfg = all.get(t);
            Main.check(tcfg != null, "topic " + t + " missing from the broker's topic table");
            out.add(t + "\t" + tcfg.getReadQueueNums() + "\t" + tcfg.getWriteQueueNums() + "\t" + tcfg.getPerm()
                + "\t" + tcfg.isOrder() + "\t" + tcfg.getTopicSysFlag());
        }
        return out;
    }

    /** Every message of every queue, keyed "topic\tqueue\toffset(12 digits)", value = every stored field. */
    static Map<String, String> readAll(Main.Ctx c, String topic, int queues) throws Exception {
        DefaultMQPullConsumer pc = new DefaultMQPullConsumer("SWREAD_" + c.runId + "_" + System.nanoTime() % 100000);
        pc.setNamesrvAddr(c.ns);
        pc.setInstanceName("swread_" + System.nanoTime());
        pc.start();
        try {
            Map<String, String> out = new TreeMap<>();
            for (int q = 0; q < queues; q++) {
                MessageQueue mq = new MessageQueue(topic, c.brokerName, q);
                long max = c.admin().maxOffset(mq);
                long off = 0;
                int idle = 0;
                while (off < max) {
                    PullResult r = pc.pull(mq, "*", off, 32, 10_000);
                    if (r.getPullStatus() == PullStatus.FOUND) {
                        for (MessageExt m : r.getMsgFoundList()) {
                            out.put(String.format("%s\t%d\t%012d", topic, q, m.getQueueOffset()), fields(m));
                        }
                        off = r.getNextBeginOffset();
                        idle = 0;
                    } else {
                        Main.check(++idle < 20, "pull " + mq + " at " + off + " of " + max + ": " + r.getPullStatus());
                        Thread.sleep(300);
                    }
                }
            }
            return out;
        } finally {
            pc.shutdown();
        }
    }

    static String fields(MessageExt m) throws Exception {
        Map<String, String> props = new TreeMap<>(m.getProperties());
        props.remove(MessageConst.PROPERTY_MIN_OFFSET); // added by the client from the pull response
        props.remove(MessageConst.PROPERTY_MAX_OFFSET);
        String offsetMsgId = m instanceof MessageClientExt ? ((MessageClientExt) m).getOffsetMsgId() : m.getMsgId();
        return String.join("|", Main.uniq(m), offsetMsgId, String.valueOf(m.getStoreTimestamp()),
            String.valueOf(m.getBornTimestamp()), String.valueOf(m.getStoreSize()), String.valueOf(m.getSysFlag()),
            String.valueOf(m.getBodyCRC()), String.valueOf(m.getFlag()), String.valueOf(m.getReconsumeTimes()),
            String.valueOf(m.getCommitLogOffset()), String.valueOf(m.getPreparedTransactionOffset()),
            m.getBornHostString(), String.valueOf(m.getStoreHost()), sha(m.getBody()), props.toString());
    }

    static String sha(byte[] b) throws Exception {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(b == null ? new byte[0] : b);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            sb.append(String.format("%02x", d[i]));
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ SW-VERIFY
    static String verify(Main.Ctx c) throws Exception {
        String ta = topicA(c), tb = topicB(c), tc = topicC(c);
        Map<String, Integer> checks = new ConcurrentHashMap<>();
        if (Files.exists(state(c, "tx"))) {
            // online for the new broker's check-backs: a producer is known to a broker only from its heartbeats,
            // which go to the brokers of the topics it has used — so use the topic, then heartbeat at once
            TransactionMQProducer tp = txProducer(c, LocalTransactionState.UNKNOW, checks);
            c.waitRoute(topicD(c), 1, 30_000);
            Main.sendOk(tp, new Message(topicD(c), "warm", Main.bytes("route warm-up")));
            tp.getDefaultMQProducerImpl().getmQClientFactory().sendHeartbeatToAllBrokerWithLock();
        }
        // topics: loaded from topics.json and registered with the NameServer by the second broker
        c.waitRoute(ta, 4, 30_000);
        c.waitRoute(tb, 2, 30_000);
        c.waitRoute(tc, 8, 30_000);
        List<String> topics = topicLines(c);
        Main.check(topics.equals(Files.readAllLines(state(c, "topics"))), "topic configs differ: " + topics + " vs "
            + Files.readAllLines(state(c, "topics")));
        SubscriptionGroupConfig sg = c.admin().examineSubscriptionGroupConfig(c.brokerAddr, groupA(c));
        Main.check(sg != null && sg.getRetryMaxTimes() == GROUP_RETRY_MAX, "subscription group " + groupA(c)
            + " lost its retryMaxTimes: " + (sg == null ? "missing" : sg.getRetryMaxTimes()));

        // every message, every stored field
        Map<String, String> want = new TreeMap<>();
        for (String l : Files.readAllLines(state(c, "msgs"))) {
            int cut = l.indexOf('\t', l.indexOf('\t', l.indexOf('\t') + 1) + 1);
            want.put(l.substring(0, cut), l.substring(cut + 1));
        }
        Map<String, String> got = new TreeMap<>();
        got.putAll(readAll(c, ta, 4));
        got.putAll(readAll(c, tb, 2));
        got.putAll(readAll(c, tc, 8));
        List<String> diffs = new ArrayList<>();
        for (Map.Entry<String, String> e : want.entrySet()) {
            String g = got.get(e.getKey());
            if (!e.getValue().equals(g)) {
                diffs.add(e.getKey().replace('\t', '/') + " first=" + e.getValue() + " second=" + g);
            }
        }
        for (String k : got.keySet()) {
            if (!want.containsKey(k)) {
                diffs.add(k.replace('\t', '/') + " appeared");
            }
        }
        Main.check(diffs.isEmpty(), diffs.size() + " messages differ, e.g. " + Main.first(diffs, 2));

        // queries by key and by the old msgIds. After a SIGKILL the Java broker drops the index file written
        // since its last checkpointed index timestamp (IndexService.load), so there keys are reported, not asserted.
        boolean crashed = Files.exists(state(c, "acked"));
        List<String> pre = Files.readAllLines(state(c, "pre"));
        int keysFound = 0;
        for (int i : new int[] {0, 3, 5, 57, 399}) {
            String key = "swk" + i;
            Set<String> found = new TreeSet<>();
            try {
                QueryResult qr = c.admin().queryMessage(ta, key, 32, 0, Long.MAX_VALUE);
                for (MessageExt m : qr.getMessageList()) {
                    found.add(Main.uniq(m));
                }
            } catch (Exception e) {
                Main.check(crashed, "query key " + key + ": " + e);
            }
            boolean ok = found.equals(Collections.singleton(pre.get(i)));
            Main.check(ok || crashed, "query key " + key + " found " + found + " expected " + pre.get(i));
            keysFound += ok ? 1 : 0;
        }
        int viewed = 0;
        int viewedByUniq = 0;
        int n = 0;
        for (Map.Entry<String, String> e : want.entrySet()) {
            if (n++ % 37 != 0) {
                continue;
            }
            String[] f = e.getValue().split("\\|", -1);
            String topic = e.getKey().substring(0, e.getKey().indexOf('\t'));
            MessageExt byOffset = c.admin().viewMessage(topic, f[1]);
            Main.check(sha(byOffset.getBody()).equals(f[13]) && Main.uniq(byOffset).equals(f[0]),
                "view by old offset msgId " + f[1] + " returned another message");
            if (!topic.equals(tc)) { // batch members share one UNIQ_KEY (see write)
                try {
                    MessageExt byUniq = c.admin().viewMessage(topic, f[0]);
                    Main.check(sha(byUniq.getBody()).equals(f[13]), "view by unique key " + f[0] + " returned another message");
                    viewedByUniq++;
                } catch (Exception ex) {
                    Main.check(crashed, "view by unique key " + f[0] + ": " + ex);
                }
            }
            viewed++;
        }

        // consumers resume from the committed offsets
        List<String> offsets = offsetLines(c, groupA(c), groupC(c));
        Main.check(offsets.equals(Files.readAllLines(state(c, "offsets"))), "committed offsets differ: "
            + offsets + " vs " + Files.readAllLines(state(c, "offsets")));
        List<String> post = Files.readAllLines(state(c, "post"));
        Main.Collector col = c.consumeAll(groupA(c), ta, "*");
        col.awaitIds(post, 60_000, "group A after the swap");
        Thread.sleep(2000);
        Set<String> again = new TreeSet<>(col.byUniq.keySet());
        again.retainAll(pre);
        Main.check(again.isEmpty(), again.size() + " messages before the committed offset delivered again, e.g. "
            + Main.first(again, 3));

        // the queues go on where they were
        DefaultMQProducer p = c.producer("SWP2_" + c.runId);
        for (int q = 0; q < 4; q++) {
            long max = c.admin().maxOffset(new MessageQueue(ta, c.brokerName, q));
            SendResult r = p.send(new Message(ta, "after", "after" + q, Main.bytes("after swap " + q)),
                new MessageQueue(ta, c.brokerName, q));
            Main.check(r.getSendStatus() == SendStatus.SEND_OK && r.getQueueOffset() == max,
                "send after the swap: queue " + q + " offset " + r.getQueueOffset() + ", expected " + max);
        }
        // a topic that never had a message: empty queues that start at offset 0
        String te = topicE(c);
        c.waitRoute(te, 3, 30_000);
        for (int q = 0; q < 3; q++) {
            MessageQueue mq = new MessageQueue(te, c.brokerName, q);
            long min = c.admin().minOffset(mq), max = c.admin().maxOffset(mq);
            Main.check(min == 0 && max == 0, "empty topic " + te + " queue " + q + ": offsets " + min + ".." + max);
            SendResult r = p.send(new Message(te, "first", "first" + q, Main.bytes("first " + q)), mq);
            Main.check(r.getSendStatus() == SendStatus.SEND_OK && r.getQueueOffset() == 0,
                "first message of empty queue " + q + " got offset " + r.getQueueOffset());
        }
        // a send is acknowledged before its consume queue has it (dispatch follows, as Java's
        // reput does): readAll reads up to maxOffset, so wait until each queue shows its message
        for (int q = 0; q < 3; q++) {
            MessageQueue mq = new MessageQueue(te, c.brokerName, q);
            long until = System.currentTimeMillis() + 10_000;
            while (c.admin().maxOffset(mq) < 1 && System.currentTimeMillis() < until) {
                Thread.sleep(20);
            }
        }
        Map<String, String> firsts = readAll(c, te, 3);
        Main.check(firsts.size() == 3, "the empty topic's first messages: read back " + firsts.size() + " of 3");
        String pending = "";
        if (Files.exists(state(c, "pending"))) {
            pending = "; " + verifyPending(c, checks);
        }
        return want.size() + " messages identical in every field, topics + group config kept, " + keysFound + "/5 keys, "
            + viewed + " old offset msgIds, " + viewedByUniq + " unique keys found, group resumed at its offsets ("
            + post.size() + " new, 0 again), an empty topic took its first messages at offset 0" + pending;
    }

    /**
     * A transactional producer of the swap's group: "commit"/"rollback" decide at once; anything else answers
     * {@code local}; a check-back answers COMMIT for "open" when {@code checks} collects them, else UNKNOW.
     */
    static TransactionMQProducer txProducer(Main.Ctx c, LocalTransactionState local, Map<String, Integer> checks)
        throws Exception {
        TransactionMQProducer tp = new TransactionMQProducer("SWTP_" + c.runId);
        tp.setNamesrvAddr(c.ns);
        tp.setInstanceName("swtp_" + System.nanoTime());
        tp.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                switch (msg.getUserProperty("act")) {
                    case "commit":
                        return LocalTransactionState.COMMIT_MESSAGE;
                    case "rollback":
                        return LocalTransactionState.ROLLBACK_MESSAGE;
                    default:
                        return local;
                }
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                if (checks == null) {
                    return LocalTransactionState.UNKNOW;
                }
                String act = msg.getUserProperty("act");
                checks.merge(act, 1, Integer::sum);
                return "rollback".equals(act) ? LocalTransactionState.ROLLBACK_MESSAGE : LocalTransactionState.COMMIT_MESSAGE;
            }
        });
        tp.start();
        c.closers.add(tp::shutdown);
        return tp;
    }

    /**
     * What SW-WRITE left pending arrives on the second broker: the timer and delay-level messages not early, the
     * open transaction once the new broker checks it back (answered COMMIT), the rolled-back one never.
     */
    static String verifyPending(Main.Ctx c, Map<String, Integer> checks) throws Exception {
        Map<String, String> tx = new HashMap<>();
        for (String l : Files.readAllLines(state(c, "tx"))) {
            String[] f = l.split("\t");
            tx.put(f[0], f[1]);
        }
        Map<String, Long> due = new LinkedHashMap<>();
        for (String l : Files.readAllLines(state(c, "pending"))) {
            String[] f = l.split("\t");
            due.put(f[0], Long.parseLong(f[1]));
        }
        long latest = Collections.max(due.values());
        c.waitRoute(topicD(c), 1, 30_000);
        Main.Collector col = c.consumeAll("SWGD_" + c.runId, topicD(c), "*");
        col.awaitIds(due.keySet(), Math.max(0, latest - System.currentTimeMillis()) + 40_000, "pending timer/delay messages");
        col.awaitIds(Arrays.asList(tx.get("commit"), tx.get("open")), 60_000, "committed and checked-back transactions");
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : due.entrySet()) {
            MessageExt m = col.byUniq.get(e.getKey());
            long late = m.getStoreTimestamp() - e.getValue();
            Main.check(late >= -1000, m.getTags() + " message delivered " + (-late) + " ms early");
            out.add(m.getTags() + " +" + late + " ms");
        }
        Thread.sleep(3000);
        Main.check(!col.byUniq.containsKey(tx.get("rollback")), "the rolled-back transaction was delivered");
        Main.check(checks.containsKey("open"), "the open transaction was committed without a check-back: " + checks);
        return "pending timer and delay messages delivered (" + String.join(", ", out) + ", " + col.total.get()
            + " deliveries), open transaction checked back and committed (checks " + checks + "), rolled-back one never";
    }

    // ------------------------------------------------------------------ SW-LOAD / SW-LOADVERIFY
    static String topicL(Main.Ctx c) {
        return "SWL_" + c.runId;
    }

    /** Sync sends from 4 threads until the broker dies; each ack is written to the state dir at once. */
    static String load(Main.Ctx c) throws Exception {
        String topic = topicL(c);
        c.createTopic(topic, 4);
        Files.createDirectories(Paths.get(c.stateDir));
        DefaultMQProducer p = new DefaultMQProducer("SWLP_" + c.runId);
        p.setNamesrvAddr(c.ns);
        p.setInstanceName("swl_" + System.nanoTime());
        p.setSendMsgTimeout(3000);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        c.closers.add(p::shutdown);
        AtomicInteger acked = new AtomicInteger();
        AtomicLong lastAck = new AtomicLong(System.currentTimeMillis());
        AtomicInteger seq = new AtomicInteger();
        List<Thread> ts = new ArrayList<>();
        try (BufferedWriter w = Files.newBufferedWriter(state(c, "acked"), StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    long failingSince = 0;
                    while (true) {
                        int i = seq.getAndIncrement();
                        Message m = new Message(topic, "load", "swl" + i, Main.bytes("load " + i + " " + "y".repeat(i % 300)));
                        try {
                            SendResult r = p.send(m);
                            if (r.getSendStatus() == SendStatus.SEND_OK) {
                                synchronized (w) {
                                    w.write(r.getMsgId() + "\t" + r.getOffsetMsgId() + "\t" + r.getMessageQueue().getQueueId()
                                        + "\t" + r.getQueueOffset() + "\t" + i + "\n");
                                    w.flush();
                                }
                                acked.incrementAndGet();
                                lastAck.set(System.currentTimeMillis());
                                failingSince = 0;
                            }
                        } catch (Exception e) {
                            long now = System.currentTimeMillis();
                            if (failingSince == 0) {
                                failingSince = now;
                            } else if (now - failingSince > 4000) {
                                return; // the broker is gone
                            }
                            try {
                                Thread.sleep(100);
                            } catch (InterruptedException ie) {
                                return;
                            }
                        } catch (Throwable e) {
                            return;
                        }
                    }
                });
                th.setDaemon(true);
                th.start();
                ts.add(th);
            }
            for (Thread th : ts) {
                th.join();
            }
        }
        return acked.get() + " sends acknowledged before the broker went away";
    }

    static String loadVerify(Main.Ctx c) throws Exception {
        String topic = topicL(c);
        List<String> acked = Files.readAllLines(state(c, "acked"));
        Main.check(acked.size() > 100, "only " + acked.size() + " acks were recorded: the kill came too early");
        c.waitRoute(topic, 4, 30_000);
        Map<String, String> got = readAll(c, topic, 4);
        Map<String, String[]> byUniq = new HashMap<>();
        for (Map.Entry<String, String> e : got.entrySet()) {
            String[] k = e.getKey().split("\t");
            String[] f = e.getValue().split("\\|", -1);
            byUniq.put(f[0], new String[] {k[1], String.valueOf(Long.parseLong(k[2])), f[1]});
        }
        List<String> bad = new ArrayList<>();
        for (String l : acked) {
            String[] a = l.split("\t");
            String[] have = byUniq.get(a[0]);
            if (have == null) {
                bad.add(a[0] + " missing (queue " + a[2] + " offset " + a[3] + ")");
            } else if (!have[0].equals(a[2]) || !have[1].equals(a[3]) || !have[2].equals(a[1])) {
                bad.add(a[0] + " moved: acked q" + a[2] + "@" + a[3] + " " + a[1] + ", found q" + have[0] + "@" + have[1] + " " + have[2]);
            }
        }
        Main.check(bad.isEmpty(), bad.size() + " of " + acked.size() + " acknowledged messages lost or moved, e.g. "
            + Main.first(bad, 3));
        return "all " + acked.size() + " acknowledged messages present at their queue offsets (" + got.size()
            + " in the topic, " + (got.size() - acked.size()) + " stored but not acknowledged)";
    }

    // ------------------------------------------------------------------ SW-PING
    static String ping(Main.Ctx c) throws Exception {
        String topic = "SWPING_" + c.runId;
        c.createTopic(topic, 2);
        DefaultMQProducer p = c.producer("SWPINGP_" + c.runId);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(Main.sendOk(p, new Message(topic, "ping", "ping" + i, Main.bytes("ping " + i))).getMsgId());
        }
        Main.Collector col = c.consumeAll("SWPINGG_" + c.runId, topic, "*");
        col.awaitIds(ids, 30_000, "ping");
        return "20 sent and consumed";
    }

    // ------------------------------------------------------------------ SW-LIVE
    /**
     * A producer (sync, one message every 20 ms, retried) and a push consumer run while the driver swaps the
     * broker underneath; ends when the driver creates the file "SW_<run>.stop", then waits for every acked message.
     */
    static String live(Main.Ctx c) throws Exception {
        String topic = "SWV_" + c.runId;
        Path stop = state(c, "stop");
        DefaultMQProducer p = c.producer("SWVP_" + c.runId);
        p.setSendMsgTimeout(3000);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        Map<String, Integer> got = new ConcurrentHashMap<>();
        AtomicInteger deliveries = new AtomicInteger();
        DefaultMQPushConsumer cons = c.pushConsumer("SWVG_" + c.runId, null);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.merge(Main.uniq(m), 1, Integer::sum);
                deliveries.incrementAndGet();
            }
            return org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        cons.start();
        long lastOk = System.currentTimeMillis();
        long longestGap = 0;
        List<Long> gaps = new ArrayList<>();
        int failures = 0;
        int i = 0;
        // "<acked> <distinct consumed>", rewritten every 200 ms: the driver swaps the broker once both clients have
        // sent and consumed through the current one (SW_<run>.progress)
        Path progress = state(c, "progress");
        Path progressTmp = state(c, "progress.tmp");
        long lastProgress = 0;
        while (!Files.exists(stop)) {
            if (System.currentTimeMillis() - lastProgress >= 200) {
                Files.write(progressTmp, (acked.size() + " " + got.size() + "\n").getBytes(StandardCharsets.UTF_8));
                Files.move(progressTmp, progress, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                lastProgress = System.currentTimeMillis();
            }
            Message m = new Message(topic, "live", "live" + i, Main.bytes("live " + i));
            i++;
            try {
                SendResult r = p.send(m);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    acked.add(r.getMsgId());
                    long now = System.currentTimeMillis();
                    if (now - lastOk > 1000) {
                        gaps.add(now - lastOk);
                    }
                    longestGap = Math.max(longestGap, now - lastOk);
                    lastOk = now;
                }
            } catch (Exception e) {
                failures++;
            }
            Thread.sleep(20);
        }
        Main.check(acked.size() > 100, "only " + acked.size() + " sends acknowledged");
        long t0 = System.currentTimeMillis();
        Main.waitFor(() -> got.keySet().containsAll(acked), 90_000);
        Set<String> missing = new TreeSet<>(acked);
        missing.removeAll(got.keySet());
        Main.check(missing.isEmpty(), missing.size() + " of " + acked.size() + " acknowledged messages never consumed, e.g. "
            + Main.first(missing, 3));
        int dups = deliveries.get() - got.size();
        return acked.size() + " acked, all consumed (" + dups + " duplicate deliveries, " + failures
            + " failed sends); send outages (ms) " + gaps + "; drained in " + (System.currentTimeMillis() - t0) + " ms";
    }

    private Swap() {
    }
}
