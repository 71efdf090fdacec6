package compat;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import compat.Main.Ctx;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.admin.ConsumeStats;
import org.apache.rocketmq.remoting.protocol.admin.OffsetWrapper;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

/**
 * POP consumption (RocketMQ 5.x, issue #22) with the REAL Java client 5.3.3: a classic DefaultMQPushConsumer in POP
 * mode. The client pops only when all hold (RebalancePushImpl.clientRebalance): setClientRebalance(false), a
 * MessageListenerConcurrently, CLUSTERING, and the broker's mode for (topic, group) set to POP
 * (SET_MESSAGE_REQUEST_MODE 401, by mqadmin setConsumeMode or DefaultMQAdminExt.setMessageRequestMode).
 * Driven by compat-tests/suites/pop.sh; every consumer records the request codes it sends (RPCHook), so a scenario
 * fails when the client silently stayed on PULL.
 *
 * POP-01 happy path (mode set by mqadmin in pop.sh when -Dcompat.pop.modeSetBy=mqadmin), POP-02 RECONSUME_LATER
 * (CHANGE_MESSAGE_INVISIBLETIME, redelivered from the pop retry topic), POP-03 crash/revive (a child JVM pops and is
 * killed with SIGKILL before acking; the revive service hands the messages to a new consumer), POP-05 refusals of
 * SET_MESSAGE_REQUEST_MODE. POP-03C is the child of POP-03 (a tool scenario).
 */
final class Pop {

    static void register() {
        Main.def("POP-01", "pop", 120, "pop: 100 msgs to a POP-mode push consumer, exactly once, POP_CK receipts, diff 0", Pop::pop01);
        Main.def("POP-02", "pop", 120, "pop: RECONSUME_LATER -> CHANGE_MESSAGE_INVISIBLETIME -> redelivered from the retry topic", Pop::pop02);
        Main.def("POP-03", "pop", 150, "pop: consumer JVM killed before ack; revive hands the messages to a new consumer", Pop::pop03);
        Main.def("POP-03C", "tool", 300, "pop: POP-03 child, pops and never acks (killed by POP-03)", Pop::pop03child);
        Main.def("POP-05", "pop", 60, "pop: SET_MESSAGE_REQUEST_MODE refused for an unknown topic (17) and a %RETRY% topic (16)", Pop::pop05);
    }

    static final int POP_MESSAGE = 200050;
    static final int ACK_MESSAGE = 200051;
    static final int CHANGE_INVISIBLETIME = 200053;
    static final int QUERY_ASSIGNMENT = 400;
    static final int PULL_MESSAGE = 11;

    // ---------------------------------------------------------------- wire recorder
    /** RPCHook recording every request the consumer sends (code, header) and the response codes. */
    static final class Wire implements RPCHook {
        final Map<Integer, AtomicInteger> sent = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();
        final List<String> log = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> pullTopics = new ConcurrentHashMap<>();
        final long t0 = System.currentTimeMillis();

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            sent.computeIfAbsent(request.getCode(), k -> new AtomicInteger()).incrementAndGet();
            Object h = request.readCustomHeader();
            if (request.getCode() == PULL_MESSAGE && h instanceof org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader) {
                String t = ((org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader) h).getTopic();
                pullTopics.computeIfAbsent(t, k -> new AtomicInteger()).incrementAndGet();
            }
            if (log.size() < 2000) {
                String body = request.getBody() == null ? "" : " body=" + new String(request.getBody(), StandardCharsets.UTF_8);
                log.add("+" + (System.currentTimeMillis() - t0) + "ms -> " + remoteAddr + " code=" + request.getCode()
                    + " " + (h != null ? h : request.getExtFields()) + (body.length() > 400 ? body.substring(0, 400) + "..." : body));
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            if (response == null) {
                return;
            }
            answers.computeIfAbsent(request.getCode() + "=" + response.getCode(), k -> new AtomicInteger()).incrementAndGet();
            if (log.size() < 2000 && (request.getCode() == POP_MESSAGE || request.getCode() == CHANGE_INVISIBLETIME
                || request.getCode() == QUERY_ASSIGNMENT || response.getCode() != 0)) {
                String body = response.getBody() == null || request.getCode() == POP_MESSAGE ? ""
                    : " body=" + new String(response.getBody(), StandardCharsets.UTF_8);
                log.add("+" + (System.currentTimeMillis() - t0) + "ms <- code=" + request.getCode() + " answer=" + response.getCode()
                    + " remark=" + response.getRemark() + " ext=" + new TreeMap<>(response.getExtFields() == null ? Map.of() : response.getExtFields())
                    + (response.getBody() != null ? " bodyLen=" + response.getBody().length : "") + body);
            }
        }

        /**
         * Waits for <cond> like Main.waitFor, but gives up early when the broker plainly does not serve POP: no
         * POP_MESSAGE sent 15 s after the consumer started (QUERY_ASSIGNMENT did not hand out a POP queue), or only
         * error answers to it (other than SUCCESS and the "nothing yet" codes the client accepts: PULL_NOT_FOUND 19,
         * POLLING_FULL 209, POLLING_TIMEOUT 210), three or more.
         */
        boolean await(java.util.function.BooleanSupplier cond, long timeoutMs) throws InterruptedException {
            long end = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < end) {
                if (cond.getAsBoolean()) {
                    return true;
                }
                if (System.currentTimeMillis() - t0 > 15_000 && n(POP_MESSAGE) == 0) {
                    throw new AssertionError("no POP_MESSAGE sent 15 s after the consumer started; " + summary() + " answers "
                        + new TreeMap<>(answers) + "; last QUERY_ASSIGNMENT answer: " + lastLog("<- code=400 "));
                }
                int bad = 0;
                for (Map.Entry<String, AtomicInteger> e : answers.entrySet()) {
                    String k = e.getKey();
                    if (k.startsWith(POP_MESSAGE + "=") && !k.equals(POP_MESSAGE + "=0") && !k.equals(POP_MESSAGE + "=209")
                        && !k.equals(POP_MESSAGE + "=210") && !k.equals(POP_MESSAGE + "=19")) {
                        bad += e.getValue().get();
                    }
                }
                if (bad >= 3 && ok(POP_MESSAGE) == 0) {
                    throw new AssertionError("POP_MESSAGE answered only errors: " + new TreeMap<>(answers) + "; last: " + lastLog("<- code=200050 "));
                }
                Thread.sleep(100);
            }
            return cond.getAsBoolean();
        }

        String lastLog(String prefix) {
            for (int i = log.size() - 1; i >= 0; i--) {
                String l = log.get(i);
                if (l.contains(prefix)) {
                    return l.length() > 300 ? l.substring(0, 300) : l;
                }
            }
            return "none";
        }

        /** SUCCESS answers to <code> seen so far */
        int ok(int code) {
            AtomicInteger a = answers.get(code + "=0");
            return a == null ? 0 : a.get();
        }

        int n(int code) {
            AtomicInteger a = sent.get(code);
            return a == null ? 0 : a.get();
        }

        /** answers of <code> other than SUCCESS, e.g. {200051=17: 3} */
        Map<String, Integer> failures(int code) {
            Map<String, Integer> m = new TreeMap<>();
            answers.forEach((k, v) -> {
                if (k.startsWith(code + "=") && !k.equals(code + "=0")) {
                    m.put(k, v.get());
                }
            });
            return m;
        }

        String summary() {
            Map<Integer, Integer> m = new TreeMap<>();
            sent.forEach((k, v) -> m.put(k, v.get()));
            return "sent" + m;
        }

        void save(Ctx c, String what) {
            try {
                Path p = Paths.get(c.stateDir, "pop-wire-" + c.scenarioId + "-" + what + ".txt");
                Files.createDirectories(p.getParent());
                Files.write(p, log, StandardCharsets.UTF_8);
            } catch (Exception ignored) {
            }
        }
    }

    // ---------------------------------------------------------------- helpers
    /** POP-mode push consumer as the reference describes (clientRebalance false, concurrently, clustering). */
    static DefaultMQPushConsumer popConsumer(Ctx c, String group, String topic, long invisibleMs, int threads, RPCHook wire,
        MessageListenerConcurrently l) throws Exception {
        DefaultMQPushConsumer pc = new DefaultMQPushConsumer(group, wire);
        pc.setNamesrvAddr(c.ns);
        pc.setInstanceName("pop_" + group + "_" + System.nanoTime());
        pc.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        pc.setMessageModel(MessageModel.CLUSTERING);
        pc.setClientRebalance(false);
        pc.setPopInvisibleTime(invisibleMs);
        pc.setConsumeThreadMin(threads);
        pc.setConsumeThreadMax(threads);
        pc.setConsumeMessageBatchMaxSize(1);
        pc.subscribe(topic, "*");
        pc.registerMessageListener(l);
        Main.FIRST_START.compareAndSet(0, System.currentTimeMillis());
        pc.start();
        c.closers.add(pc::shutdown);
        return pc;
    }

    static void createGroup(Ctx c, String group) throws Exception {
        SubscriptionGroupConfig g = new SubscriptionGroupConfig();
        g.setGroupName(group);
        c.admin().createAndUpdateSubscriptionGroupConfig(c.brokerAddr, g);
    }

    static void setPop(Ctx c, String topic, String group) throws Exception {
        c.admin().setMessageRequestMode(c.brokerAddr, topic, group, MessageRequestMode.POP, 0, 5000);
    }

    /** POP_CK receipt: 8 fields <ckStartOffset> <popTime> <invisibleTime> <reviveQid> <retryMark> <brokerName> <queueId> <offset>. */
    static String[] receipt(MessageExt m) {
        String ck = m.getProperty(MessageConst.PROPERTY_POP_CK);
        Main.check(ck != null, "message " + Main.uniq(m) + " has no POP_CK property (not popped?) props=" + m.getProperties());
        String[] f = ck.split(" ");
        Main.check(f.length == 8, "POP_CK '" + ck + "' has " + f.length + " fields, want 8");
        for (int i : new int[] {0, 1, 2, 3, 6, 7}) {
            try {
                Long.parseLong(f[i]);
            } catch (NumberFormatException e) {
                throw new AssertionError("POP_CK '" + ck + "' field " + i + " not a number");
            }
        }
        return f;
    }

    /** Checks a receipt against the message; retryMark "0" = from the topic itself, "1" = from %RETRY%group_topic. */
    static void checkReceipt(Ctx c, MessageExt m, String topic, String retryMark, long invisibleMs, long since) {
        String[] f = receipt(m);
        String id = Main.uniq(m) + " POP_CK '" + String.join(" ", f) + "'";
        Main.check(m.getTopic().equals(topic), id + ": topic " + m.getTopic() + ", want " + topic);
        Main.check(f[5].equals(c.brokerName), id + ": brokerName " + f[5] + ", want " + c.brokerName);
        Main.check(f[4].equals(retryMark), id + ": retry mark " + f[4] + ", want " + retryMark);
        Main.check(Long.parseLong(f[2]) == invisibleMs, id + ": invisibleTime " + f[2] + ", want " + invisibleMs);
        int rq = Integer.parseInt(f[3]);
        Main.check(rq >= 0 && rq < 8, id + ": reviveQid " + rq + " not in [0, 8) (reviveQueueNum 8)");
        long pt = Long.parseLong(f[1]);
        Main.check(pt >= since - 5000 && pt <= System.currentTimeMillis() + 5000, id + ": popTime " + pt + " not near now");
        Main.check(Long.parseLong(f[0]) <= Long.parseLong(f[7]), id + ": ckStartOffset > message offset");
        Main.check(Long.parseLong(f[7]) == m.getQueueOffset(), id + ": offset field " + f[7] + " != queueOffset " + m.getQueueOffset());
        Main.check(Integer.parseInt(f[6]) == m.getQueueId(), id + ": queueId field " + f[6] + " != queueId " + m.getQueueId());
        if ("0".equals(retryMark)) {
            Main.check(m.getQueueId() >= 0 && m.getQueueId() < 4, id + ": queueId " + m.getQueueId());
        } else {
            Main.check(m.getQueueId() == 0, id + ": a pop retry topic has one queue, queueId " + m.getQueueId());
        }
        Main.check(m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) != null, id + ": no 1ST_POP_TIME");
    }

    /** consume stats of <group> on <topic>: until diff (broker offset - consumer offset) is 0, at most <ms>. */
    static String awaitDiffZero(Ctx c, String group, String topic, long ms) throws Exception {
        long t0 = System.currentTimeMillis();
        String last = "no stats";
        while (true) {
            try {
                ConsumeStats cs = c.admin().examineConsumeStats(group);
                long diff = 0;
                long broker = 0;
                int queues = 0;
                for (Map.Entry<MessageQueue, OffsetWrapper> e : cs.getOffsetTable().entrySet()) {
                    if (!e.getKey().getTopic().equals(topic)) {
                        continue;
                    }
                    queues++;
                    broker += e.getValue().getBrokerOffset();
                    diff += e.getValue().getBrokerOffset() - e.getValue().getConsumerOffset();
                }
                last = "queues=" + queues + " brokerOffsets=" + broker + " diff=" + diff;
                if (queues > 0 && diff == 0) {
                    return last + " after " + (System.currentTimeMillis() - t0) + " ms";
                }
            } catch (Exception e) {
                last = e.toString();
            }
            if (System.currentTimeMillis() - t0 > ms) {
                throw new AssertionError("consume stats of " + group + " on " + topic + " not at diff 0 within " + ms + " ms: " + last);
            }
            Thread.sleep(500);
        }
    }

    /**
     * The retry-topic offsets of the redelivered messages: the revive service writes each un-acked message once into
     * the (new) %RETRY%<group>_<topic>, so they must be exactly 0..n-1 (Java: msgOffsetInfo "1 0 0,1,...").
     */
    static void checkRetryOffsets(java.util.Collection<MessageExt> again, int n) {
        TreeSet<Long> offs = new TreeSet<>();
        for (MessageExt m : again) {
            offs.add(m.getQueueOffset());
        }
        Main.check(offs.size() == n && offs.first() == 0 && offs.last() == n - 1,
            "the " + n + " redelivered messages have retry-queue offsets " + offs + ", want 0.." + (n - 1)
                + " (each revived once into the new retry topic; other offsets mean duplicates or skipped ones)");
    }

    static List<String> send(DefaultMQProducer p, String topic, String prefix, int from, int to) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < to; i++) {
            Message m = new Message(topic, "popTag", prefix + "-" + i, Main.bytes(prefix + " body " + i));
            m.putUserProperty("seq", Integer.toString(i));
            ids.add(Main.sendOk(p, m).getMsgId());
        }
        return ids;
    }

    static String expectPopWire(Wire w, String topic) {
        Main.check(w.n(POP_MESSAGE) > 0, "the consumer never sent POP_MESSAGE (200050): it did not switch to POP; " + w.summary());
        Main.check(w.n(QUERY_ASSIGNMENT) > 0, "no QUERY_ASSIGNMENT (400) sent; " + w.summary());
        AtomicInteger pulls = w.pullTopics.get(topic);
        Main.check(pulls == null, "the consumer sent PULL_MESSAGE on " + topic + " " + pulls + " times (POP mode must pop it)");
        Main.check(w.failures(ACK_MESSAGE).isEmpty(), "ACK_MESSAGE answers not SUCCESS: " + w.failures(ACK_MESSAGE));
        try {
            Main.check(Main.waitFor(() -> w.ok(ACK_MESSAGE) == w.n(ACK_MESSAGE), 5_000), "ACK_MESSAGE sent " + w.n(ACK_MESSAGE)
                + " times, answered SUCCESS " + w.ok(ACK_MESSAGE) + " times; answers " + new TreeMap<>(w.answers));
        } catch (InterruptedException e) {
            throw new AssertionError("interrupted");
        }
        return w.summary() + " acks OK " + w.ok(ACK_MESSAGE);
    }

    // ---------------------------------------------------------------- POP-01
    // Java 5.3.3 oracle (3 runs, 2026-12-02): first delivery 1.7 s after start (QUERY_ASSIGNMENT at +1.0 s, first
    // POP at +1.5 s), the 50 sent while popping arrive within 0.6-0.8 s, consume stats at diff 0 within 0.2 s after
    // the last delivery (the broker commits the pop offset when it writes the checkpoint). Whole scenario 5-7 s.
    static String pop01(Ctx c) throws Exception {
        String topic = c.name("t");
        String group = c.name("g");
        String how;
        if ("mqadmin".equals(System.getProperty("compat.pop.modeSetBy"))) {
            c.waitRoute(topic, 4, 20_000); // created by pop.sh (mqadmin updateTopic), mode set by mqadmin setConsumeMode
            how = "mode by mqadmin setConsumeMode";
        } else {
            c.createTopic(topic, 4);
            createGroup(c, group);
            setPop(c, topic, group);
            how = "mode by DefaultMQAdminExt.setMessageRequestMode";
        }
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = new ArrayList<>(send(p, topic, "pop01", 0, 50));
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        AtomicInteger deliveries = new AtomicInteger();
        Wire wire = new Wire();
        long start = System.currentTimeMillis();
        popConsumer(c, group, topic, 60_000, 4, wire, (msgs, ctx) -> {
            Main.FIRST_DELIVERY.compareAndSet(0, System.currentTimeMillis());
            for (MessageExt m : msgs) {
                deliveries.incrementAndGet();
                got.putIfAbsent(Main.uniq(m), m);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        Main.check(wire.await(() -> got.size() >= 50, 45_000), "before-start batch: " + got.size() + " of 50 received in 45 s; " + wire.summary());
        long tLive = System.currentTimeMillis();
        ids.addAll(send(p, topic, "pop01", 50, 100)); // sent while the consumer is popping (long polling wake-up)
        boolean all = wire.await(() -> got.keySet().containsAll(ids), 45_000);
        long tAll = System.currentTimeMillis();
        wire.save(c, "consumer");
        if (!all) {
            TreeSet<String> missing = new TreeSet<>(ids);
            missing.removeAll(got.keySet());
            throw new AssertionError(missing.size() + " of 100 never received, e.g. " + Main.first(missing, 3) + "; " + wire.summary()
                + " answers " + new TreeMap<>(wire.answers));
        }
        Thread.sleep(2000); // duplicates would show up here (acks are async)
        String w = expectPopWire(wire, topic); // first: a client left on PULL fails with the clearest reason
        Main.check(got.size() == 100 && deliveries.get() == 100, "received " + deliveries.get() + " deliveries of " + got.size() + " distinct, want 100 exactly once");
        Map<Integer, Integer> perQueue = new TreeMap<>();
        for (MessageExt m : got.values()) {
            checkReceipt(c, m, topic, "0", 60_000, start);
            Main.check(m.getReconsumeTimes() == 0, Main.uniq(m) + " reconsumeTimes " + m.getReconsumeTimes());
            Main.check(m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME).equals(receipt(m)[1]),
                Main.uniq(m) + " 1ST_POP_TIME " + m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) + " != popTime of its receipt");
            Main.check(new String(m.getBody(), StandardCharsets.UTF_8).startsWith("pop01 body "), "body " + new String(m.getBody(), StandardCharsets.UTF_8));
            perQueue.merge(m.getQueueId(), 1, Integer::sum);
        }
        Main.check(wire.n(ACK_MESSAGE) == 100, "ACK_MESSAGE sent " + wire.n(ACK_MESSAGE) + " times, want one per message (100); " + w);
        Main.check(Main.waitFor(() -> wire.ok(ACK_MESSAGE) == 100, 5_000), "ACK_MESSAGE answered SUCCESS " + wire.ok(ACK_MESSAGE)
            + " times of 100; answers " + new TreeMap<>(wire.answers));
        String diff = awaitDiffZero(c, group, topic, 30_000);
        return how + "; 100 exactly once over queues " + perQueue + ", receipts well-formed (mark 0, " + c.brokerName
            + ", it 60000); live 50 in " + (tAll - tLive) + " ms; " + w + "; consume stats " + diff;
    }

    // ---------------------------------------------------------------- POP-02
    // Java 5.3.3 oracle (2 runs, 2026-12-02): the 5 come back 14.96-14.99 s after RECONSUME_LATER. The client asks for
    // popDelayLevel[0] = 10 s (CHANGE_MESSAGE_INVISIBLETIME); the broker writes a new CK (it 10000, TIMER_DELIVER_MS =
    // now + 9 s) and an ACK of the old one; the revive service puts the messages into %RETRY%<group>_<topic> about
    // 12 s after the change; an arrival on a V1 retry topic wakes no parked POP, so the consumer gets them when its
    // parked POP (pollTime 15 s, parked since the first batch) times out and re-reads. Whole scenario ~19 s.
    static String pop02(Ctx c) throws Exception {
        String topic = c.name("t");
        String group = c.name("g");
        c.createTopic(topic, 4);
        createGroup(c, group);
        setPop(c, topic, group);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = send(p, topic, "pop02", 0, 20);
        TreeSet<String> later = new TreeSet<>();
        for (int i = 0; i < ids.size(); i += 4) {
            later.add(ids.get(i)); // 5 of 20 answer RECONSUME_LATER on their first delivery
        }
        Map<String, List<MessageExt>> deliveries = new ConcurrentHashMap<>();
        Map<String, List<Long>> times = new ConcurrentHashMap<>();
        Map<String, MessageExt> ok = new ConcurrentHashMap<>();
        Wire wire = new Wire();
        long start = System.currentTimeMillis();
        popConsumer(c, group, topic, 60_000, 4, wire, (msgs, ctx) -> {
            Main.FIRST_DELIVERY.compareAndSet(0, System.currentTimeMillis());
            MessageExt m = msgs.get(0);
            String u = Main.uniq(m);
            deliveries.computeIfAbsent(u, k -> new CopyOnWriteArrayList<>()).add(m);
            times.computeIfAbsent(u, k -> new CopyOnWriteArrayList<>()).add(System.currentTimeMillis());
            if (later.contains(u) && deliveries.get(u).size() == 1) {
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
            ok.putIfAbsent(u, m);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        boolean all = wire.await(() -> ok.keySet().containsAll(ids), 60_000);
        wire.save(c, "consumer");
        if (!all) {
            TreeSet<String> missing = new TreeSet<>(ids);
            missing.removeAll(ok.keySet());
            throw new AssertionError(missing.size() + " of 20 never consumed OK within 60 s (" + Main.first(missing, 3) + ", "
                + missing.stream().filter(later::contains).count() + " of them RECONSUME_LATER ones); " + wire.summary()
                + " answers " + new TreeMap<>(wire.answers));
        }
        Thread.sleep(2000);
        String w = expectPopWire(wire, topic); // first: a client left on PULL fails with the clearest reason
        List<Long> delays = new ArrayList<>();
        List<Long> firstPopShift = new ArrayList<>();
        for (String u : ids) {
            List<MessageExt> d = deliveries.get(u);
            if (!later.contains(u)) {
                Main.check(d.size() == 1, u + " (acked on first delivery) delivered " + d.size() + " times");
                checkReceipt(c, d.get(0), topic, "0", 60_000, start);
                continue;
            }
            Main.check(d.size() == 2, u + " (RECONSUME_LATER once) delivered " + d.size() + " times, want 2");
            MessageExt first = d.get(0);
            MessageExt again = d.get(1);
            checkReceipt(c, first, topic, "0", 60_000, start);
            Main.check(first.getReconsumeTimes() == 0, u + " first delivery reconsumeTimes " + first.getReconsumeTimes());
            // the redelivery comes from the pop retry topic %RETRY%<group>_<topic> (V1), queue 0, retry mark 1
            checkReceipt(c, again, topic, "1", 60_000, start);
            Main.check(again.getReconsumeTimes() == 1, u + " redelivery reconsumeTimes " + again.getReconsumeTimes() + ", want 1");
            Main.check(new String(again.getBody(), StandardCharsets.UTF_8).equals(new String(first.getBody(), StandardCharsets.UTF_8)), u + " body changed");
            Main.check(Main.eq(again.getTags(), "popTag") && Main.eq(again.getKeys(), first.getKeys()), u + " tags/keys changed: " + again.getTags() + "/" + again.getKeys());
            Main.check(Main.eq(again.getUserProperty("seq"), first.getUserProperty("seq")), u + " user property seq lost");
            long delay = times.get(u).get(1) - times.get(u).get(0);
            delays.add(delay);
            // Java: the revived copy's 1ST_POP_TIME is the popTime of the CHANGE_INVISIBLETIME checkpoint (the
            // change's time), not the first pop's; reported, not asserted
            firstPopShift.add(Long.parseLong(again.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME)) - Long.parseLong(receipt(first)[1]));
            // the client asks for popDelayLevel[0] = 10 s of invisibility
            Main.check(delay >= 9_000, u + " came back after " + delay + " ms, before the 10 s the client asked for");
        }
        List<MessageExt> again = new ArrayList<>();
        for (String u : later) {
            again.add(deliveries.get(u).get(1));
        }
        checkRetryOffsets(again, later.size());
        Main.check(wire.n(CHANGE_INVISIBLETIME) >= later.size(), "CHANGE_MESSAGE_INVISIBLETIME (200053) sent " + wire.n(CHANGE_INVISIBLETIME)
            + " times, want >= " + later.size() + "; " + w);
        Main.check(wire.failures(CHANGE_INVISIBLETIME).isEmpty(), "CHANGE_MESSAGE_INVISIBLETIME answers " + wire.failures(CHANGE_INVISIBLETIME));
        Collections.sort(delays);
        return "15 acked once, 5 RECONSUME_LATER came back once from %RETRY%" + group + "_" + topic
            + " (mark 1, reconsumeTimes 1, offsets 0..4) after " + delays + " ms; their 1ST_POP_TIME - first popTime = "
            + firstPopShift + " ms; " + w;
    }

    // ---------------------------------------------------------------- POP-03
    // Java 5.3.3 oracle (2 runs, 2026-12-02): the child JVM pops all 16 3.7-7.8 s after it is spawned; the revive
    // service moves them to %RETRY%<group>_<topic> ~6-7 s after the child's pop (CK TIMER_DELIVER_MS = popTime +
    // 5000 - 1000, rounded down to the timer's 1 s, then the revive service's ~2 s grace); the new consumer's first
    // POP parks for its full pollTime (15 s: V1 retry arrivals wake nobody) and then finds them: all 16 back
    // 16.6 s after the child's pop, 16.5 s after the kill. Whole scenario 22-27 s.
    static Path pop03Dir(Ctx c) {
        return Paths.get(c.stateDir, "pop03-" + c.runId);
    }

    static String pop03(Ctx c) throws Exception {
        String topic = c.name("t");
        String group = c.name("g");
        c.createTopic(topic, 4);
        createGroup(c, group);
        setPop(c, topic, group);
        DefaultMQProducer p = c.producer(c.name("pg"));
        int n = 16;
        List<String> ids = send(p, topic, "pop03", 0, n);
        Path dir = pop03Dir(c);
        Files.createDirectories(dir.resolve("home"));
        Path popped = dir.resolve("popped.tsv");
        Files.deleteIfExists(popped);
        // the child: same classpath and JVM options, its own user.home
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-Duser.home=") && !a.startsWith("-Drocketmq.client.localOffsetStoreDir=")) {
                cmd.add(a);
            }
        }
        cmd.add("-Duser.home=" + dir.resolve("home"));
        cmd.add("-Drocketmq.client.localOffsetStoreDir=" + dir.resolve("home").resolve(".rocketmq_offsets"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("compat.Main");
        Collections.addAll(cmd, "--ns", c.ns, "--broker-addr", c.brokerAddr, "--broker-name", c.brokerName,
            "--run-id", c.runId, "--state-dir", c.stateDir, "--only", "POP-03C");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("child.out").toFile());
        long tSpawn = System.currentTimeMillis();
        Process child = pb.start();
        c.closers.add(child::destroyForcibly);
        boolean popAll = Main.waitFor(() -> lines(popped).size() >= n || !child.isAlive(), 60_000);
        List<String> rows = lines(popped);
        if (!popAll || rows.size() < n) {
            child.destroyForcibly();
            throw new AssertionError("child consumer JVM received " + rows.size() + " of " + n + " within 60 s (alive=" + child.isAlive()
                + "); see " + dir.resolve("child.out"));
        }
        long tChildAll = System.currentTimeMillis();
        child.destroyForcibly(); // SIGKILL: nothing acked, nothing flushed
        child.waitFor(20, TimeUnit.SECONDS);
        long tKill = System.currentTimeMillis();
        Main.check(!child.isAlive(), "child JVM still alive after SIGKILL");
        // uniq -> child's receipt
        Map<String, String[]> childCk = new HashMap<>();
        long maxPopTime = 0;
        long minPopTime = Long.MAX_VALUE;
        for (String r : rows) {
            String[] f = r.split("\t");
            String[] ck = f[1].split(" ");
            Main.check(ck.length == 8 && ck[4].equals("0") && ck[2].equals("5000"), "child receipt " + f[1] + " (want mark 0, invisibleTime 5000)");
            childCk.put(f[0], ck);
            maxPopTime = Math.max(maxPopTime, Long.parseLong(ck[1]));
            minPopTime = Math.min(minPopTime, Long.parseLong(ck[1]));
        }
        Main.check(childCk.keySet().containsAll(ids), "child received other messages than sent: " + childCk.keySet());

        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        Map<String, Long> when = new ConcurrentHashMap<>();
        AtomicInteger deliveries = new AtomicInteger();
        Wire wire = new Wire();
        long tStart = System.currentTimeMillis();
        Main.FIRST_START.set(0);
        popConsumer(c, group, topic, 60_000, 4, wire, (msgs, ctx) -> {
            Main.FIRST_DELIVERY.compareAndSet(0, System.currentTimeMillis());
            for (MessageExt m : msgs) {
                deliveries.incrementAndGet();
                when.putIfAbsent(Main.uniq(m), System.currentTimeMillis());
                got.putIfAbsent(Main.uniq(m), m);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        boolean all = wire.await(() -> got.keySet().containsAll(ids), 60_000);
        long tAll = System.currentTimeMillis();
        wire.save(c, "consumer2");
        if (!all) {
            TreeSet<String> missing = new TreeSet<>(ids);
            missing.removeAll(got.keySet());
            throw new AssertionError(missing.size() + " of " + n + " popped by the killed consumer never came back within 60 s ("
                + Main.first(missing, 3) + "); " + wire.summary() + " answers " + new TreeMap<>(wire.answers));
        }
        Thread.sleep(2000);
        String w = expectPopWire(wire, topic); // first: a client left on PULL fails with the clearest reason
        Main.check(deliveries.get() == n, "new consumer got " + deliveries.get() + " deliveries of " + n + " messages (duplicates)");
        long firstBack = Long.MAX_VALUE;
        long lastBack = 0;
        for (String u : ids) {
            MessageExt m = got.get(u);
            String[] ck = childCk.get(u);
            long pt = Long.parseLong(ck[1]);
            checkReceipt(c, m, topic, "1", 60_000, tStart);
            Main.check(m.getReconsumeTimes() == 1, u + " reconsumeTimes " + m.getReconsumeTimes() + " after one revive, want 1");
            // the revive service sets 1ST_POP_TIME to the checkpoint's popTime (the killed consumer's pop)
            Main.check(Long.toString(pt).equals(m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME)),
                u + " 1ST_POP_TIME " + m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) + ", want the killed consumer's popTime " + pt);
            long back = when.get(u);
            // invisible for 5 s after the pop (Java: the CK's timer fires at popTime + invisibleTime - 1 s, the revive
            // service waits until ~2 s past popTime + invisibleTime)
            Main.check(back >= pt + 4_950, u + " redelivered " + (back - pt) + " ms after its pop, before its invisibleTime 5000 ms");
            firstBack = Math.min(firstBack, back - pt);
            lastBack = Math.max(lastBack, back - pt);
        }
        checkRetryOffsets(got.values(), n);
        return n + " popped by child JVM (start->all popped " + (tChildAll - tSpawn) + " ms), SIGKILL, all " + n
            + " back on a new consumer from retry offsets 0..15, mark 1, reconsumeTimes 1, 1ST_POP_TIME = child popTime; back after pop: "
            + firstBack + ".." + lastBack + " ms (it 5000); after kill: " + (tAll - tKill) + " ms; " + w;
    }

    static List<String> lines(Path p) {
        try {
            if (!Files.exists(p)) {
                return Collections.emptyList();
            }
            List<String> l = new ArrayList<>();
            for (String s : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                if (s.endsWith("\t.")) { // complete rows only
                    l.add(s);
                }
            }
            return l;
        } catch (Exception e) {
            return Collections.emptyList();
        }
    }

    /** POP-03 child: pop with invisibleTime 5000 (the client's minimum), write each receipt down, never return. */
    static String pop03child(Ctx c) throws Exception {
        String topic = "POP03_" + c.runId + "_t";
        String group = "POP03_" + c.runId + "_g";
        Path popped = pop03Dir(c).resolve("popped.tsv");
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(new FileOutputStream(popped.toFile(), true), StandardCharsets.UTF_8)));
        Object lock = new Object();
        popConsumer(c, group, topic, 5_000, 32, null, (msgs, ctx) -> {
            synchronized (lock) {
                for (MessageExt m : msgs) {
                    out.print(Main.uniq(m) + "\t" + m.getProperty(MessageConst.PROPERTY_POP_CK) + "\t" + System.currentTimeMillis() + "\t.\n");
                }
                out.flush();
            }
            try {
                Thread.sleep(3_600_000); // never acks; killed by POP-03
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        Thread.sleep(280_000);
        return "not killed";
    }

    // ---------------------------------------------------------------- POP-05
    static String pop05(Ctx c) throws Exception {
        String topic = c.name("t");
        String group = c.name("g");
        createGroup(c, group);
        int unknown = refusal(c, topic + "_absent", group);
        Main.check(unknown == 17, "SET_MESSAGE_REQUEST_MODE for an unknown topic: " + (unknown == 0 ? "succeeded" : "code " + unknown) + ", want 17 TOPIC_NOT_EXIST");
        int retry = refusal(c, "%RETRY%" + group, group);
        Main.check(retry == 16, "SET_MESSAGE_REQUEST_MODE for a %RETRY% topic: " + (retry == 0 ? "succeeded" : "code " + retry) + ", want 16 NO_PERMISSION");
        return "unknown topic -> 17, %RETRY% topic -> 16";
    }

    /** @return 0 when SET_MESSAGE_REQUEST_MODE (POP) succeeded, else the broker's response code */
    static int refusal(Ctx c, String topic, String group) throws Exception {
        try {
            c.admin().setMessageRequestMode(c.brokerAddr, topic, group, MessageRequestMode.POP, 0, 5000);
            return 0;
        } catch (MQClientException e) { // DefaultMQAdminExt wraps the broker's answer: CODE: <n>
            Main.check(e.getResponseCode() > 0, "no response code in " + e);
            return e.getResponseCode();
        } catch (MQBrokerException e) {
            return e.getResponseCode();
        }
    }

    private Pop() {
    }
}
