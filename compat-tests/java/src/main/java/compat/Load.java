package compat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Issue 6: load from the REAL RocketMQ Java client, for brokers side by side (scripts/bench, phase C).
 *
 * The official benchmark.Producer / benchmark.Consumer (rocketmq-example) are not served by the Maven mirror this
 * project builds from, so this is our own driver with the same knobs: DefaultMQProducer over the NameServer route,
 * sync sends from N threads, async sends with a bounded window, batches of B messages, optional keys and tags; a
 * DefaultMQPushConsumer (fresh group, from the first offset) consumes everything in the same JVM.
 *
 * Usage: compat.Load --ns H:P --topic T [--mode sync|async|batch] [--size 1024] [--threads 16] [--window 128]
 *        [--batch 16] [--keys] [--tags N] [--duration 10] [--warmup 3] [--drain-timeout 60] [--broker-pid PID]
 *
 * Each message body starts with the send time (System.nanoTime, 8 bytes) and a sequence number (8 bytes; -1 for
 * warm-up messages). Only messages sent in the measured window count: send RTT (per send call, so per batch),
 * end-to-end latency (send → listener), and sent vs consumed (distinct sequence numbers; a difference fails the
 * run). With --broker-pid, the broker's utime+stime over the measured window and its drain is reported as
 * broker_cpu_s. One JSON line on stdout, in rmqd-bench's shape.
 */
public final class Load {

    /** Exact below 64 µs, then 32 sub-buckets per power of two, exact max (rmqd-bench's histogram). */
    static final class Hist {
        final AtomicLongArray counts = new AtomicLongArray(64 + 60 * 32);
        final AtomicLong n = new AtomicLong();
        final AtomicLong max = new AtomicLong();

        static int index(long v) {
            if (v < 64) {
                return (int) Math.max(v, 0);
            }
            int msb = 63 - Long.numberOfLeadingZeros(v);
            int shift = msb - 5;
            return 64 + (shift - 1) * 32 + (int) ((v >> shift) - 32);
        }

        static long value(int idx) {
            if (idx < 64) {
                return idx;
            }
            int shift = (idx - 64) / 32 + 1;
            long mantissa = (idx - 64) % 32 + 32;
            return (mantissa << shift) + (1L << shift) / 2;
        }

        void record(long v) {
            counts.incrementAndGet(index(v));
            n.incrementAndGet();
            max.accumulateAndGet(v, Math::max);
        }

        long quantile(double q) {
            long total = n.get();
            if (total == 0) {
                return 0;
            }
            long rank = Math.max(1, Math.min(total, (long) Math.ceil(q * total)));
            long seen = 0;
            for (int i = 0; i < counts.length(); i++) {
                seen += counts.get(i);
                if (seen >= rank) {
                    return Math.min(value(i), max.get());
                }
            }
            return max.get();
        }

        String json() {
            return String.format("{\"count\":%d,\"p50\":%d,\"p90\":%d,\"p99\":%d,\"p999\":%d,\"max\":%d}",
                n.get(), quantile(0.5), quantile(0.9), quantile(0.99), quantile(0.999), max.get());
        }
    }

    /** Which sequence numbers were consumed (duplicates from a rebalance count once). */
    static final class Seen {
        final AtomicLongArray bits;
        final AtomicLong distinct = new AtomicLong();

        Seen(long capacity) {
            bits = new AtomicLongArray((int) ((capacity + 63) / 64));
        }

        void mark(long seq) {
            if (seq < 0 || seq / 64 >= bits.length()) {
                return;
            }
            int w = (int) (seq / 64);
            long bit = 1L << (seq % 64);
            long old = bits.getAndAccumulate(w, bit, (a, b) -> a | b);
            if ((old & bit) == 0) {
                distinct.incrementAndGet();
            }
        }
    }

    static final long MAX_MEASURED = 64L << 20;

    final Map<String, String> opt;
    final String topic;
    final String mode;
    final int size;
    final int threads;
    final int window;
    final int batch;
    final boolean keys;
    final int tags;
    final Random random = new Random(7);
    final byte[] filler;

    final Hist sendRtt = new Hist();
    final Hist e2e = new Hist();
    final Seen seen = new Seen(MAX_MEASURED);
    final AtomicLong warmConsumed = new AtomicLong();
    final AtomicLong nextSeq = new AtomicLong();
    final AtomicLong acked = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final Map<String, AtomicLong> failCodes = new ConcurrentHashMap<>();
    volatile boolean measuring;
    volatile boolean stop;

    Load(Map<String, String> opt) {
        this.opt = opt;
        topic = opt.get("topic");
        mode = opt.getOrDefault("mode", "sync");
        size = Math.max(16, Integer.parseInt(opt.getOrDefault("size", "1024")));
        threads = "async".equals(mode) ? 1 : Integer.parseInt(opt.getOrDefault("threads", "16"));
        window = Integer.parseInt(opt.getOrDefault("window", "128"));
        batch = "batch".equals(mode) ? Integer.parseInt(opt.getOrDefault("batch", "16")) : 1;
        keys = opt.containsKey("keys");
        tags = Integer.parseInt(opt.getOrDefault("tags", "0"));
        filler = new byte[size];
        random.nextBytes(filler);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + args[i]);
            }
            String k = args[i].substring(2);
            boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
            opt.put(k, flag ? "true" : args[++i]);
        }
        if (!opt.containsKey("ns") || !opt.containsKey("topic")) {
            System.err.println("usage: compat.Load --ns H:P --topic T [--mode sync|async|batch] [...] (see the class doc)");
            System.exit(2);
        }
        int rc = new Load(opt).run();
        System.exit(rc);
    }

    Message message(long seq) {
        byte[] body = filler.clone();
        ByteBuffer.wrap(body).putLong(System.nanoTime()).putLong(seq);
        Message m = new Message(topic, body);
        if (tags > 0) {
            m.setTags("tag" + Math.floorMod(seq, tags));
        }
        if (keys) {
            m.setKeys("key-" + seq + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        }
        return m;
    }

    /** Sequence number for the next message: -1 before the measured window, none (null) after it. */
    Long claim() {
        if (stop) {
            return null;
        }
        if (!measuring) {
            return -1L;
        }
        long s = nextSeq.getAndIncrement();
        return s < MAX_MEASURED ? s : null;
    }

    void fail(String why, boolean counted) {
        if (counted) {
            failed.incrementAndGet();
            failCodes.computeIfAbsent(why, k -> new AtomicLong()).incrementAndGet();
        }
    }

    void onSent(boolean counted, long t0, SendResult r, int n) {
        if (!counted) {
            return;
        }
        if (r != null && r.getSendStatus() == SendStatus.SEND_OK) {
            sendRtt.record((System.nanoTime() - t0) / 1000);
            acked.addAndGet(n);
        } else {
            failed.addAndGet(n);
            String why = r == null ? "null" : r.getSendStatus().name();
            failCodes.computeIfAbsent(why, k -> new AtomicLong()).addAndGet(n);
        }
    }

    /** One sync (or batch) sender thread. */
    void syncLoop(DefaultMQProducer p) {
        while (true) {
            List<Message> msgs = new ArrayList<>(batch);
            int measured = 0; // a batch sent as the window opens mixes warm-up and measured messages
            for (int i = 0; i < batch; i++) {
                Long seq = claim();
                if (seq == null) {
                    return;
                }
                measured += seq >= 0 ? 1 : 0;
                msgs.add(message(seq));
            }
            long t0 = System.nanoTime();
            try {
                SendResult r = batch > 1 ? p.send(msgs) : p.send(msgs.get(0));
                onSent(measured > 0, t0, r, measured);
            } catch (Exception e) {
                if (measured > 0) {
                    failed.addAndGet(measured - 1);
                }
                fail(e.getClass().getSimpleName(), measured > 0);
            }
        }
    }

    /** The async sender: at most `window` sends in flight. */
    void asyncLoop(DefaultMQProducer p) throws InterruptedException {
        Semaphore inFlight = new Semaphore(window);
        while (true) {
            inFlight.acquire();
            Long seq = claim();
            if (seq == null) {
                inFlight.release();
                break;
            }
            boolean counted = seq >= 0;
            long t0 = System.nanoTime();
            try {
                p.send(message(seq), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult r) {
                        onSent(counted, t0, r, 1);
                        inFlight.release();
                    }

                    @Override
                    public void onException(Throwable e) {
                        fail(e.getClass().getSimpleName(), counted);
                        inFlight.release();
                    }
                }, 10_000);
            } catch (Exception e) {
                fail(e.getClass().getSimpleName(), counted);
                inFlight.release();
            }
        }
        inFlight.acquire(window); // every callback has run
    }

    static long[] cpuTicks(String pid) {
        try {
            String s = new String(Files.readAllBytes(Paths.get("/proc", pid, "stat")), StandardCharsets.US_ASCII);
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
        } catch (Exception e) {
            return new long[] {0, 0};
        }
    }

    static double cpuSecs(String pid, long[] from) {
        long[] now = cpuTicks(pid);
        return (now[0] + now[1] - from[0] - from[1]) / 100.0; // USER_HZ is 100 on Linux
    }

    int run() throws Exception {
        String ns = opt.get("ns");
        double duration = Double.parseDouble(opt.getOrDefault("duration", "10"));
        double warmup = Double.parseDouble(opt.getOrDefault("warmup", "3"));
        long drainMs = (long) (Double.parseDouble(opt.getOrDefault("drain-timeout", "60")) * 1000);
        String brokerPid = opt.get("broker-pid");
        String tag = topic + "-" + ProcessHandle.current().pid();

        DefaultMQPushConsumer c = new DefaultMQPushConsumer("LoadC-" + tag);
        c.setNamesrvAddr(ns);
        c.setInstanceName("load-c-" + tag);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.nanoTime();
            for (MessageExt m : msgs) {
                ByteBuffer b = ByteBuffer.wrap(m.getBody());
                long sentAt = b.getLong();
                long seq = b.getLong();
                if (seq < 0) {
                    warmConsumed.incrementAndGet();
                } else {
                    e2e.record((now - sentAt) / 1000);
                    seen.mark(seq);
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });

        DefaultMQProducer p = new DefaultMQProducer("LoadP-" + tag);
        p.setNamesrvAddr(ns);
        p.setInstanceName("load-p-" + tag);
        p.setSendMsgTimeout(10_000);
        p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE); // bodies go to the broker as they are
        p.setMaxMessageSize(Math.max(4 << 20, size * batch * 2));
        p.start();
        c.start();
        try {
            // The topic must be routable before the first send (the broker registers it with the NameServer).
            long until = System.currentTimeMillis() + 60_000;
            List<MessageQueue> mqs = List.of();
            while (mqs.isEmpty() && System.currentTimeMillis() < until) {
                try {
                    mqs = p.fetchPublishMessageQueues(topic);
                } catch (Exception e) {
                    Thread.sleep(200);
                }
            }
            if (mqs.isEmpty()) {
                throw new IllegalStateException("no route for " + topic + " within 60 s");
            }

            List<Thread> senders = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Thread t = new Thread(() -> {
                    try {
                        if ("async".equals(mode)) {
                            asyncLoop(p);
                        } else {
                            syncLoop(p);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "load-send-" + i);
                t.start();
                senders.add(t);
            }
            // Warm-up (not measured): JIT, connections, the consumer's first rebalance and pulls.
            Thread.sleep((long) (warmup * 1000));
            long warmWait = System.currentTimeMillis() + 60_000;
            while (warmConsumed.get() == 0 && System.currentTimeMillis() < warmWait) {
                Thread.sleep(50);
            }
            long[] cpu0 = brokerPid != null ? cpuTicks(brokerPid) : null;
            long[] own0 = cpuTicks("self");
            long t0 = System.nanoTime();
            measuring = true;
            Thread.sleep((long) (duration * 1000));
            stop = true;
            for (Thread t : senders) {
                t.join();
            }
            double sendSecs = (System.nanoTime() - t0) / 1e9;
            long drainUntil = System.currentTimeMillis() + drainMs;
            while (seen.distinct.get() < acked.get() && System.currentTimeMillis() < drainUntil) {
                Thread.sleep(20);
            }
            double allSecs = (System.nanoTime() - t0) / 1e9;
            double ownCpu = cpuSecs("self", own0);
            long sent = acked.get();
            long consumed = seen.distinct.get();
            StringBuilder codes = new StringBuilder("{");
            failCodes.forEach((k, v) -> codes.append(codes.length() > 1 ? "," : "").append('"').append(k)
                .append("\":").append(v.get()));
            codes.append('}');
            StringBuilder out = new StringBuilder();
            out.append(String.format("{\"cmd\":\"java-client\",\"client\":\"rocketmq-client %s\",\"mode\":\"%s\","
                    + "\"size\":%d,\"threads\":%d,\"window\":%d,\"batch\":%d,\"keys\":%b,\"tags\":%d,\"topic\":\"%s\","
                    + "\"rate\":0,\"send_secs\":%.3f,\"sent\":%d,\"send_tps\":%.1f,\"failed\":%d,\"fail_codes\":%s,"
                    + "\"consumed\":%d,\"consume_tps\":%.1f,\"count_mismatch\":%b,\"send_rtt_us\":%s,\"e2e_us\":%s,"
                    + "\"generator_cpu_s\":%.2f",
                org.apache.rocketmq.common.MQVersion.getVersionDesc(org.apache.rocketmq.common.MQVersion.CURRENT_VERSION),
                mode, size, threads, "async".equals(mode) ? window : 1, batch, keys, tags, topic, sendSecs, sent,
                sent / sendSecs, failed.get(), codes, consumed, consumed / allSecs, sent != consumed, sendRtt.json(),
                e2e.json(), ownCpu));
            if (cpu0 != null) {
                out.append(String.format(",\"broker_cpu_s\":%.2f", cpuSecs(brokerPid, cpu0)));
            }
            out.append('}');
            System.out.println(out);
            return sent == consumed && sent > 0 ? 0 : 1;
        } catch (Exception e) {
            System.out.println("{\"cmd\":\"java-client\",\"error\":\"" + e.toString().replace("\"", "'") + "\"}");
            return 1;
        } finally {
            stop = true;
            p.shutdown();
            c.shutdown();
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
