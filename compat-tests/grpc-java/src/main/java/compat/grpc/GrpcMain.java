package compat.grpc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.RecallReceipt;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

/**
 * Scenarios of the compat suite "grpc" (compat-tests/suites/grpc.sh): the gRPC Java client rocketmq-client-java
 * 5.2.0 against the real rocketmq-proxy 5.3.3 (cluster mode) in front of the broker under test.
 * Topics and groups are created by the suite with mqadmin before this runs; names are
 * GRPC_<id>_<runId>_t / _g (id without the GRPC- prefix, e.g. J01).
 * Prints one JSON line per scenario: {"id","client","status","ms","detail"}.
 * Args: --endpoint 127.0.0.1:18081 --run-id X --only GRPC-J01,... --state-dir DIR
 */
public final class GrpcMain {
    static final String CLIENT = "grpcjava-5.2.0";
    static String endpoint = "127.0.0.1:18081";
    static String runId = "r";
    static Path stateDir = Path.of(".");
    static final ClientServiceProvider P = ClientServiceProvider.loadService();

    interface Scenario {
        String run() throws Exception;
    }

    static final class Fail extends Exception {
        Fail(String m) {
            super(m);
        }
    }

    static void check(boolean ok, String what) throws Fail {
        if (!ok) throw new Fail(what);
    }

    static String topic(String id) {
        return "GRPC_" + id + "_" + runId + "_t";
    }

    static String group(String id) {
        return "GRPC_" + id + "_" + runId + "_g";
    }

    static ClientConfiguration conf() {
        return ClientConfiguration.newBuilder().setEndpoints(endpoint).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
    }

    static Producer producer(String... topics) throws Exception {
        return P.newProducerBuilder().setClientConfiguration(conf()).setTopics(topics).build();
    }

    static SimpleConsumer simple(String id) throws Exception {
        return P.newSimpleConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group(id))
            .setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Map.of(topic(id), FilterExpression.SUB_ALL)).build();
    }

    static String body(MessageView m) {
        byte[] b = new byte[m.getBody().remaining()];
        m.getBody().duplicate().get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A receive loop on its own thread, started before anything is sent. Nothing waits for its first pop: the proxy pops
     *  with initMode MAX, and a new group starts a queue at 0 while the queue's first message is in memory (Java
     *  getInitOffset with initPopOffsetByCheckMsgInMem, the default; rmqd the same), so what was sent is delivered. */
    static final class Receiver implements AutoCloseable {
        final SimpleConsumer c;
        final List<MessageView> got = new CopyOnWriteArrayList<>();
        final List<Long> at = new CopyOnWriteArrayList<>();
        final AtomicBoolean stop = new AtomicBoolean();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final ExecutorService ex = Executors.newSingleThreadExecutor();
        final Future<?> f;
        volatile boolean autoAck = true;
        volatile int polls;
        final Duration invisible;

        Receiver(SimpleConsumer c, Duration invisible) {
            this.c = c;
            this.invisible = invisible;
            f = ex.submit(this::loop);
        }

        void loop() {
            while (!stop.get()) {
                try {
                    List<MessageView> l = c.receive(16, invisible);
                    polls++;
                    for (MessageView m : l) {
                        long now = System.currentTimeMillis();
                        got.add(m);
                        at.add(now);
                        if (autoAck) c.ack(m);
                    }
                } catch (Exception e) {
                    polls++;
                    String s = e.toString();
                    if (errors.size() < 5) errors.add(s.length() > 200 ? s.substring(0, 200) : s);
                    sleep(200);
                }
            }
        }

        boolean awaitCount(int n, long ms) {
            long end = System.currentTimeMillis() + ms;
            while (got.size() < n && System.currentTimeMillis() < end) sleep(50);
            return got.size() >= n;
        }

        @Override
        public void close() throws IOException {
            stop.set(true);
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (Exception ignored) {
            }
            ex.shutdownNow();
            c.close();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Map<String, Integer> countBodies(List<MessageView> l) {
        Map<String, Integer> m = new HashMap<>();
        for (MessageView v : l) m.merge(body(v), 1, Integer::sum);
        return m;
    }

    // ------------------------------------------------------------------------------------------- scenarios

    /** normal send (tag, keys, user property) + SimpleConsumer receive/ack, each exactly once, fields kept */
    static String j01() throws Exception {
        String id = "J01", t = topic(id);
        int n = 20;
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30)); Producer p = producer(t)) {
            long t0 = System.currentTimeMillis();
            Map<String, String> ids = new HashMap<>();
            for (int i = 0; i < n; i++) {
                Message m = P.newMessageBuilder().setTopic(t).setTag("TagA").setKeys("k" + i, "kk" + i)
                    .addProperty("user-prop", "v" + i + "-\u00e9\u4e2d").setBody(("j01-" + i).getBytes(StandardCharsets.UTF_8)).build();
                SendReceipt rc = p.send(m);
                ids.put("j01-" + i, rc.getMessageId().toString());
            }
            check(r.awaitCount(n, 30000), "received " + r.got.size() + "/" + n + " errors=" + r.errors);
            sleep(1000);
            Map<String, Integer> c = countBodies(r.got);
            check(c.size() == n && c.values().stream().allMatch(x -> x == 1), "not exactly once: " + c);
            for (MessageView v : r.got) {
                String b = body(v);
                int i = Integer.parseInt(b.substring(4));
                check(v.getTopic().equals(t), "topic " + v.getTopic());
                check(v.getTag().orElse("").equals("TagA"), "tag of " + b + ": " + v.getTag());
                check(v.getKeys().containsAll(List.of("k" + i, "kk" + i)), "keys of " + b + ": " + v.getKeys());
                check(("v" + i + "-\u00e9\u4e2d").equals(v.getProperties().get("user-prop")), "user property of " + b + ": " + v.getProperties());
                check(v.getMessageId().toString().equals(ids.get(b)), "message id of " + b + ": " + v.getMessageId() + " != sent " + ids.get(b));
                check(v.getDeliveryAttempt() == 1, "deliveryAttempt of " + b + " = " + v.getDeliveryAttempt());
                check(v.getMessageGroup().isEmpty() && v.getDeliveryTimestamp().isEmpty(), "normal message has group/delivery time");
            }
            return n + " sent and received once each (tag, keys, user property, message id, attempt 1); first=" + (r.at.get(0) - t0) + "ms";
        }
    }

    /** FIFO topic, orderly group: 3 message groups x 8, each group received in send order, exactly once */
    static String j02() throws Exception {
        String id = "J02", t = topic(id);
        int groups = 3, per = 8;
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30)); Producer p = producer(t)) {
            long t0 = System.currentTimeMillis();
            for (int i = 0; i < per; i++) {
                for (int g = 0; g < groups; g++) {
                    p.send(P.newMessageBuilder().setTopic(t).setTag("fifo").setMessageGroup("mg" + g)
                        .setBody(("mg" + g + "-" + i).getBytes(StandardCharsets.UTF_8)).build());
                }
            }
            check(r.awaitCount(groups * per, 40000), "received " + r.got.size() + "/" + groups * per + " errors=" + r.errors);
            sleep(1000);
            Map<String, Integer> c = countBodies(r.got);
            check(c.size() == groups * per && c.values().stream().allMatch(x -> x == 1), "not exactly once: " + c);
            Map<String, List<Integer>> order = new LinkedHashMap<>();
            for (MessageView v : r.got) {
                String b = body(v);
                check(v.getMessageGroup().orElse("").equals(b.substring(0, 3)), "message group of " + b + ": " + v.getMessageGroup());
                order.computeIfAbsent(b.substring(0, 3), k -> new ArrayList<>()).add(Integer.parseInt(b.substring(4)));
            }
            for (Map.Entry<String, List<Integer>> e : order.entrySet()) {
                List<Integer> s = new ArrayList<>(e.getValue());
                Collections.sort(s);
                check(s.equals(e.getValue()), "group " + e.getKey() + " out of order: " + e.getValue());
            }
            return groups + " message groups x " + per + ": each in send order, exactly once; first=" + (r.at.get(0) - t0) + "ms";
        }
    }

    /** delay (deliveryTimestamp now+3 s): none delivered before its time, all within 15 s after it */
    static String j03() throws Exception {
        String id = "J03", t = topic(id);
        int n = 5;
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30)); Producer p = producer(t)) {
            Map<String, Long> due = new HashMap<>();
            for (int i = 0; i < n; i++) {
                long ts = System.currentTimeMillis() + 3000 + i * 500L;
                String b = "j03-" + i;
                due.put(b, ts);
                p.send(P.newMessageBuilder().setTopic(t).setDeliveryTimestamp(ts).setBody(b.getBytes(StandardCharsets.UTF_8)).build());
            }
            check(r.awaitCount(n, 30000), "received " + r.got.size() + "/" + n + " errors=" + r.errors);
            sleep(500);
            check(r.got.size() == n, "received " + r.got.size() + " (duplicates?)");
            long maxLate = 0;
            for (int i = 0; i < r.got.size(); i++) {
                MessageView v = r.got.get(i);
                long d = due.get(body(v)), a = r.at.get(i);
                check(v.getDeliveryTimestamp().orElse(0L) == d, "deliveryTimestamp of " + body(v) + ": " + v.getDeliveryTimestamp() + " != " + d);
                check(a >= d - 50, body(v) + " delivered " + (d - a) + " ms before its delivery time");
                check(a <= d + 15000, body(v) + " delivered " + (a - d) + " ms after its delivery time");
                maxLate = Math.max(maxLate, a - d);
            }
            return n + " delayed 3-5 s, none early, latest " + maxLate + " ms after its time";
        }
    }

    /** recall (5.3.2+): the receipt of a delay message carries a recall handle; Producer.recallMessage through the proxy
     *  (RECALL_MESSAGE 370 to the broker) and the message never comes, while its twin for the same time does */
    static String j09() throws Exception {
        String id = "J09", t = topic(id);
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30)); Producer p = producer(t)) {
            long ts = System.currentTimeMillis() + 5000;
            SendReceipt recalled = p.send(P.newMessageBuilder().setTopic(t).setDeliveryTimestamp(ts)
                .setBody("j09-recalled".getBytes(StandardCharsets.UTF_8)).build());
            p.send(P.newMessageBuilder().setTopic(t).setDeliveryTimestamp(ts).setBody("j09-kept".getBytes(StandardCharsets.UTF_8)).build());
            String handle = recalled.getRecallHandle();
            check(handle != null && !handle.isEmpty(), "the delay message's receipt has no recall handle");
            RecallReceipt rr = p.recallMessage(t, handle);
            check(rr.getMessageId().toString().equals(recalled.getMessageId().toString()),
                "recall answered " + rr.getMessageId() + ", sent " + recalled.getMessageId());
            check(r.awaitCount(1, 30000), "the message not recalled did not come; errors=" + r.errors);
            long late = r.at.get(0) - ts;
            // both share one timer slot: the recalled one would come in the same pass; a receive round is margin
            sleep(3000);
            check(r.got.size() == 1 && body(r.got.get(0)).equals("j09-kept"), "received " + r.got.size() + ": "
                + (r.got.isEmpty() ? "" : body(r.got.get(r.got.size() - 1))));
            return "recalled delay message never came; its twin " + late + " ms after its time";
        }
    }

    /** transaction: commit delivered, rollback not, an open one resolved COMMIT by the check-back through the proxy */
    static String j04() throws Exception {
        String id = "J04", t = topic(id);
        ConcurrentHashMap<String, Integer> checks = new ConcurrentHashMap<>();
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30));
             Producer p = P.newProducerBuilder().setClientConfiguration(conf()).setTopics(t)
                 .setTransactionChecker(mv -> {
                     checks.merge(body(mv), 1, Integer::sum);
                     return body(mv).startsWith("j04-check") ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
                 }).build()) {
            Transaction tc = p.beginTransaction();
            p.send(P.newMessageBuilder().setTopic(t).setBody("j04-commit".getBytes(StandardCharsets.UTF_8)).build(), tc);
            tc.commit();
            Transaction tr = p.beginTransaction();
            p.send(P.newMessageBuilder().setTopic(t).setBody("j04-rollback".getBytes(StandardCharsets.UTF_8)).build(), tr);
            tr.rollback();
            sleep(2500); // the proxy heartbeats the producer group (the topic) to the broker every 2 s (proxy config)
            Transaction to = p.beginTransaction();
            long tOpen = System.currentTimeMillis();
            p.send(P.newMessageBuilder().setTopic(t).setBody("j04-check".getBytes(StandardCharsets.UTF_8)).build(), to);
            // no commit/rollback: the broker's check (transactionCheckInterval 2 s) reaches the checker via the proxy
            check(r.awaitCount(2, 40000), "received " + countBodies(r.got) + " checks=" + checks + " errors=" + r.errors);
            long checkedAt = 0;
            for (int i = 0; i < r.got.size(); i++) if (checkedAt == 0 && body(r.got.get(i)).equals("j04-check")) checkedAt = r.at.get(i);
            sleep(3000);
            Map<String, Integer> c = countBodies(r.got);
            // each check-back answered COMMIT may commit its own copy of the half message (the broker puts the half
            // message back before each check): the checked one arrives once per check at most
            int nc = checks.getOrDefault("j04-check", 0);
            check(c.size() == 2 && c.getOrDefault("j04-commit", 0) == 1 && c.getOrDefault("j04-check", 0) >= 1
                && c.get("j04-check") <= nc, "delivered " + c + ", checks " + checks
                + " (want commit once, check at least once and not more often than checked, no rollback)");
            return "commit delivered, rollback not, open one checked " + nc + "x and committed (delivered " + c.get("j04-check")
                + "x, first " + (checkedAt - tOpen) + " ms after its half send); checker calls " + checks;
        }
    }

    /** changeInvisibleDuration: received, invisible time changed to 3 s, redelivered (attempt 2) not before that */
    static String j05() throws Exception {
        String id = "J05", t = topic(id);
        int n = 3;
        SimpleConsumer c = simple(id);
        try (Producer p = producer(t)) {
            for (int i = 0; i < n; i++) {
                p.send(P.newMessageBuilder().setTopic(t).setKeys("j05").setBody(("j05-" + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            List<MessageView> first = new ArrayList<>();
            long end = System.currentTimeMillis() + 30000;
            while (first.size() < n && System.currentTimeMillis() < end) first.addAll(c.receive(16, Duration.ofSeconds(30)));
            check(first.size() == n, "first receive got " + first.size() + "/" + n);
            Map<String, Long> changedAt = new HashMap<>();
            for (MessageView v : first) {
                c.changeInvisibleDuration(v, Duration.ofSeconds(3));
                changedAt.put(body(v), System.currentTimeMillis());
            }
            Map<String, Long> back = new HashMap<>();
            List<String> bad = new ArrayList<>();
            end = System.currentTimeMillis() + 40000;
            while (back.size() < n && System.currentTimeMillis() < end) {
                for (MessageView v : c.receive(16, Duration.ofSeconds(30))) {
                    long now = System.currentTimeMillis();
                    String b = body(v);
                    if (back.containsKey(b)) bad.add("dup " + b);
                    back.put(b, now - changedAt.getOrDefault(b, now));
                    if (v.getDeliveryAttempt() != 2) bad.add(b + " attempt " + v.getDeliveryAttempt());
                    if (!"j05".equals(String.join(",", v.getKeys()))) bad.add(b + " keys " + v.getKeys());
                    c.ack(v);
                }
            }
            check(back.size() == n, "redelivered " + back.keySet() + " of " + n);
            check(bad.isEmpty(), String.join("; ", bad));
            long min = Collections.min(back.values()), max = Collections.max(back.values());
            check(min >= 2900, "redelivered " + min + " ms after changeInvisibleDuration(3 s)");
            return n + " back once each with deliveryAttempt 2, " + min + "-" + max + " ms after changeInvisibleDuration(3 s)";
        } finally {
            c.close();
        }
    }

    /** PushConsumer: 30 messages consumed once each through the push consumer (proxy assignment + receive + ack) */
    static String j06() throws Exception {
        String id = "J06", t = topic(id);
        int n = 30;
        ConcurrentHashMap<String, Integer> got = new ConcurrentHashMap<>();
        List<Long> firstAt = new CopyOnWriteArrayList<>();
        try (PushConsumer pc = P.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group(id))
                 .setSubscriptionExpressions(Map.of(t, new FilterExpression("TagA||TagB", FilterExpressionType.TAG)))
                 .setMessageListener(mv -> {
                     if (firstAt.isEmpty()) firstAt.add(System.currentTimeMillis());
                     got.merge(body(mv), 1, Integer::sum);
                     return ConsumeResult.SUCCESS;
                 }).build();
             Producer p = producer(t)) {
            sleep(3000); // assignments + first long polls
            long t0 = System.currentTimeMillis();
            for (int i = 0; i < n; i++) {
                p.send(P.newMessageBuilder().setTopic(t).setTag(i % 3 == 2 ? "TagC" : (i % 2 == 0 ? "TagA" : "TagB"))
                    .setBody(("j06-" + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            int want = 0;
            for (int i = 0; i < n; i++) if (i % 3 != 2) want++;
            long end = System.currentTimeMillis() + 30000;
            while (got.size() < want && System.currentTimeMillis() < end) sleep(50);
            long all = System.currentTimeMillis() - t0;
            sleep(2000);
            check(got.size() == want, "consumed " + got.size() + "/" + want + " distinct: " + got.keySet());
            check(got.values().stream().allMatch(x -> x == 1), "duplicates: " + got);
            check(got.keySet().stream().noneMatch(b -> Integer.parseInt(b.substring(4)) % 3 == 2), "TagC delivered: " + got.keySet());
            return want + " of " + n + " (tag filter TagA||TagB) consumed once each, all within " + all + " ms; first="
                + (firstAt.get(0) - t0) + "ms";
        }
    }

    /** maxAttempts -> DLQ: group retryMaxTimes 1 (maxAttempts 2); a push consumer answers FAILURE: attempts 1 and 2,
     *  then the proxy, popping the message a third time (reconsumeTimes >= maxAttempts), forwards it to %DLQ%<group>
     *  (CONSUMER_SEND_MSG_BACK) and acks it. The consumer stays up until the suite, polling mqadmin queryMsgByKey,
     *  found every message id in the DLQ (it writes grpc-J07-dlq.done in the state dir). */
    static String j07() throws Exception {
        String id = "J07", t = topic(id);
        int n = 3;
        ConcurrentHashMap<String, List<Integer>> attempts = new ConcurrentHashMap<>();
        ConcurrentHashMap<String, List<Long>> times = new ConcurrentHashMap<>();
        Path done = stateDir.resolve("grpc-J07-dlq.done");
        Files.deleteIfExists(done);
        try (PushConsumer pc = P.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group(id))
                 .setSubscriptionExpressions(Map.of(t, FilterExpression.SUB_ALL))
                 .setMessageListener(mv -> {
                     attempts.computeIfAbsent(body(mv), k -> new CopyOnWriteArrayList<>()).add(mv.getDeliveryAttempt());
                     times.computeIfAbsent(body(mv), k -> new CopyOnWriteArrayList<>()).add(System.currentTimeMillis());
                     return ConsumeResult.FAILURE;
                 }).build();
             Producer p = producer(t)) {
            sleep(3000);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ids.add(p.send(P.newMessageBuilder().setTopic(t).setKeys("j07key" + runId)
                    .setBody(("j07-" + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString());
            }
            Files.writeString(stateDir.resolve("grpc-J07-ids.txt"), String.join("\n", ids) + "\n");
            long end = System.currentTimeMillis() + 45000;
            while (System.currentTimeMillis() < end
                && !(attempts.size() == n && attempts.values().stream().allMatch(l -> l.size() >= 2))) sleep(100);
            long attemptsDone = System.currentTimeMillis();
            Files.writeString(stateDir.resolve("grpc-J07-attempts.done"), "");
            end = System.currentTimeMillis() + 60000;
            while (!Files.exists(done) && System.currentTimeMillis() < end) sleep(200);
            long dlqAfter = System.currentTimeMillis() - attemptsDone;
            check(attempts.size() == n, "delivered " + attempts.keySet());
            for (Map.Entry<String, List<Integer>> e : attempts.entrySet()) {
                check(e.getValue().equals(List.of(1, 2)), e.getKey() + " attempts " + e.getValue() + " (want [1, 2])");
            }
            long gap = 0;
            for (List<Long> l : times.values()) gap = Math.max(gap, l.get(1) - l.get(0));
            return n + " messages delivered with attempts [1, 2] each (second attempt up to " + gap
                + " ms after the first), no third; the DLQ check ended " + dlqAfter + " ms after the last attempt";
        }
    }

    /** the enableBatchAck proxy: receive + ack 20 (the suite checks that the broker saw BATCH_ACK_MESSAGE, no ACK_MESSAGE) */
    static String j08() throws Exception {
        String id = "J08", t = topic(id);
        int n = 20;
        try (Receiver r = new Receiver(simple(id), Duration.ofSeconds(30)); Producer p = producer(t)) {
            for (int i = 0; i < n; i++) {
                p.send(P.newMessageBuilder().setTopic(t).setBody(("j08-" + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            check(r.awaitCount(n, 30000), "received " + r.got.size() + "/" + n + " errors=" + r.errors);
            sleep(1000);
            Map<String, Integer> c = countBodies(r.got);
            check(c.size() == n && c.values().stream().allMatch(x -> x == 1), "not exactly once: " + c);
            check(r.errors.isEmpty(), "errors " + r.errors);
            return n + " received and acked once each through the enableBatchAck proxy";
        }
    }

    public static void main(String[] args) throws Exception {
        String only = "";
        for (int i = 0; i < args.length - 1; i++) {
            switch (args[i]) {
                case "--endpoint": endpoint = args[++i]; break;
                case "--run-id": runId = args[++i]; break;
                case "--only": only = args[++i]; break;
                case "--state-dir": stateDir = Path.of(args[++i]); break;
                default: break;
            }
        }
        Files.createDirectories(stateDir);
        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("GRPC-J01", GrpcMain::j01);
        all.put("GRPC-J02", GrpcMain::j02);
        all.put("GRPC-J03", GrpcMain::j03);
        all.put("GRPC-J04", GrpcMain::j04);
        all.put("GRPC-J05", GrpcMain::j05);
        all.put("GRPC-J06", GrpcMain::j06);
        all.put("GRPC-J07", GrpcMain::j07);
        all.put("GRPC-J08", GrpcMain::j08);
        all.put("GRPC-J09", GrpcMain::j09);
        for (String id : only.split(",")) {
            Scenario s = all.get(id.trim());
            if (s == null) {
                emit(id, "FAIL", 0, "unknown scenario id");
                continue;
            }
            long t0 = System.currentTimeMillis();
            ExecutorService one = Executors.newSingleThreadExecutor();
            try {
                String d = one.submit(s::run).get(90, TimeUnit.SECONDS);
                emit(id, "PASS", System.currentTimeMillis() - t0, d);
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable c = e.getCause();
                emit(id, "FAIL", System.currentTimeMillis() - t0, c instanceof Fail ? c.getMessage() : c.toString());
            } catch (java.util.concurrent.TimeoutException e) {
                emit(id, "FAIL", System.currentTimeMillis() - t0, "timeout 90 s");
            } finally {
                one.shutdownNow();
            }
        }
        System.exit(0);
    }

    static void emit(String id, String status, long ms, String detail) {
        System.out.println("{\"id\":\"" + id + "\",\"client\":\"" + CLIENT + "\",\"status\":\"" + status + "\",\"ms\":" + ms
            + ",\"detail\":\"" + json(detail) + "\"}");
        System.out.flush();
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(' ');
            else b.append(ch);
        }
        return b.toString();
    }
}
