package jc;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Lite pull consumer scenario (DefaultLitePullConsumer, client 4.6+). Compiled separately against the oldest line
 * that has the class (4.9.x API: subscribe, poll, commit(Set, persist), committed) and loaded by name from
 * ClientMatrix only when the client on the classpath has DefaultLitePullConsumer.
 */
public final class LitePull {

    public static String run(ClientMatrix.Ctx c) throws Exception {
        String topic = c.name("t");
        DefaultMQProducer p = c.producer(c.name("pg"));
        c.createTopic(p, topic, 4);
        int n = 40;
        int more = 8;
        for (int i = 0; i < n; i++) {
            ClientMatrix.sendOk(p, ClientMatrix.msg(c, topic, i));
        }
        String group = c.name("cg");
        // A: subscribe + poll everything, commit with persist, committed offsets read back from the broker
        DefaultLitePullConsumer l1 = lite(c, group, "l1");
        l1.subscribe(topic, "*");
        long t0 = System.currentTimeMillis();
        l1.start();
        ClientMatrix.Checker chk = new ClientMatrix.Checker(c, topic, n + more);
        long first = -1;
        long end = System.currentTimeMillis() + 40_000;
        while (chk.distinct() < n && System.currentTimeMillis() < end) {
            for (MessageExt m : l1.poll(1000)) {
                if (first < 0) {
                    first = System.currentTimeMillis() - t0;
                }
                chk.add(m);
            }
        }
        ClientMatrix.check(chk.distinct() == n, "subscribe/poll: " + chk.distinct() + " of " + n + " within 40 s");
        for (MessageExt m : l1.poll(1000)) { // nothing more may come
            chk.add(m);
        }
        Set<MessageQueue> assigned = l1.assignment();
        ClientMatrix.check(assigned.size() == 4, "assignment " + assigned);
        l1.commit(assigned, true);
        TreeMap<Integer, Long> committed = new TreeMap<>();
        long sum = 0;
        for (MessageQueue mq : assigned) {
            Long off = l1.committed(mq);
            committed.put(mq.getQueueId(), off);
            sum += off == null ? 0 : off;
        }
        ClientMatrix.check(sum == n, "committed offsets " + committed + " sum " + sum + ", want " + n);
        l1.shutdown();
        // B: a new instance of the group resumes at the committed offsets: only the messages sent afterwards
        for (int i = n; i < n + more; i++) {
            ClientMatrix.sendOk(p, ClientMatrix.msg(c, topic, i));
        }
        DefaultLitePullConsumer l2 = lite(c, group, "l2");
        l2.subscribe(topic, "*");
        l2.start();
        List<Integer> resumed = new ArrayList<>();
        end = System.currentTimeMillis() + 40_000;
        while (chk.distinct() < n + more && System.currentTimeMillis() < end) {
            for (MessageExt m : l2.poll(1000)) {
                resumed.add(Integer.parseInt(m.getUserProperty("idx")));
                chk.add(m);
            }
        }
        for (MessageExt m : l2.poll(1500)) {
            resumed.add(Integer.parseInt(m.getUserProperty("idx")));
            chk.add(m);
        }
        String ok = chk.verifyExactlyOnce("lite pull (both instances)");
        ClientMatrix.check(resumed.size() == more, "second instance got " + resumed + ", want only idx " + n + ".." + (n + more - 1));
        return "first=" + first + "ms; " + ok + "; committed " + committed + "; new instance resumed with the " + more + " later messages";
    }

    static DefaultLitePullConsumer lite(ClientMatrix.Ctx c, String group, String what) {
        DefaultLitePullConsumer l = new DefaultLitePullConsumer(group);
        l.setNamesrvAddr(c.ns);
        l.setInstanceName(c.instance(what));
        l.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.onClose(l::shutdown);
        return l;
    }

    private LitePull() {
    }
}
