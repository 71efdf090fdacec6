// Java side of X02 (Go <-> Java interop), run with the JDK single-file launcher against the compat classpath:
//   java -cp "$(compat_cp)" compat-tests/go/x02/JavaSide.java produce --ns A --topic T --n N --tag A --keys k{i} --prop a=1
//   java -cp "$(compat_cp)" compat-tests/go/x02/JavaSide.java consume --ns A --topic T --group G --expect N --timeout 60
// Prints the same JSON lines as `compat-go produce|consume` (event sent|recv|done), with "client":"java".
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

public class JavaSide {
    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String map(Map<String, String> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, String> e : new TreeMap<>(m).entrySet()) {
            if (b.length() > 1) b.append(',');
            b.append(q(e.getKey())).append(':').append(q(e.getValue()));
        }
        return b.append('}').toString();
    }

    static Map<String, String> props(String s) {
        Map<String, String> m = new LinkedHashMap<>();
        if (s == null || s.isEmpty()) return m;
        for (String kv : s.split(",")) {
            int i = kv.indexOf('=');
            if (i > 0) m.put(kv.substring(0, i), kv.substring(i + 1));
        }
        return m;
    }

    public static void main(String[] a) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < a.length; i++) {
            if (a[i].startsWith("--")) o.put(a[i].substring(2), i + 1 < a.length ? a[++i] : "");
        }
        String ns = o.getOrDefault("ns", "127.0.0.1:9876"), topic = o.get("topic");
        String runId = o.getOrDefault("run-id", String.valueOf(System.currentTimeMillis()));
        long t0 = System.currentTimeMillis();
        if ("produce".equals(a[0])) {
            int n = Integer.parseInt(o.getOrDefault("n", "10"));
            String tag = o.getOrDefault("tag", ""), keys = o.getOrDefault("keys", ""), pr = o.getOrDefault("prop", "");
            String prefix = o.getOrDefault("body-prefix", "java-body");
            DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "PGJ_" + topic));
            p.setNamesrvAddr(ns);
            p.setInstanceName("x02j_" + runId);
            p.start(); // producer start does not contact the NameServer; sends are retried below
            int sent = 0;
            try {
                for (int i = 0; i < n; i++) {
                    String is = String.valueOf(i);
                    String body = prefix + "-" + i;
                    Message m = new Message(topic, tag.isEmpty() ? null : tag, body.getBytes(StandardCharsets.UTF_8));
                    if (!keys.isEmpty()) m.setKeys(Arrays.asList(keys.replace("{i}", is).split(",")));
                    Map<String, String> up = props(pr.replace("{i}", is));
                    up.forEach(m::putUserProperty);
                    long before = System.currentTimeMillis();
                    SendResult r = null;
                    for (int attempt = 1; ; attempt++) { // same Message object => same UNIQ_KEY on retry (consumers dedup)
                        try { r = p.send(m, 10_000); break; } catch (Exception e) { if (attempt >= 3) throw e; Thread.sleep(500); }
                    }
                    long after = System.currentTimeMillis();
                    if (r.getSendStatus() != SendStatus.SEND_OK) throw new IllegalStateException("status " + r.getSendStatus());
                    sent++;
                    System.out.println("{\"event\":\"sent\",\"client\":\"java\",\"idx\":" + i + ",\"topic\":" + q(topic)
                        + ",\"tags\":" + q(tag) + ",\"keys\":" + q(m.getKeys() == null ? "" : m.getKeys()) + ",\"props\":" + map(up)
                        + ",\"msgId\":" + q(r.getMsgId()) + ",\"offsetMsgId\":" + q(r.getOffsetMsgId())
                        + ",\"brokerName\":" + q(r.getMessageQueue().getBrokerName()) + ",\"queueId\":" + r.getMessageQueue().getQueueId()
                        + ",\"queueOffset\":" + r.getQueueOffset() + ",\"bornTimestampMin\":" + before + ",\"bornTimestampMax\":" + after
                        + ",\"body\":" + q(body) + ",\"bodyLen\":" + body.length() + "}");
                }
                System.out.println("{\"event\":\"done\",\"client\":\"java\",\"role\":\"produce\",\"topic\":" + q(topic) + ",\"sent\":" + sent
                    + ",\"expected\":" + n + ",\"status\":\"PASS\",\"ms\":" + (System.currentTimeMillis() - t0) + "}");
            } catch (Exception e) {
                System.out.println("{\"event\":\"done\",\"client\":\"java\",\"role\":\"produce\",\"topic\":" + q(topic) + ",\"sent\":" + sent
                    + ",\"expected\":" + n + ",\"status\":\"FAIL\",\"ms\":" + (System.currentTimeMillis() - t0) + ",\"error\":" + q(e.toString()) + "}");
                System.exit(1);
            } finally {
                p.shutdown();
            }
            System.exit(0);
        } else if ("consume".equals(a[0])) {
            String group = o.get("group");
            int expect = Integer.parseInt(o.getOrDefault("expect", "1"));
            long timeout = Long.parseLong(o.getOrDefault("timeout", "60")) * 1000;
            Set<String> seen = ConcurrentHashMap.newKeySet();
            Object lock = new Object();
            DefaultMQPushConsumer c = null;
            for (int attempt = 1; ; attempt++) { // a loaded box can make the first NameServer call fail: retry start
                c = new DefaultMQPushConsumer(group);
                c.setNamesrvAddr(ns);
                c.setInstanceName("x02j_" + runId);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                c.subscribe(topic, o.getOrDefault("tag", "*"));
                c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        String u = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
                        if (u == null) u = m.getMsgId();
                        if (!seen.add(u)) continue;
                        Map<String, String> user = new TreeMap<>(), sys = new TreeMap<>();
                        for (Map.Entry<String, String> e : m.getProperties().entrySet()) {
                            if (MessageConst.STRING_HASH_SET.contains(e.getKey())) sys.put(e.getKey(), e.getValue());
                            else user.put(e.getKey(), e.getValue());
                        }
                        String body = new String(m.getBody(), StandardCharsets.UTF_8);
                        synchronized (lock) {
                            System.out.println("{\"event\":\"recv\",\"client\":\"java\",\"topic\":" + q(m.getTopic()) + ",\"msgId\":" + q(u)
                                + ",\"offsetMsgId\":" + q(m.getMsgId().equals(u) ? null : m.getMsgId())
                                + ",\"brokerName\":" + q(m.getBrokerName()) + ",\"queueId\":" + m.getQueueId() + ",\"queueOffset\":" + m.getQueueOffset()
                                + ",\"tags\":" + q(m.getTags() == null ? "" : m.getTags()) + ",\"keys\":" + q(m.getKeys() == null ? "" : m.getKeys())
                                + ",\"props\":" + map(user) + ",\"sysProps\":" + map(sys)
                                + ",\"bornTimestamp\":" + m.getBornTimestamp() + ",\"bornHost\":" + q(String.valueOf(m.getBornHost()))
                                + ",\"storeTimestamp\":" + m.getStoreTimestamp() + ",\"storeHost\":" + q(String.valueOf(m.getStoreHost()))
                                + ",\"reconsumeTimes\":" + m.getReconsumeTimes() + ",\"body\":" + q(body) + ",\"bodyLen\":" + m.getBody().length + "}");
                            lock.notifyAll();
                        }
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                try { c.start(); break; } catch (Exception e) {
                    c.shutdown();
                    if (attempt >= 3) throw e;
                    System.err.println("consumer start failed (attempt " + attempt + "): " + e);
                    Thread.sleep(1000);
                }
            }
            long end = System.currentTimeMillis() + timeout;
            String untilFile = o.get("until-file");
            String st;
            if (untilFile != null) { // X01 mode: run until the driver creates the file; report owned queues on change
                String last = "";
                boolean appeared = false;
                while (System.currentTimeMillis() < end) {
                    if (new java.io.File(untilFile).exists()) { appeared = true; break; }
                    TreeSet<Integer> qs = new TreeSet<>();
                    for (org.apache.rocketmq.common.message.MessageQueue mq
                        : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()) {
                        if (mq.getTopic().equals(topic)) qs.add(mq.getQueueId());
                    }
                    String cur = qs.toString().replace(" ", "");
                    if (!cur.equals(last)) {
                        last = cur;
                        synchronized (lock) {
                            System.out.println("{\"event\":\"queues\",\"client\":\"java\",\"topic\":" + q(topic) + ",\"queues\":" + cur
                                + ",\"ms\":" + (System.currentTimeMillis() - t0) + "}");
                        }
                    }
                    Thread.sleep(100);
                }
                c.shutdown();
                st = appeared ? "PASS" : "FAIL";
            } else {
                synchronized (lock) {
                    while (seen.size() < expect && System.currentTimeMillis() < end) lock.wait(200);
                }
                if (seen.size() >= expect) Thread.sleep(1000);
                c.shutdown();
                st = seen.size() == expect ? "PASS" : "FAIL";
            }
            System.out.println("{\"event\":\"done\",\"client\":\"java\",\"role\":\"consume\",\"topic\":" + q(topic) + ",\"group\":" + q(group)
                + ",\"received\":" + seen.size() + ",\"expected\":" + expect + ",\"status\":\"" + st + "\",\"ms\":" + (System.currentTimeMillis() - t0) + "}");
            System.exit("PASS".equals(st) ? 0 : 1);
        }
        System.err.println("usage: JavaSide produce|consume --ns .. --topic ..");
        System.exit(2);
    }
}
