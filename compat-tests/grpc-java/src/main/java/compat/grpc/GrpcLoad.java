package compat.grpc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;

/**
 * Load for scripts/bench phase E: rocketmq-client-java 5.2.0 through rocketmq-proxy (cluster mode) in front of
 * the broker. SimpleConsumer threads (receive up to 32, ack each) start first, then producer threads send
 * synchronously for --duration seconds; the first --warmup seconds are not measured. Prints one JSON line:
 * send_tps, sent, consumed (in the window), failed, send_rtt_us / e2e_us percentiles (e2e = receive time - born
 * time), broker_cpu_s (utime + stime of --broker-pid over the window).
 * Args: --endpoint H:P --topic T --group G --size N --duration S --warmup S --producers N --consumers N
 *       [--broker-pid PID]
 */
public final class GrpcLoad {
    static final class Hist {
        final long[] v = new long[1 << 20];
        int n;

        synchronized void add(long x) {
            if (n < v.length) v[n++] = x;
        }

        synchronized long pct(double p) {
            if (n == 0) return 0;
            long[] c = Arrays.copyOf(v, n);
            Arrays.sort(c);
            return c[Math.min(n - 1, (int) Math.ceil(p * n) - 1 < 0 ? 0 : (int) Math.ceil(p * n) - 1)];
        }
    }

    static double cpuSeconds(String pid) {
        if (pid == null) return 0;
        try {
            String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime, stime (USER_HZ 100)
        } catch (Exception e) {
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        String endpoint = "127.0.0.1:8081", topic = null, group = null, pid = null;
        int size = 1024, duration = 20, warmup = 5, producers = 8, consumers = 2;
        for (int i = 0; i < args.length - 1; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--endpoint": endpoint = v; break;
                case "--topic": topic = v; break;
                case "--group": group = v; break;
                case "--size": size = Integer.parseInt(v); break;
                case "--duration": duration = Integer.parseInt(v); break;
                case "--warmup": warmup = Integer.parseInt(v); break;
                case "--producers": producers = Integer.parseInt(v); break;
                case "--consumers": consumers = Integer.parseInt(v); break;
                case "--broker-pid": pid = v; break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        final String tp = topic, g = group;
        ClientServiceProvider p = ClientServiceProvider.loadService();
        ClientConfiguration conf = ClientConfiguration.newBuilder().setEndpoints(endpoint).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
        AtomicBoolean stop = new AtomicBoolean(), measuring = new AtomicBoolean();
        AtomicLong sent = new AtomicLong(), failed = new AtomicLong(), consumed = new AtomicLong();
        Hist rtt = new Hist(), e2e = new Hist();
        List<Thread> threads = new ArrayList<>();
        List<SimpleConsumer> scs = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            SimpleConsumer c = p.newSimpleConsumerBuilder().setClientConfiguration(conf).setConsumerGroup(g)
                .setAwaitDuration(Duration.ofSeconds(5)).setSubscriptionExpressions(Map.of(tp, FilterExpression.SUB_ALL))
                .build();
            scs.add(c);
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        for (MessageView m : c.receive(32, Duration.ofSeconds(30))) {
                            long now = System.currentTimeMillis();
                            if (measuring.get()) {
                                consumed.incrementAndGet();
                                e2e.add((now - m.getBornTimestamp()) * 1000);
                            }
                            c.ackAsync(m);
                        }
                    } catch (Exception e) {
                        try {
                            Thread.sleep(100);
                        } catch (InterruptedException ie) {
                            return;
                        }
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        Thread.sleep(2000); // the consumers' first pops (the proxy pops with initMode MAX)
        Producer prod = p.newProducerBuilder().setClientConfiguration(conf).setTopics(tp).build();
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        List<Thread> senders = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    Message m = p.newMessageBuilder().setTopic(tp).setBody(body).build();
                    long t0 = System.nanoTime();
                    try {
                        prod.send(m);
                        if (measuring.get()) {
                            sent.incrementAndGet();
                            rtt.add((System.nanoTime() - t0) / 1000);
                        }
                    } catch (Exception e) {
                        if (measuring.get()) failed.incrementAndGet();
                    }
                }
            });
            t.start();
            senders.add(t);
        }
        Thread.sleep(warmup * 1000L);
        double c0 = cpuSeconds(pid);
        long w0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep((duration - warmup) * 1000L);
        measuring.set(false);
        double secs = (System.nanoTime() - w0) / 1e9, cpu = cpuSeconds(pid) - c0;
        stop.set(true);
        for (Thread t : senders) t.join(15000);
        prod.close();
        for (Thread t : threads) t.join(40000);
        for (SimpleConsumer c : scs) c.close();
        System.out.printf("{\"send_tps\":%.1f,\"sent\":%d,\"consumed\":%d,\"failed\":%d,\"window_s\":%.2f,"
                + "\"size\":%d,\"producers\":%d,\"consumers\":%d,\"broker_cpu_s\":%.2f,"
                + "\"send_rtt_us\":{\"p50\":%d,\"p99\":%d,\"p999\":%d},\"e2e_us\":{\"p50\":%d,\"p99\":%d,\"p999\":%d}}%n",
            sent.get() / secs, sent.get(), consumed.get(), failed.get(), secs, size, producers, consumers, cpu,
            rtt.pct(0.5), rtt.pct(0.99), rtt.pct(0.999), e2e.pct(0.5), e2e.pct(0.99), e2e.pct(0.999));
        System.exit(0);
    }
}
