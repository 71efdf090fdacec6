package compat.rocksdb;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * The real rocketmq-client 5.5.0 against a broker of compat-tests/rocksdb-java/swap.sh (Java 5.5.0 or rmqd, both
 * storeType=defaultRocksDB). One command per run:
 * <pre>
 *   send  &lt;ns&gt; &lt;topic&gt; &lt;from&gt; &lt;count&gt; &lt;lmq&gt;   messages body-&lt;i&gt; to queue i % 4, tag TagA/TagB by parity,
 *                                            key k&lt;i&gt;; the even ones also into &lt;lmq&gt; (INNER_MULTI_DISPATCH)
 *   read  &lt;ns&gt; &lt;broker addr&gt; &lt;broker name&gt; &lt;topic&gt; &lt;lmq&gt;  prints, per queue of the topic and for the LMQ,
 *                                            "queue &lt;q&gt; min &lt;m&gt; max &lt;M&gt; bodies &lt;b0,b1,...&gt;" (pulled from 0)
 * </pre>
 * Prints one line per fact; the script greps them.
 */
public final class BrokerClient {
    private BrokerClient() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "send":
                send(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), args[5]);
                break;
            case "read":
                read(args[1], args[2], args[3], args[4], args[5]);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
        System.exit(0);
    }

    static void send(String ns, String topic, int from, int count, String lmq) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rocks_swap_pg");
        p.setNamesrvAddr(ns);
        // the same for both brokers: Java's 3 s default times out sends on a loaded 2-core box and
        // fails the scenario; no scenario measures send latency (sized from CI, not from rmqd)
        p.setSendMsgTimeout(10000);
        p.start();
        int ok = 0;
        try {
            List<MessageQueue> mqs = p.fetchPublishMessageQueues(topic);
            for (int i = from; i < from + count; i++) {
                Message m = new Message(topic, i % 2 == 0 ? "TagA" : "TagB", "k" + i,
                    ("body-" + i).getBytes(StandardCharsets.UTF_8));
                if (i % 2 == 0) {
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_INNER_MULTI_DISPATCH, lmq);
                }
                final int q = i % 4;
                MessageQueue mq = mqs.stream().filter(x -> x.getQueueId() == q).findFirst().orElseThrow();
                SendResult r = p.send(m, mq);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    ok++;
                } else {
                    System.out.println("send " + i + " " + r);
                }
            }
        } finally {
            p.shutdown();
        }
        System.out.println("sent " + ok + " of " + count);
    }

    static void read(String ns, String addr, String brokerName, String topic, String lmq) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("rocks-swap-admin-" + System.nanoTime());
        admin.start();
        DefaultMQPullConsumer c = new DefaultMQPullConsumer("rocks_swap_reader");
        c.setNamesrvAddr(ns);
        c.setInstanceName("rocks-swap-reader-" + System.nanoTime());
        c.start();
        try {
            var api = admin.getDefaultMQAdminExtImpl().getMqClientInstance().getMQClientAPIImpl();
            List<MessageQueue> queues = new ArrayList<>();
            for (int q = 0; q < 4; q++) {
                queues.add(new MessageQueue(topic, brokerName, q));
            }
            queues.add(new MessageQueue(lmq, brokerName, 0));
            for (MessageQueue mq : queues) {
                long min = api.getMinOffset(addr, mq, 5000);
                long max = api.getMaxOffset(addr, mq, 5000);
                List<String> bodies = new ArrayList<>();
                if (!mq.getTopic().equals(lmq)) {
                    long off = min;
                    while (off < max) {
                        PullResult r = c.pull(mq, "*", off, 32, 5000);
                        if (r.getPullStatus() != PullStatus.FOUND) {
                            bodies.add("<" + r.getPullStatus() + "@" + off + ">");
                            break;
                        }
                        for (MessageExt m : r.getMsgFoundList()) {
                            bodies.add(new String(m.getBody(), StandardCharsets.UTF_8));
                        }
                        off = r.getNextBeginOffset();
                    }
                }
                System.out.println("queue " + mq.getTopic() + "/" + mq.getQueueId() + " min " + min + " max " + max
                    + " bodies " + String.join(",", bodies));
            }
        } finally {
            c.shutdown();
            admin.shutdown();
        }
    }
}
