package compat;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.admin.ConsumeStats;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * rmqd compatibility scenario runner: drives the REAL RocketMQ Java client against one broker.
 * One JVM runs many scenarios; each prints exactly one JSON line
 * {"id","client","status":"PASS|FAIL","ms","detail"} on stdout and has a hard timeout.
 *
 * Usage: compat.Main --ns 127.0.0.1:9876 --broker-addr 127.0.0.1:10911 --broker-name broker-a
 *        [--only J01,J02] [--run-id X] [--state-dir DIR] [--list]
 */
public final class Main {

    // ---------------------------------------------------------------- scenario table
    interface Body {
        String run(Ctx c) throws Exception;
    }

    static final class Scenario {
        final String id;
        final String suite;
        final int timeoutS;
        final Body body;
        final String title;

        Scenario(String id, String suite, int timeoutS, String title, Body body) {
            this.id = id;
            this.suite = suite;
            this.timeoutS = timeoutS;
            this.title = title;
            this.body = body;
        }
    }

    static final Map<String, Scenario> SCENARIOS = new LinkedHashMap<>();

    static void def(String id, String suite, int timeoutS, String title, Body body) {
        SCENARIOS.put(id, new Scenario(id, suite, timeoutS, title, body));
    }

    static {
        def("J01", "data", 90, "sync send (tags/keys/props/1KiB/200KiB/compressed), consume all, compare fields", Main::j01);
        def("J02", "data", 90, "async send 500 + oneway 200, each consumed exactly once", Main::j02);
        def("J03A", "data", 90, "J01 with sendSmartMsg=false (SEND_MESSAGE 10) [JVM variant]", Main::j03a);
        def("J03B", "data", 90, "J01 with ROCKETMQ binary header codec [JVM variant]", Main::j03b);
        def("J04", "data", 60, "batch send 32, consecutive offsets, own UNIQ_KEY each", Main::j04);
        def("J05", "data", 60, "auto-create topic from TBW102, route visible, consumable", Main::j05);
        def("J06", "data", 60, "tag filter A || B (C never delivered)", Main::j06);
        def("J06S", "data", 60, "SQL92 filter a > 5", Main::j06s);
        def("J07", "data", 60, "query by key (QUERY_MESSAGE 12)", Main::j07);
        def("J08", "data", 60, "view by offset msgId (33) and by unique key", Main::j08);
        def("J09", "data", 150, "push clustering 2 instances 4/4 split, rebalance to 8 within 25 s", Main::j09);
        def("J10", "data", 60, "broadcast: 2 consumers each receive all", Main::j10);
        def("J16", "data", 90, "lite pull: subscribe/poll/commit, assign/seekToBegin/seek/seekToEnd", Main::j16);
        def("J18", "data", 120, "consumer restart resumes from committed offsets; consume stats diff 0", Main::j18);
        def("J18R", "data", 120, "resetOffsetByTimestamp with consumer online re-delivers", Main::j18r);
        def("J19", "data", 60, "new group CONSUME_FROM_LAST_OFFSET on a young topic (QUERY_CONSUMER_OFFSET quirk)", Main::j19);
        def("R01-SEND", "restart", 120, "restart: 2000 acked sync sends (ids saved to state dir)", Main::r01send);
        def("R01-VERIFY", "restart", 120, "restart: every acked message consumable after broker restart", Main::r01verify);
        def("HOLD", "tool", 600, "mqadmin helper: topic MQA_<run>, producer MQAP_<run>, consumer MQAG_<run> online for --hold-seconds", Main::hold);
        def("OPSLOAD", "tool", 900, "ops helper: N sends to OPS_<run>, group OPSG_<run> consumes all, then a steady load while a file exists", Main::opsload);
        def("READY", "tool", 5, "no-op: passes when the broker is registered on the NameServer", c -> "registered");
        def("CAP", "tool", 120, "golden capture traffic: route, heartbeat, send v2, pull", Main::cap);
        def("NS01", "namesrv", 90, "send + consume through the NameServer under test, route sane", Main::ns01);
        // issue-7 suite: enable with COMPAT_SUITES=...,issue7
        def("J11", "issue7", 90, "orderly consumer keeps per-order sequence", Main::j11);
        def("J12", "issue7", 90, "retry: RECONSUME_LATER twice then OK => reconsumeTimes 0,1,2", Main::j12);
        def("J13", "issue7", 120, "DLQ after maxReconsumeTimes=2, content in %DLQ%group", Main::j13);
        def("J14", "issue7", 60, "delay level 3 (3 s) and delayTimeMs 3000", Main::j14);
        def("J15", "data", 90, "transactions commit/rollback/check-back", Main::j15);
        def("J21", "data", 90, "request/reply", Main::j21);
        def("J22", "data", 90, "timer message recalled by its send's handle (RECALL_MESSAGE 370) never comes; its twin does", Main::j22);
        Swap.register(); // issue 5: SW-* (driven by compat-tests/swap.sh)
        Pop.register(); // issue 22: POP-* (driven by compat-tests/suites/pop.sh)
        PopSwap.register(); // issue 22: POP-SW-* (driven by compat-tests/swap.sh)
        Lmq.register(); // LMQ-* (driven by compat-tests/suites/lmq.sh)
    }

    // ---------------------------------------------------------------- context
    static final class Ctx {
        final String ns;
        final String brokerAddr;
        final String brokerName;
        final String runId;
        final String stateDir;
        final String scenarioId;
        DefaultMQAdminExt admin;
        final List<Runnable> closers = new CopyOnWriteArrayList<>();

        Ctx(String ns, String brokerAddr, String brokerName, String runId, String stateDir, String scenarioId) {
            this.ns = ns;
            this.brokerAddr = brokerAddr;
            this.brokerName = brokerName;
            this.runId = runId;
            this.stateDir = stateDir;
            this.scenarioId = scenarioId;
        }

        String name(String suffix) {
            String base = scenarioId.replaceAll("[^A-Za-z0-9]", "") + "_" + runId;
            return suffix == null || suffix.isEmpty() ? base : base + "_" + suffix;
        }

        int brokerPort() {
            return Integer.parseInt(brokerAddr.substring(brokerAddr.lastIndexOf(':') + 1));
        }

        void closeAll() {
            List<Runnable> l = new ArrayList<>(closers);
            Collections.reverse(l);
            for (Runnable r : l) {
                try {
                    r.run();
                } catch (Throwable ignored) {
                }
            }
            closers.clear();
        }

        DefaultMQAdminExt admin() throws Exception {
            if (admin == null) {
                DefaultMQAdminExt a = new DefaultMQAdminExt(10000);
                a.setNamesrvAddr(ns);
                a.setInstanceName("admin_" + scenarioId + "_" + System.nanoTime());
                a.setAdminExtGroup("admin_" + name("g"));
                a.start();
                admin = a;
                closers.add(() -> a.shutdown());
            }
            return admin;
        }

        void createTopic(String topic, int queues) throws Exception {
            TopicConfig tc = new TopicConfig(topic, queues, queues);
            for (int attempt = 1; ; attempt++) { // a cold/restarted broker on a loaded box can miss one timeout
                try {
                    admin().createAndUpdateTopicConfig(brokerAddr, tc);
                    break;
                } catch (org.apache.rocketmq.remoting.exception.RemotingTimeoutException e) {
                    if (attempt >= 3) {
                        throw e;
                    }
                }
            }
            waitRoute(topic, queues, 20_000);
        }

        TopicRouteData waitRoute(String topic, int queues, long timeoutMs) throws Exception {
            long end = System.currentTimeMillis() + timeoutMs;
            Exception last = null;
            while (System.currentTimeMillis() < end) {
                try {
                    TopicRouteData r = admin().examineTopicRouteInfo(topic);
                    if (r != null && r.getQueueDatas() != null) {
                        for (QueueData qd : r.getQueueDatas()) {
                            if (qd.getBrokerName().equals(brokerName) && (queues <= 0 || qd.getWriteQueueNums() == queues)) {
                                return r;
                            }
                        }
                    }
                } catch (Exception e) {
                    last = e;
                }
                Thread.sleep(300);
            }
            throw new AssertionError("route of " + topic + " not visible on the NameServer within " + timeoutMs + " ms"
                + (last != null ? ": " + last : ""));
        }

        DefaultMQProducer producer(String group) throws Exception {
            DefaultMQProducer p = new DefaultMQProducer(group);
            p.setNamesrvAddr(ns);
            p.setInstanceName("p_" + group + "_" + System.nanoTime());
            // the same for both brokers: Java's 3 s default times out sends on a loaded 2-core box and
            // fails the scenario; no scenario measures send latency (sized from CI, not from rmqd)
            p.setSendMsgTimeout(10000);
            p.setRetryTimesWhenSendFailed(2);
            p.start();
            closers.add(p::shutdown);
            return p;
        }

        DefaultMQPushConsumer pushConsumer(String group, String instance) {
            // start() notes the scenario's first consumer start, for the "first delivery" time
            DefaultMQPushConsumer c = new DefaultMQPushConsumer(group) {
                @Override
                public void start() throws org.apache.rocketmq.client.exception.MQClientException {
                    FIRST_START.compareAndSet(0, System.currentTimeMillis());
                    super.start();
                }
            };
            c.setNamesrvAddr(ns);
            c.setInstanceName(instance != null ? instance : "c_" + group + "_" + System.nanoTime());
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.setConsumeThreadMin(4);
            c.setConsumeThreadMax(4);
            c.setPullBatchSize(32);
            c.setConsumeMessageBatchMaxSize(1);
            closers.add(c::shutdown);
            return c;
        }

        /** Push consumer collecting everything it receives (CONSUME_SUCCESS). */
        Collector consumeAll(String group, String topic, String expr) throws Exception {
            Collector col = new Collector();
            DefaultMQPushConsumer c = pushConsumer(group, null);
            c.subscribe(topic, expr);
            c.registerMessageListener(col.listener());
            c.start();
            col.consumer = c;
            return col;
        }
    }

    /** When the scenario's first push consumer started and when any collector first received a message after it. */
    static final java.util.concurrent.atomic.AtomicLong FIRST_START = new java.util.concurrent.atomic.AtomicLong();
    static final java.util.concurrent.atomic.AtomicLong FIRST_DELIVERY = new java.util.concurrent.atomic.AtomicLong();

    static final class Collector {
        final Map<String, MessageExt> byUniq = new ConcurrentHashMap<>();
        final List<MessageExt> all = new CopyOnWriteArrayList<>();
        final AtomicInteger total = new AtomicInteger();
        DefaultMQPushConsumer consumer;

        MessageListenerConcurrently listener() {
            return (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    add(m);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            };
        }

        void add(MessageExt m) {
            if (FIRST_START.get() != 0) {
                FIRST_DELIVERY.compareAndSet(0, System.currentTimeMillis());
            }
            String u = uniq(m);
            byUniq.putIfAbsent(u == null ? "null-" + total.get() : u, m);
            all.add(m);
            total.incrementAndGet();
        }

        void awaitDistinct(int n, long timeoutMs, String what) throws InterruptedException {
            if (!waitFor(() -> byUniq.size() >= n, timeoutMs)) {
                throw new AssertionError(what + ": received " + byUniq.size() + " distinct of " + n + " within " + timeoutMs + " ms");
            }
        }

        boolean containsAll(Collection<String> ids) {
            return byUniq.keySet().containsAll(ids);
        }

        void awaitIds(Collection<String> ids, long timeoutMs, String what) throws InterruptedException {
            if (!waitFor(() -> containsAll(ids), timeoutMs)) {
                Set<String> missing = new TreeSet<>(ids);
                missing.removeAll(byUniq.keySet());
                throw new AssertionError(what + ": " + missing.size() + " of " + ids.size() + " never consumed within "
                    + timeoutMs + " ms, e.g. " + first(missing, 3) + "; received " + total.get() + " deliveries, e.g. "
                    + first(byUniq.keySet(), 3));
            }
        }
    }

    // ---------------------------------------------------------------- helpers
    static String uniq(MessageExt m) {
        String u = MessageClientIDSetter.getUniqID(m);
        return u != null ? u : m.getMsgId();
    }

    static boolean waitFor(BooleanSupplier cond, long timeoutMs) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < end) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(100);
        }
        return cond.getAsBoolean();
    }

    static void check(boolean cond, String msg) {
        if (!cond) {
            throw new AssertionError(msg);
        }
    }

    static <T> String first(Collection<T> c, int n) {
        List<String> l = new ArrayList<>();
        for (T t : c) {
            if (l.size() >= n) {
                break;
            }
            l.add(String.valueOf(t));
        }
        return l.toString();
    }

    static SendResult sendOk(DefaultMQProducer p, Message m) throws Exception {
        SendResult r = p.send(m);
        check(r.getSendStatus() == SendStatus.SEND_OK, "send status " + r.getSendStatus());
        check(r.getMsgId() != null && r.getOffsetMsgId() != null, "send result without msgId/offsetMsgId: " + r);
        return r;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- J01 / J03
    static final class Sent {
        final Message msg;
        final SendResult result;

        Sent(Message msg, SendResult result) {
            this.msg = msg;
            this.result = result;
        }
    }

    static Message variant(String topic, int i, Random rnd) {
        Message m = new Message(topic, bytes("small body " + i));
        switch (i % 6) {
            case 0:
                m.setTags("TagA");
                m.setKeys(Arrays.asList("key" + i, "common"));
                m.putUserProperty("p1", "v" + i);
                m.putUserProperty("unicode", "h\u00e9llo w\u00f6rld \u4f60\u597d");
                break;
            case 1: {
                byte[] b = new byte[1024];
                rnd.nextBytes(b);
                m.setBody(b);
                m.setTags("TagB");
                m.setKeys("k1k" + i);
                break;
            }
            case 2: {
                byte[] b = new byte[200 * 1024];
                rnd.nextBytes(b);
                m.setBody(b);
                m.setKeys("big" + i);
                break;
            }
            case 3: {
                StringBuilder sb = new StringBuilder();
                while (sb.length() < 16 * 1024) {
                    sb.append("compressible-line-").append(i).append(' ');
                }
                m.setBody(bytes(sb.toString()));
                m.setTags("TagZ");
                m.putUserProperty("compress", "yes");
                break;
            }
            case 4:
                m.setBody(new byte[] {(byte) i});
                m.putUserProperty("a", "1");
                m.putUserProperty("b", "x y z");
                break;
            default:
                m.setTags("TagA");
                m.setFlag(7);
                break;
        }
        return m;
    }

    static String sendAndCompare(Ctx c, int n) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        Random rnd = new Random(42);
        Map<String, Sent> sent = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            Message m = variant(topic, i, rnd);
            SendResult r = sendOk(p, m);
            check(r.getMessageQueue().getTopic().equals(topic), "send result topic " + r.getMessageQueue());
            check(r.getMessageQueue().getBrokerName().equals(c.brokerName), "send result brokerName " + r.getMessageQueue());
            sent.put(r.getMsgId(), new Sent(m, r));
        }
        // Java client refuses an empty body before any byte reaches the broker (Validators.checkMessage).
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        col.awaitIds(sent.keySet(), 60_000, "consume");
        int compressed = 0;
        Map<Integer, TreeSet<Long>> offsets = new TreeMap<>();
        for (Map.Entry<String, Sent> e : sent.entrySet()) {
            MessageExt got = col.byUniq.get(e.getKey());
            Message m = e.getValue().msg;
            SendResult r = e.getValue().result;
            String id = e.getKey();
            check(got.getTopic().equals(topic), id + " topic " + got.getTopic());
            check(Arrays.equals(got.getBody(), m.getBody()), id + " body differs (len " + got.getBody().length + " vs " + m.getBody().length + ")");
            check(eq(got.getTags(), m.getTags()), id + " tags " + got.getTags() + " vs " + m.getTags());
            check(eq(got.getKeys(), m.getKeys()), id + " keys " + got.getKeys() + " vs " + m.getKeys());
            check(got.getFlag() == m.getFlag(), id + " flag " + got.getFlag() + " vs " + m.getFlag());
            for (Map.Entry<String, String> pe : m.getProperties().entrySet()) {
                check(eq(got.getProperty(pe.getKey()), pe.getValue()),
                    id + " property " + pe.getKey() + "=" + got.getProperty(pe.getKey()) + " vs " + pe.getValue());
            }
            check(got.getQueueId() == r.getMessageQueue().getQueueId(), id + " queueId " + got.getQueueId() + " vs " + r.getMessageQueue().getQueueId());
            check(got.getQueueOffset() == r.getQueueOffset(), id + " queueOffset " + got.getQueueOffset() + " vs " + r.getQueueOffset());
            check(r.getOffsetMsgId().equalsIgnoreCase(((org.apache.rocketmq.common.message.MessageClientExt) got).getOffsetMsgId()),
                id + " offsetMsgId " + ((org.apache.rocketmq.common.message.MessageClientExt) got).getOffsetMsgId() + " vs " + r.getOffsetMsgId());
            check(got.getReconsumeTimes() == 0, id + " reconsumeTimes " + got.getReconsumeTimes());
            InetSocketAddress born = (InetSocketAddress) got.getBornHost();
            check(born.getAddress().isLoopbackAddress(), id + " bornHost " + born);
            InetSocketAddress store = (InetSocketAddress) got.getStoreHost();
            check(store.getPort() == c.brokerPort(), id + " storeHost " + store + " (expected port " + c.brokerPort() + ")");
            check(got.getStoreTimestamp() >= got.getBornTimestamp() - 5000, id + " storeTimestamp < bornTimestamp");
            check(got.getBodyCRC() != 0 || got.getBody().length == 0, id + " bodyCRC 0");
            if (m.getBody().length >= 16 * 1024 && got.getStoreSize() < m.getBody().length / 2) {
                compressed++;
            }
            offsets.computeIfAbsent(got.getQueueId(), k -> new TreeSet<>()).add(got.getQueueOffset());
        }
        for (Map.Entry<Integer, TreeSet<Long>> e : offsets.entrySet()) {
            TreeSet<Long> s = e.getValue();
            check(s.first() == 0 && s.last() == s.size() - 1, "queue " + e.getKey() + " offsets not dense from 0: " + s);
        }
        // the 16 KiB text bodies are zlib-compressed by the client: the stored record must be smaller than the body
        check(compressed >= 1, "no 16 KiB text message was stored compressed (storeSize < body length)");
        return n + " msgs over " + offsets.size() + " queues, " + compressed + " compressed, all fields equal";
    }

    static boolean eq(Object a, Object b) {
        return a == null ? b == null : a.equals(b);
    }

    static String j01(Ctx c) throws Exception {
        return sendAndCompare(c, 50);
    }

    static String j03a(Ctx c) throws Exception {
        check("false".equals(System.getProperty("org.apache.rocketmq.client.sendSmartMsg")),
            "must run in a JVM with -Dorg.apache.rocketmq.client.sendSmartMsg=false");
        return "SEND_MESSAGE(10): " + sendAndCompare(c, 30);
    }

    static String j03b(Ctx c) throws Exception {
        check("ROCKETMQ".equals(System.getProperty("rocketmq.serialize.type")),
            "must run in a JVM with -Drocketmq.serialize.type=ROCKETMQ");
        return "ROCKETMQ codec: " + sendAndCompare(c, 30);
    }

    // ---------------------------------------------------------------- J02
    static String j02(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        int nAsync = 500;
        int nOneway = 200;
        CountDownLatch latch = new CountDownLatch(nAsync);
        AtomicInteger failed = new AtomicInteger();
        List<String> errors = new CopyOnWriteArrayList<>();
        java.util.concurrent.Semaphore inflight = new java.util.concurrent.Semaphore(32);
        for (int i = 0; i < nAsync; i++) {
            Message m = new Message(topic, "async", bytes("async " + i));
            m.putUserProperty("seq", "a" + i);
            inflight.acquire();
            p.send(m, new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    inflight.release();
                    if (r.getSendStatus() != SendStatus.SEND_OK) {
                        failed.incrementAndGet();
                    }
                    latch.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    inflight.release();
                    failed.incrementAndGet();
                    if (errors.size() < 3) {
                        errors.add(e.toString());
                    }
                    latch.countDown();
                }
            });
        }
        check(latch.await(60, TimeUnit.SECONDS), "async callbacks: " + latch.getCount() + " never called");
        check(failed.get() == 0, failed.get() + " async sends failed " + errors);
        for (int i = 0; i < nOneway; i++) {
            Message m = new Message(topic, "oneway", bytes("oneway " + i));
            m.putUserProperty("seq", "o" + i);
            p.sendOneway(m);
        }
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        Set<String> seqs = ConcurrentHashMap.newKeySet();
        check(waitFor(() -> {
            seqs.clear();
            for (MessageExt m : col.all) {
                seqs.add(m.getUserProperty("seq"));
            }
            return seqs.size() >= nAsync + nOneway;
        }, 60_000), "consumed " + seqs.size() + " distinct of " + (nAsync + nOneway));
        Thread.sleep(1500);
        check(col.total.get() == nAsync + nOneway, "consumed " + col.total.get() + " deliveries for " + (nAsync + nOneway) + " messages (duplicates)");
        return nAsync + " async + " + nOneway + " oneway, each consumed exactly once";
    }

    // ---------------------------------------------------------------- J04
    static String j04(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            Message m = new Message(topic, "batch", "bk" + i, bytes("batch body " + i));
            m.putUserProperty("i", String.valueOf(i));
            batch.add(m);
        }
        SendResult r = p.send(batch);
        check(r.getSendStatus() == SendStatus.SEND_OK, "batch send status " + r.getSendStatus());
        List<String> ids = Arrays.asList(r.getMsgId().split(","));
        check(ids.size() == 32 && new HashSet<>(ids).size() == 32, "batch result msgIds: " + ids.size() + " distinct " + new HashSet<>(ids).size());
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        Map<Integer, MessageExt> byI = new ConcurrentHashMap<>();
        check(waitFor(() -> {
            for (MessageExt m : col.all) {
                byI.putIfAbsent(Integer.parseInt(m.getUserProperty("i")), m);
            }
            return byI.size() >= 32;
        }, 40_000), "consumed " + byI.size() + " of 32 batch messages");
        int q = r.getMessageQueue().getQueueId();
        Set<String> uniqs = new TreeSet<>();
        for (int i = 0; i < 32; i++) {
            MessageExt got = byI.get(i);
            check(got.getQueueId() == q, "msg " + i + " queue " + got.getQueueId() + " vs " + q);
            check(got.getQueueOffset() == r.getQueueOffset() + i, "msg " + i + " offset " + got.getQueueOffset() + " expected " + (r.getQueueOffset() + i));
            check(("bk" + i).equals(got.getKeys()), "msg " + i + " keys " + got.getKeys());
            check(Arrays.equals(bytes("batch body " + i), got.getBody()), "msg " + i + " body");
            uniqs.add(uniq(got));
        }
        // Java oracle quirk (store MessageExtEncoder.encodeBatch): the batch-level properties (with the batch's own
        // UNIQ_KEY) are appended to every inner message's properties, so the decoded UNIQ_KEY of every message is
        // the batch's id, not the per-message id the producer reported in SendResult.msgId.
        check(uniqs.size() == 1 && !ids.contains(uniqs.iterator().next()),
            "decoded UNIQ_KEYs " + (uniqs.size() > 3 ? uniqs.size() + " distinct" : uniqs) + " (Java: one shared batch-level id appended to each message's properties)");
        return "32 msgs in queue " + q + " offsets " + r.getQueueOffset() + ".." + (r.getQueueOffset() + 31);
    }

    // ---------------------------------------------------------------- J05
    static String j05(Ctx c) throws Exception {
        String topic = c.name("auto");
        try {
            TopicRouteData r = c.admin().examineTopicRouteInfo(topic);
            check(r == null || r.getQueueDatas() == null || r.getQueueDatas().isEmpty(), "topic exists before the test");
        } catch (Exception expected) {
            // TOPIC_NOT_EXIST: good
        }
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(sendOk(p, new Message(topic, "auto", bytes("auto " + i))).getMsgId());
        }
        TopicRouteData route = c.waitRoute(topic, 0, 30_000);
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        col.awaitIds(ids, 60_000, "consume auto-created topic");
        int qn = 0;
        for (QueueData qd : route.getQueueDatas()) {
            qn += qd.getWriteQueueNums();
        }
        return "auto-created with " + qn + " write queues; 5 consumed";
    }

    // ---------------------------------------------------------------- J06
    static String j06(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        Set<String> want = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String tag = i % 3 == 0 ? "A" : i % 3 == 1 ? "B" : "C";
            SendResult r = sendOk(p, new Message(topic, tag, bytes(tag + i)));
            if (!tag.equals("C")) {
                want.add(r.getMsgId());
            }
        }
        Collector col = c.consumeAll(c.name("cg"), topic, "A || B");
        col.awaitIds(want, 60_000, "consume A||B");
        Thread.sleep(2500);
        for (MessageExt m : col.all) {
            check(!"C".equals(m.getTags()), "tag C delivered: " + uniq(m));
        }
        check(col.byUniq.size() == want.size(), "received " + col.byUniq.size() + " expected " + want.size());
        return "20 of 30 (A,B) delivered, C filtered";
    }

    static String j06s(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        Collector col = new Collector();
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.subscribe(topic, MessageSelector.bySql("a > 5"));
        cons.registerMessageListener(col.listener());
        cons.start();
        DefaultMQProducer p = c.producer(c.name("pg"));
        Set<String> want = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            Message m = new Message(topic, "s", bytes("sql " + i));
            m.putUserProperty("a", String.valueOf(i));
            SendResult r = sendOk(p, m);
            if (i > 5) {
                want.add(r.getMsgId());
            }
        }
        col.awaitIds(want, 60_000, "consume a > 5");
        Thread.sleep(2500);
        Set<String> as = new TreeSet<>();
        for (MessageExt m : col.all) {
            as.add(m.getUserProperty("a"));
        }
        check(as.equals(new TreeSet<>(Arrays.asList("6", "7", "8", "9"))), "delivered a values " + as);
        return "SQL92 a > 5 delivered " + as;
    }

    // ---------------------------------------------------------------- J07 / J08
    static String j07(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        String key = c.name("KEY");
        Set<String> ids = new TreeSet<>();
        for (int i = 0; i < 5; i++) {
            ids.add(sendOk(p, new Message(topic, "q", key + " other" + i, bytes("q" + i))).getMsgId());
        }
        sendOk(p, new Message(topic, "q", "unrelated", bytes("x")));
        Set<String> found = new TreeSet<>();
        long end = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < end) {
            found.clear();
            QueryResult qr = c.admin().queryMessage(topic, key, 32, 0, Long.MAX_VALUE);
            for (MessageExt m : qr.getMessageList()) {
                found.add(uniq(m));
            }
            if (found.containsAll(ids)) {
                break;
            }
            Thread.sleep(500);
        }
        check(found.equals(ids), "queryMessage(key) found " + found.size() + " " + found + " expected " + ids);
        QueryResult one = c.admin().queryMessage(topic, "other3", 32, 0, Long.MAX_VALUE);
        check(one.getMessageList().size() == 1, "second key of a message: found " + one.getMessageList().size());
        return "5 messages found by key, second key works";
    }

    static String j08(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<SendResult> rs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message m = new Message(topic, "v", "vk" + i, bytes("view body " + i));
            m.putUserProperty("vp", "x" + i);
            rs.add(sendOk(p, m));
        }
        Thread.sleep(1000);
        for (int i = 0; i < rs.size(); i++) {
            SendResult r = rs.get(i);
            MessageExt byOffset = c.admin().viewMessage(topic, r.getOffsetMsgId());
            check(Arrays.equals(byOffset.getBody(), bytes("view body " + i)), "view by offsetMsgId body");
            check(r.getMsgId().equals(uniq(byOffset)), "view by offsetMsgId uniq " + uniq(byOffset));
            check(("x" + i).equals(byOffset.getUserProperty("vp")), "view by offsetMsgId property");
            check(byOffset.getQueueOffset() == r.getQueueOffset(), "view by offsetMsgId queueOffset");
            MessageExt byUniq = null;
            long end = System.currentTimeMillis() + 15_000;
            while (byUniq == null && System.currentTimeMillis() < end) {
                try {
                    byUniq = c.admin().viewMessage(topic, r.getMsgId());
                } catch (Exception e) {
                    Thread.sleep(500);
                }
            }
            check(byUniq != null, "view by unique key " + r.getMsgId() + " not found");
            check(Arrays.equals(byUniq.getBody(), bytes("view body " + i)), "view by uniq body");
            check(("vk" + i).equals(byUniq.getKeys()), "view by uniq keys " + byUniq.getKeys());
        }
        return "3 messages viewed by offsetMsgId and unique key";
    }

    // ---------------------------------------------------------------- J09 / J10
    /** queues of {@code topic} (not of the group's %RETRY% topic) currently owned by the consumer. */
    static int owned(DefaultMQPushConsumer c, String topic) {
        int n = 0;
        for (Map.Entry<MessageQueue, ProcessQueue> e : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().entrySet()) {
            if (!e.getValue().isDropped() && e.getKey().getTopic().equals(topic)) {
                n++;
            }
        }
        return n;
    }

    static String j09(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 8);
        String group = c.name("cg");
        Collector col = new Collector();
        DefaultMQPushConsumer c1 = c.pushConsumer(group, "c1_" + c.runId);
        DefaultMQPushConsumer c2 = c.pushConsumer(group, "c2_" + c.runId);
        for (DefaultMQPushConsumer x : Arrays.asList(c1, c2)) {
            x.subscribe(topic, "*");
            x.registerMessageListener(col.listener());
        }
        c1.start();
        c2.start();
        check(waitFor(() -> owned(c1, topic) == 4 && owned(c2, topic) == 4, 25_000), "split not 4/4 within 25 s: c1=" + owned(c1, topic) + " c2=" + owned(c2, topic));
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            ids.add(sendOk(p, new Message(topic, bytes("m" + i))).getMsgId());
        }
        col.awaitIds(ids, 35_000, "consume with 2 instances"); // Java's bound, see J19
        long t0 = System.currentTimeMillis();
        c2.shutdown();
        check(waitFor(() -> owned(c1, topic) == 8, 25_000), "after c2 stopped c1 owns " + owned(c1, topic) + " queues (expected 8 within 25 s)");
        long took = System.currentTimeMillis() - t0;
        List<String> ids2 = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            ids2.add(sendOk(p, new Message(topic, bytes("n" + i))).getMsgId());
        }
        col.awaitIds(ids2, 30_000, "consume after rebalance");
        return "4/4 split, 100 consumed, c1 took all 8 queues " + took + " ms after c2 stopped";
    }

    static String j10(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        String group = c.name("cg");
        Collector a = new Collector();
        Collector b = new Collector();
        for (Object[] x : new Object[][] {{"b1_" + c.runId, a}, {"b2_" + c.runId, b}}) {
            DefaultMQPushConsumer cons = c.pushConsumer(group, (String) x[0]);
            cons.setMessageModel(MessageModel.BROADCASTING);
            cons.subscribe(topic, "*");
            cons.registerMessageListener(((Collector) x[1]).listener());
            cons.start();
        }
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ids.add(sendOk(p, new Message(topic, bytes("b" + i))).getMsgId());
        }
        a.awaitIds(ids, 40_000, "broadcast consumer 1");
        b.awaitIds(ids, 40_000, "broadcast consumer 2");
        return "both broadcast consumers received all 30";
    }

    // ---------------------------------------------------------------- J16 lite pull
    interface Seek {
        void run() throws Exception;
    }

    /**
     * A seek of the Java client 5.3.3 lite pull consumer interrupts the thread that last ran the queue's pull task,
     * which may be pulling another queue by then; an interrupt landing in NettyRemotingAbstract.invoke0 makes the
     * client close its own channel, and the seek's GET_MIN/MAX_OFFSET on that channel fails with
     * RemotingSendRequestException (apache/rocketmq#3853; ~0.7 % of runs on the Java broker and rmqd alike). The next
     * call reconnects, as an application retrying would.
     */
    static void seekRetrying(Seek seek) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                seek.run();
                return;
            } catch (Exception e) {
                boolean clientClosedItsChannel = false;
                for (Throwable t = e; t != null && !clientClosedItsChannel; t = t.getCause() == t ? null : t.getCause()) {
                    clientClosedItsChannel = t instanceof org.apache.rocketmq.remoting.exception.RemotingSendRequestException;
                }
                if (!clientClosedItsChannel || attempt >= 3) {
                    throw e;
                }
            }
        }
    }

    static String j16(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        Set<String> ids = new HashSet<>();
        Map<Integer, Integer> perQueue = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            SendResult r = sendOk(p, new Message(topic, bytes("lite " + i)));
            ids.add(r.getMsgId());
            perQueue.merge(r.getMessageQueue().getQueueId(), 1, Integer::sum);
        }
        // A: subscribe mode, manual commit with persist
        String g1 = c.name("lg1");
        DefaultLitePullConsumer l1 = new DefaultLitePullConsumer(g1);
        l1.setNamesrvAddr(c.ns);
        l1.setInstanceName("l1_" + c.runId);
        l1.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        l1.setAutoCommit(false);
        l1.subscribe(topic, "*");
        l1.start();
        c.closers.add(l1::shutdown);
        Set<String> got = new HashSet<>();
        long end = System.currentTimeMillis() + 40_000;
        while (got.size() < 40 && System.currentTimeMillis() < end) {
            for (MessageExt m : l1.poll(1000)) {
                got.add(uniq(m));
            }
        }
        check(got.equals(ids), "subscribe/poll got " + got.size() + " of 40");
        Set<MessageQueue> assigned = l1.assignment();
        l1.commit(assigned, true);
        long committed = 0;
        for (MessageQueue mq : assigned) {
            committed += l1.committed(mq);
        }
        check(committed == 40, "committed offsets sum " + committed + " expected 40");
        ConsumeStats[] cs = new ConsumeStats[1];
        check(waitFor(() -> {
            try {
                cs[0] = c.admin().examineConsumeStats(g1);
                return cs[0].computeTotalDiff() == 0 && cs[0].getOffsetTable().size() == 4;
            } catch (Exception e) {
                return false;
            }
        }, 15_000), "broker-side consume stats for lite group: " + (cs[0] == null ? "none" : "diff " + cs[0].computeTotalDiff()));
        l1.shutdown();
        // B: assign mode with seekToBegin / seek / seekToEnd
        DefaultLitePullConsumer l2 = new DefaultLitePullConsumer(c.name("lg2"));
        l2.setNamesrvAddr(c.ns);
        l2.setInstanceName("l2_" + c.runId);
        l2.setAutoCommit(false);
        l2.start();
        c.closers.add(l2::shutdown);
        List<MessageQueue> mqs = new ArrayList<>(l2.fetchMessageQueues(topic));
        check(mqs.size() == 4, "fetchMessageQueues " + mqs.size());
        l2.assign(mqs);
        for (MessageQueue mq : mqs) {
            seekRetrying(() -> l2.seekToBegin(mq));
        }
        Set<String> got2 = new HashSet<>();
        end = System.currentTimeMillis() + 40_000;
        while (got2.size() < 40 && System.currentTimeMillis() < end) {
            for (MessageExt m : l2.poll(1000)) {
                got2.add(uniq(m));
            }
        }
        check(got2.equals(ids), "assign+seekToBegin got " + got2.size() + " of 40");
        MessageQueue target = null;
        for (MessageQueue mq : mqs) {
            if (perQueue.getOrDefault(mq.getQueueId(), 0) >= 3) {
                target = mq;
            }
        }
        check(target != null, "no queue with >= 3 messages");
        MessageQueue seekTarget = target;
        seekRetrying(() -> l2.seek(seekTarget, 1));
        List<Long> offs = new ArrayList<>();
        end = System.currentTimeMillis() + 20_000;
        int expect = perQueue.get(target.getQueueId()) - 1;
        while (offs.size() < expect && System.currentTimeMillis() < end) {
            for (MessageExt m : l2.poll(1000)) {
                if (m.getQueueId() == target.getQueueId()) {
                    offs.add(m.getQueueOffset());
                }
            }
        }
        check(!offs.isEmpty() && offs.get(0) == 1 && offs.size() == expect, "after seek(q" + target.getQueueId() + ",1) got offsets " + offs);
        for (MessageQueue mq : mqs) {
            seekRetrying(() -> l2.seekToEnd(mq));
        }
        List<MessageExt> after = l2.poll(1500);
        check(after.isEmpty(), "after seekToEnd poll returned " + after.size());
        return "subscribe+commit(persist) ok (diff 0), assign+seekToBegin/seek/seekToEnd ok";
    }

    // ---------------------------------------------------------------- J18 / J19
    static String j18(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        String group = c.name("cg");
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> a = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            a.add(sendOk(p, new Message(topic, bytes("first " + i))).getMsgId());
        }
        Collector c1 = c.consumeAll(group, topic, "*");
        c1.awaitIds(a, 40_000, "first consumer");
        Thread.sleep(1000);
        c1.consumer.shutdown(); // persists offsets (UPDATE_CONSUMER_OFFSET) and unregisters
        List<String> b = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            b.add(sendOk(p, new Message(topic, bytes("second " + i))).getMsgId());
        }
        Collector c2 = c.consumeAll(group, topic, "*");
        c2.awaitIds(b, 40_000, "restarted consumer");
        Thread.sleep(2000);
        int dups = 0;
        for (String id : a) {
            if (c2.byUniq.containsKey(id)) {
                dups++;
            }
        }
        check(dups == 0, "restarted consumer re-received " + dups + " already-consumed messages");
        ConsumeStats[] cs = new ConsumeStats[1];
        check(waitFor(() -> {
            try {
                cs[0] = c.admin().examineConsumeStats(group);
                return cs[0].computeTotalDiff() == 0;
            } catch (Exception e) {
                return false;
            }
        }, 20_000), "consume stats diff " + (cs[0] == null ? "n/a" : cs[0].computeTotalDiff()));
        return "resumed: 50 new consumed, 0 re-delivered, diff 0";
    }

    static String j18r(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        String group = c.name("cg");
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> a = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            a.add(sendOk(p, new Message(topic, bytes("old " + i))).getMsgId());
        }
        Collector col = c.consumeAll(group, topic, "*");
        col.awaitIds(a, 40_000, "consume old");
        Thread.sleep(1500);
        long ts = System.currentTimeMillis();
        Thread.sleep(1500);
        List<String> b = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            b.add(sendOk(p, new Message(topic, bytes("new " + i))).getMsgId());
        }
        col.awaitIds(b, 40_000, "consume new");
        Thread.sleep(6000); // one offset persist round of the consumer (persistConsumerOffsetInterval, 5 s) + 1 s
        int before = col.total.get();
        Map<MessageQueue, Long> res = c.admin().resetOffsetByTimestamp(topic, group, ts, true);
        check(res != null && !res.isEmpty(), "resetOffsetByTimestamp returned " + res);
        check(waitFor(() -> {
            int again = 0;
            for (MessageExt m : col.all.subList(before, col.all.size())) {
                if (b.contains(uniq(m))) {
                    again++;
                }
            }
            return again >= b.size();
        }, 40_000), "after reset to t the " + b.size() + " later messages were not re-delivered; deliveries since reset: "
            + (col.total.get() - before));
        int oldAgain = 0;
        for (MessageExt m : col.all.subList(before, col.all.size())) {
            if (a.contains(uniq(m))) {
                oldAgain++;
            }
        }
        check(oldAgain == 0, oldAgain + " messages older than t re-delivered");
        return "reset to t re-delivered the 20 later messages, none older; reset map " + res.size() + " queues";
    }

    static String j19(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ids.add(sendOk(p, new Message(topic, bytes("young " + i))).getMsgId());
        }
        Collector col = new Collector();
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        cons.subscribe(topic, "*");
        cons.registerMessageListener(col.listener());
        cons.start();
        // up to 35 s, the Java oracle's bound: a Java client whose rebalance heartbeat is dropped (its heartbeat lock
        // was busy) pulls with a subscription version the broker has not seen; the Java broker answers
        // SUBSCRIPTION_NOT_LATEST until the next periodic heartbeat (30 s, apache/rocketmq#3434; seen on the oracle
        // in J09: 32 s). rmqd serves such pulls for a `*` subscription, so on rmqd this takes about 3 s (the
        // first-delivery table shows it).
        waitFor(() -> col.byUniq.size() >= 10, 35_000);
        Thread.sleep(1000);
        // Java oracle: QUERY_CONSUMER_OFFSET answers 0 when the queue's min offset is 0 and still in memory,
        // so a brand-new CONSUME_FROM_LAST_OFFSET group on a young topic reads everything.
        check(col.byUniq.size() == 10, "new LAST_OFFSET group received " + col.byUniq.size() + " of the 10 existing messages (oracle: 10)");
        return "new CONSUME_FROM_LAST_OFFSET group read all 10 existing messages (QUERY_CONSUMER_OFFSET quirk)";
    }

    // ---------------------------------------------------------------- R01 (driver restarts the broker in between)
    static Path r01File(Ctx c) {
        return Paths.get(c.stateDir, "R01_" + c.runId + ".ids");
    }

    static String r01send(Ctx c) throws Exception {
        String topic = "R01_" + c.runId;
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer("R01pg_" + c.runId);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            Message m = new Message(topic, "r", "rk" + i, bytes("restart " + i + " " + "x".repeat(i % 200)));
            ids.add(sendOk(p, m).getMsgId());
        }
        // a timer message still waiting when the broker restarts (5.x setDeliverTimeMs)
        long due = System.currentTimeMillis() + 40_000;
        Message timer = new Message(topic, "timer", "r01timer", bytes("timer " + c.runId));
        timer.setDeliverTimeMs(due);
        String timerId = sendOk(p, timer).getMsgId();
        Files.createDirectories(Paths.get(c.stateDir));
        Files.write(r01File(c), ids);
        Files.write(Paths.get(c.stateDir, "R01_" + c.runId + ".timer"), Arrays.asList(timerId, String.valueOf(due)));
        return "2000 acked + a timer message due in 40 s, ids saved to " + r01File(c);
    }

    static String r01verify(Ctx c) throws Exception {
        List<String> ids = Files.readAllLines(r01File(c));
        check(ids.size() == 2000, "state file has " + ids.size() + " ids");
        String topic = "R01_" + c.runId;
        c.waitRoute(topic, 4, 30_000);
        Collector col = c.consumeAll("R01cg_" + c.runId + "_" + System.currentTimeMillis() % 100000, topic, "*");
        col.awaitIds(ids, 90_000, "after restart");
        List<String> timer = Files.readAllLines(Paths.get(c.stateDir, "R01_" + c.runId + ".timer"));
        String timerId = timer.get(0);
        long due = Long.parseLong(timer.get(1));
        long wait = Math.max(0, due - System.currentTimeMillis()) + 30_000;
        col.awaitIds(Collections.singleton(timerId), wait, "timer message after restart");
        MessageExt t = col.byUniq.get(timerId);
        // stored in its topic no earlier than the timer precision (1 s) before its time
        check(t.getStoreTimestamp() >= due - 1000, "timer message delivered " + (due - t.getStoreTimestamp()) + " ms early");
        check(t.getProperty("TIMER_OUT_MS") != null, "delivered timer message without TIMER_OUT_MS: " + t.getProperties());
        for (MessageExt m : col.all) {
            if (!uniq(m).equals(timerId)) {
                check(m.getBody().length > 0 && new String(m.getBody(), StandardCharsets.UTF_8).startsWith("restart "), "corrupt body " + uniq(m));
            }
        }
        return "all 2000 acked messages consumable after restart; the timer message came "
            + (t.getStoreTimestamp() - due) + " ms after its time";
    }

    // ---------------------------------------------------------------- HOLD (helper for the mqadmin suite)
    static String hold(Ctx c) throws Exception {
        String topic = "MQA_" + c.runId;
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer("MQAP_" + c.runId);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ids.add(sendOk(p, new Message(topic, "holdtag", "holdkey_" + c.runId, bytes("hold " + i))).getMsgId());
        }
        Collector col = new Collector();
        DefaultMQPushConsumer cons = c.pushConsumer("MQAG_" + c.runId, "hold_" + c.runId);
        cons.subscribe(topic, "*");
        cons.registerMessageListener(col.listener());
        cons.start();
        col.awaitIds(ids, 30_000, "hold consumer");
        Thread.sleep(5500); // one offset persist round
        System.out.println("HOLD-READY " + topic);
        System.out.flush();
        Thread.sleep(Long.getLong("compat.holdSeconds", 90) * 1000);
        return "held";
    }

    // ---------------------------------------------------------------- OPSLOAD (helper for the ops suite)
    // Phase 1: compat.opsMessages (200) sync sends to OPS_<run> (4 queues; tag opstag, key opskey_<run>_<i % 10>),
    // push group OPSG_<run> consumes every one, one offset-persist round, then "OPS-READY <topic> <n> <first msgId>
    // <store-time lower bound ms>". Phase 2 until compat.holdSeconds: while the file compat.opsLoadFile exists, a steady load
    // of compat.opsRate (20) msg/s on the same topic (consumed by the same group); "OPS-LOAD <sent>" every 5 s.
    static String opsload(Ctx c) throws Exception {
        String topic = "OPS_" + c.runId;
        int n = Integer.getInteger("compat.opsMessages", 200);
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer("OPSP_" + c.runId);
        List<String> ids = new ArrayList<>();
        long firstStore = System.currentTimeMillis() - 1000; // lower bound of every store timestamp of phase 1
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "opstag", "opskey_" + c.runId + "_" + (i % 10), bytes("ops " + i));
            SendResult r = sendOk(p, m);
            ids.add(r.getMsgId());
        }
        Collector col = new Collector();
        DefaultMQPushConsumer cons = c.pushConsumer("OPSG_" + c.runId, "ops_" + c.runId);
        cons.subscribe(topic, "*");
        cons.registerMessageListener(col.listener());
        cons.start();
        col.awaitIds(ids, 60_000, "ops consumer");
        Thread.sleep(5500); // one offset persist round
        System.out.println("OPS-READY " + topic + " " + n + " " + ids.get(0) + " " + firstStore);
        System.out.flush();
        String goFile = System.getProperty("compat.opsLoadFile", "");
        int rate = Integer.getInteger("compat.opsRate", 20);
        long end = System.currentTimeMillis() + Long.getLong("compat.holdSeconds", 300) * 1000;
        long sent = 0, lastPrint = 0;
        while (System.currentTimeMillis() < end) {
            if (!goFile.isEmpty() && new java.io.File(goFile).exists()) {
                sendOk(p, new Message(topic, "opsload", bytes("load " + sent)));
                sent++;
                Thread.sleep(Math.max(1, 1000 / rate));
            } else {
                Thread.sleep(200);
            }
            if (System.currentTimeMillis() - lastPrint > 5000) {
                lastPrint = System.currentTimeMillis();
                System.out.println("OPS-LOAD " + sent);
                System.out.flush();
            }
        }
        return "held; load messages sent: " + sent;
    }

    // ---------------------------------------------------------------- CAP (traffic for scripts/capture-golden)
    static String cap(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message m = new Message(topic, "TagA", "golden-key-" + i, bytes("golden body " + i));
            m.putUserProperty("color", "blue");
            ids.add(sendOk(p, m).getMsgId());
        }
        Collector col = c.consumeAll(c.name("cg"), topic, "TagA || TagB");
        col.awaitIds(ids, 60_000, "capture consume");
        Thread.sleep(6000); // one offset persist round (UPDATE_CONSUMER_OFFSET; persistConsumerOffsetInterval, 5 s) + 1 s
        return "3 sent + consumed through the capture proxy";
    }

    // ---------------------------------------------------------------- NS01
    static String ns01(Ctx c) throws Exception {
        ClusterInfo ci = c.admin().examineBrokerClusterInfo();
        BrokerData bd = ci.getBrokerAddrTable().get(c.brokerName);
        check(bd != null && c.brokerAddr.equals(bd.getBrokerAddrs().get(0L)), "clusterInfo brokerAddrTable: " + ci.getBrokerAddrTable());
        String topic = c.name("t");
        c.createTopic(topic, 4);
        TopicRouteData r = c.waitRoute(topic, 4, 10_000);
        check(r.getBrokerDatas().size() == 1 && c.brokerAddr.equals(r.getBrokerDatas().get(0).getBrokerAddrs().get(0L)),
            "route brokerDatas " + r.getBrokerDatas());
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(sendOk(p, new Message(topic, "ns", bytes("via ns " + i))).getMsgId());
        }
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        col.awaitIds(ids, 40_000, "consume via NameServer");
        boolean listed = c.admin().fetchAllTopicList().getTopicList().contains(topic);
        check(listed, "topic missing from GET_ALL_TOPIC_LIST_FROM_NAMESERVER");
        return "cluster info, route, topic list ok; 20 sent+consumed";
    }

    // ---------------------------------------------------------------- issue-7 suite
    static String j11(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        int orders = 8;
        int per = 10;
        for (int s = 0; s < per; s++) {
            for (int o = 0; o < orders; o++) {
                Message m = new Message(topic, bytes("o" + o + "s" + s));
                m.putUserProperty("order", String.valueOf(o));
                m.putUserProperty("seq", String.valueOf(s));
                SendResult r = p.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), o);
                check(r.getSendStatus() == SendStatus.SEND_OK, "send " + r.getSendStatus());
            }
        }
        Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                seen.computeIfAbsent(m.getUserProperty("order"), k -> Collections.synchronizedList(new ArrayList<>()))
                    .add(Integer.parseInt(m.getUserProperty("seq")));
                total.incrementAndGet();
            }
            return ConsumeOrderlyStatus.SUCCESS;
        });
        cons.start();
        check(waitFor(() -> total.get() >= orders * per, 60_000), "orderly consumed " + total.get() + " of " + orders * per);
        for (Map.Entry<String, List<Integer>> e : seen.entrySet()) {
            List<Integer> l = e.getValue();
            for (int i = 0; i < l.size(); i++) {
                check(l.get(i) == i, "order " + e.getKey() + " sequence " + l);
            }
        }
        return orders + " orders x " + per + " in sequence";
    }

    static String j12(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer p = c.producer(c.name("pg"));
        String id = sendOk(p, new Message(topic, "r", "retrykey", bytes("retry me"))).getMsgId();
        List<Integer> times = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                if (id.equals(uniq(m))) {
                    times.add(m.getReconsumeTimes());
                    if (m.getReconsumeTimes() < 2) {
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        cons.start();
        check(waitFor(() -> times.size() >= 3, 60_000), "deliveries " + times);
        Thread.sleep(3000);
        check(times.equals(Arrays.asList(0, 1, 2)), "reconsumeTimes sequence " + times);
        return "reconsumeTimes " + times;
    }

    static String j13(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        String group = c.name("cg");
        DefaultMQProducer p = c.producer(c.name("pg"));
        String id = sendOk(p, new Message(topic, "d", "dlqkey", bytes("dead letter"))).getMsgId();
        AtomicInteger deliveries = new AtomicInteger();
        DefaultMQPushConsumer cons = c.pushConsumer(group, null);
        cons.setMaxReconsumeTimes(2);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            deliveries.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        cons.start();
        String dlq = "%DLQ%" + group;
        c.waitRoute(dlq, 0, 60_000);
        DefaultLitePullConsumer lp = new DefaultLitePullConsumer(c.name("dlqreader"));
        lp.setNamesrvAddr(c.ns);
        lp.setInstanceName("dlq_" + c.runId);
        lp.setAutoCommit(false);
        lp.start();
        c.closers.add(lp::shutdown);
        List<MessageQueue> mqs = new ArrayList<>(lp.fetchMessageQueues(dlq));
        lp.assign(mqs);
        for (MessageQueue mq : mqs) {
            lp.seekToBegin(mq);
        }
        MessageExt found = null;
        long end = System.currentTimeMillis() + 30_000;
        while (found == null && System.currentTimeMillis() < end) {
            for (MessageExt m : lp.poll(1000)) {
                if (id.equals(uniq(m))) {
                    found = m;
                }
            }
        }
        check(found != null, "message not readable from " + dlq);
        check(Arrays.equals(found.getBody(), bytes("dead letter")), "DLQ body");
        return "in " + dlq + " after " + deliveries.get() + " deliveries";
    }

    /** A push consumer (group cg) on all of topic: when each UNIQ_KEY first arrived; started 2 s before it is returned. */
    static Map<String, Long> arrivals(Ctx c, String topic) throws Exception {
        Map<String, Long> arrived = new ConcurrentHashMap<>();
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                arrived.putIfAbsent(uniq(m), System.currentTimeMillis());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        cons.start();
        Thread.sleep(2000);
        return arrived;
    }

    static String j14(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        Map<String, Long> arrived = arrivals(c, topic);
        DefaultMQProducer p = c.producer(c.name("pg"));
        Message lvl = new Message(topic, bytes("delay level 3"));
        lvl.setDelayTimeLevel(3);
        long t1 = System.currentTimeMillis();
        String id1 = sendOk(p, lvl).getMsgId();
        Message ms = new Message(topic, bytes("delay ms 3000"));
        ms.setDelayTimeMs(3000);
        long t2 = System.currentTimeMillis();
        String id2 = sendOk(p, ms).getMsgId();
        check(waitFor(() -> arrived.containsKey(id1) && arrived.containsKey(id2), 20_000), "delayed messages arrived: " + arrived.keySet());
        long d1 = arrived.get(id1) - t1;
        long d2 = arrived.get(id2) - t2;
        // lower bound is the contract; the upper bound is loose because a loaded 2-core box can add a long-poll round
        check(d1 >= 2500 && d1 <= 30000, "level 3 delivered after " + d1 + " ms (want 2.5 s .. 30 s)");
        check(d2 >= 2500 && d2 <= 30000, "delayTimeMs 3000 delivered after " + d2 + " ms (want 2.5 s .. 30 s)");
        return "level3 " + d1 + " ms, timer " + d2 + " ms";
    }

    // 5.3.2+: a timer message's SendResult carries a recall handle; DefaultMQProducer.recallMessage hands it back
    // (RECALL_MESSAGE 370, recallMessageEnable=true in broker.conf.tmpl) and the broker drops the message when its
    // slot comes. Two timers for the same time: the recalled one never arrives, the other does.
    static String j22(Ctx c) throws Exception {
        String topic = c.name("t");
        String other = c.name("o");
        c.createTopic(topic, 4);
        c.createTopic(other, 4);
        Map<String, Long> arrived = arrivals(c, topic);
        DefaultMQProducer p = c.producer(c.name("pg"));
        long due = System.currentTimeMillis() + 6000;
        Message recalled = new Message(topic, bytes("recalled timer"));
        recalled.setDeliverTimeMs(due);
        Message kept = new Message(topic, bytes("kept timer"));
        kept.setDeliverTimeMs(due);
        SendResult ra = sendOk(p, recalled);
        SendResult rb = sendOk(p, kept);
        check(ra.getRecallHandle() != null && rb.getRecallHandle() != null, "timer sends without a recall handle: " + ra + " / " + rb);
        // the broker refuses a handle named for another topic (ILLEGAL_OPERATION 604)
        try {
            p.recallMessage(other, ra.getRecallHandle());
            check(false, "recall under another topic accepted");
        } catch (MQBrokerException e) {
            check(e.getResponseCode() == 604, "recall under another topic: code " + e.getResponseCode() + " " + e.getErrorMessage());
        }
        String id = p.recallMessage(topic, ra.getRecallHandle());
        check(ra.getMsgId().equals(id), "recall answered msgId " + id + ", sent " + ra.getMsgId());
        check(waitFor(() -> arrived.containsKey(rb.getMsgId()), 30_000), "the timer not recalled did not arrive: " + arrived.keySet());
        long late = arrived.get(rb.getMsgId()) - due;
        // both timers share one slot, so the recalled one would be put in the same pass: a consumer pull round is margin
        Thread.sleep(3000);
        check(!arrived.containsKey(ra.getMsgId()), "the recalled timer message was delivered");
        return "kept timer " + late + " ms after its time, recalled one absent 3 s later; wrong topic refused 604";
    }

    static String j15(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        Map<String, AtomicInteger> checks = new ConcurrentHashMap<>();
        TransactionMQProducer p = new TransactionMQProducer(c.name("tpg"));
        p.setNamesrvAddr(c.ns);
        p.setInstanceName("tp_" + c.runId);
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                switch (msg.getUserProperty("act")) {
                    case "commit":
                        return LocalTransactionState.COMMIT_MESSAGE;
                    case "rollback":
                        return LocalTransactionState.ROLLBACK_MESSAGE;
                    default:
                        return LocalTransactionState.UNKNOW;
                }
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                String act = msg.getUserProperty("act");
                checks.computeIfAbsent(act, k -> new AtomicInteger()).incrementAndGet();
                return "unknown-commit".equals(act) ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        p.start();
        c.closers.add(p::shutdown);
        Collector col = c.consumeAll(c.name("cg"), topic, "*");
        Map<String, String> ids = new HashMap<>();
        for (String act : new String[] {"commit", "rollback", "unknown-commit", "unknown-rollback"}) {
            Message m = new Message(topic, act, bytes("tx " + act));
            m.putUserProperty("act", act);
            SendResult r = p.sendMessageInTransaction(m, null);
            check(r.getSendStatus() == SendStatus.SEND_OK, act + " half send " + r.getSendStatus());
            ids.put(act, r.getMsgId());
        }
        col.awaitIds(Arrays.asList(ids.get("commit"), ids.get("unknown-commit")), 60_000, "committed tx messages");
        Thread.sleep(5000);
        check(!col.byUniq.containsKey(ids.get("rollback")), "rolled-back message delivered");
        check(!col.byUniq.containsKey(ids.get("unknown-rollback")), "check-rollback message delivered");
        check(checks.containsKey("unknown-commit"), "no check-back for unknown-commit: " + checks);
        return "commit/rollback/check-back ok, checks " + checks;
    }

    static String j21(Ctx c) throws Exception {
        String topic = c.name("t");
        c.createTopic(topic, 4);
        DefaultMQProducer replier = c.producer(c.name("rpg"));
        DefaultMQPushConsumer cons = c.pushConsumer(c.name("cg"), null);
        cons.subscribe(topic, "*");
        cons.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                try {
                    Message reply = MessageUtil.createReplyMessage(m, bytes("reply to " + new String(m.getBody(), StandardCharsets.UTF_8)));
                    replier.send(reply);
                } catch (Exception e) {
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        cons.start();
        DefaultMQProducer req = c.producer(c.name("qpg"));
        // Client 5.3.3 bug (apache/rocketmq #9608, fixed after 5.3.3): request(msg, timeout) returns null as soon as
        // the SEND succeeds, and the callback form calls onSuccess(null) at send time and onSuccess(reply) when the
        // reply arrives. So use the callback form and ignore the null call.
        java.util.concurrent.CompletableFuture<Message> fut = new java.util.concurrent.CompletableFuture<>();
        req.request(new Message(topic, bytes("ping")), new org.apache.rocketmq.client.producer.RequestCallback() {
            @Override
            public void onSuccess(Message message) {
                if (message != null) {
                    fut.complete(message);
                }
            }

            @Override
            public void onException(Throwable e) {
                fut.completeExceptionally(e);
            }
        }, 45_000);
        // up to 45 s: on the Java oracle the replier's first pulls can be answered SUBSCRIPTION_NOT_LATEST until its
        // next periodic heartbeat (30 s, apache/rocketmq#3434; see J19). rmqd answers within about a second.
        Message resp = fut.get(50, TimeUnit.SECONDS);
        check(resp != null && "reply to ping".equals(new String(resp.getBody(), StandardCharsets.UTF_8)), "reply " + resp);
        return "reply received";
    }

    // ---------------------------------------------------------------- runner
    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }

    static void emit(String id, String status, long ms, String detail) {
        if (detail != null && detail.length() > 600) {
            detail = detail.substring(0, 600) + "...";
        }
        System.out.println("{\"id\":" + json(id) + ",\"client\":\"java\",\"status\":\"" + status + "\",\"ms\":" + ms
            + ",\"detail\":" + json(detail == null ? "" : detail) + "}");
        System.out.flush();
    }

    static String describe(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root && !(root instanceof AssertionError)) {
            root = root.getCause();
        }
        String s = root instanceof AssertionError ? root.getMessage() : root.toString();
        if (!(root instanceof AssertionError)) {
            StackTraceElement[] st = root.getStackTrace();
            for (int i = 0; i < Math.min(3, st.length); i++) {
                s += " @" + st[i];
            }
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--")) {
                String k = args[i].substring(2);
                String v = i + 1 < args.length && !args[i + 1].startsWith("--") ? args[++i] : "true";
                a.put(k, v);
            }
        }
        if (a.containsKey("list")) {
            for (Scenario s : SCENARIOS.values()) {
                System.out.println(s.id + "\t" + s.suite + "\t" + s.title);
            }
            return;
        }
        String ns = a.getOrDefault("ns", "127.0.0.1:9876");
        String brokerAddr = a.getOrDefault("broker-addr", "127.0.0.1:10911");
        String brokerName = a.getOrDefault("broker-name", "broker-a");
        String runId = a.getOrDefault("run-id", Long.toString(System.currentTimeMillis() % 100000000L, 36)).replaceAll("[^A-Za-z0-9_]", "_");
        String stateDir = a.getOrDefault("state-dir", System.getProperty("user.home") + "/state");
        double scale = Double.parseDouble(a.getOrDefault("timeout-scale", "1"));
        List<Scenario> todo = new ArrayList<>();
        if (a.containsKey("only")) {
            for (String id : a.get("only").split(",")) {
                Scenario s = SCENARIOS.get(id.trim());
                if (s == null) {
                    emit(id.trim(), "FAIL", 0, "unknown scenario id");
                } else {
                    todo.add(s);
                }
            }
        } else {
            Set<String> suites = new HashSet<>(Arrays.asList(a.getOrDefault("suites", "data").split(",")));
            for (Scenario s : SCENARIOS.values()) {
                if (suites.contains(s.suite) && !s.id.startsWith("J03")) {
                    todo.add(s);
                }
            }
        }
        // Wait (bounded) until the broker under test is registered on the NameServer.
        long tReady = System.currentTimeMillis();
        String ready = waitBrokerRegistered(ns, brokerName, brokerAddr, (long) (Double.parseDouble(a.getOrDefault("ready-timeout", "30")) * 1000));
        // timings on stderr (run.sh reads only the JSON lines): JVM start, registration wait, each scenario's close
        System.err.println("[compat.Main] jvm up " + (tReady - ManagementFactory.getRuntimeMXBean().getStartTime())
            + " ms, broker registered after " + (System.currentTimeMillis() - tReady) + " ms");
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scenario");
            t.setDaemon(true);
            return t;
        });
        for (Scenario s : todo) {
            if (ready != null) {
                emit(s.id, "FAIL", 0, ready);
                continue;
            }
            Ctx ctx = new Ctx(ns, brokerAddr, brokerName, runId, stateDir, s.id);
            long t0 = System.currentTimeMillis();
            FIRST_START.set(0);
            FIRST_DELIVERY.set(0);
            Future<String> f = pool.submit(() -> s.body.run(ctx));
            String status;
            String detail;
            try {
                detail = f.get((long) (s.timeoutS * scale), TimeUnit.SECONDS);
                status = "PASS";
            } catch (TimeoutException e) {
                f.cancel(true);
                status = "FAIL";
                detail = "timeout after " + (long) (s.timeoutS * scale) + " s";
            } catch (java.util.concurrent.ExecutionException e) {
                status = "FAIL";
                detail = describe(e.getCause());
            }
            long ms = System.currentTimeMillis() - t0;
            if (FIRST_DELIVERY.get() != 0) {
                // "first=" is read by run.sh for the first-delivery table
                detail = detail + " [first=" + (FIRST_DELIVERY.get() - FIRST_START.get()) + "ms]";
            }
            Thread closer = new Thread(ctx::closeAll);
            closer.setDaemon(true);
            closer.start();
            long tClose = System.currentTimeMillis();
            closer.join(15_000);
            System.err.println("[compat.Main] " + s.id + " " + status + " in " + ms + " ms, clients closed in "
                + (System.currentTimeMillis() - tClose) + " ms");
            emit(s.id, status, ms, detail);
        }
        pool.shutdownNow();
        System.exit(0);
    }

    /** @return null when registered, else a failure reason. */
    static String waitBrokerRegistered(String ns, String brokerName, String brokerAddr, long timeoutMs) {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(5000);
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("ready_" + System.nanoTime());
        String last = "no answer";
        try {
            admin.start();
            long end = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < end) {
                try {
                    ClusterInfo ci = admin.examineBrokerClusterInfo();
                    BrokerData bd = ci.getBrokerAddrTable() == null ? null : ci.getBrokerAddrTable().get(brokerName);
                    if (bd != null && brokerAddr.equals(bd.getBrokerAddrs().get(0L))) {
                        return null;
                    }
                    last = "brokerAddrTable=" + ci.getBrokerAddrTable();
                } catch (Exception e) {
                    last = e.toString();
                }
                Thread.sleep(500);
            }
        } catch (Exception e) {
            last = e.toString();
        } finally {
            admin.shutdown();
        }
        return "broker " + brokerName + "@" + brokerAddr + " not registered on NameServer " + ns + " within " + timeoutMs + " ms: " + last;
    }

    private Main() {
    }

}
