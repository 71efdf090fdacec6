// compat-tests/rocksdb-config/CfgKv.java — asks one broker (Java or rmqd) over Remoting with the real Java
// 5.5.0 client API, one operation per argument after the broker address:
//   topic:T  group:G  query:G:T:Q  commit:G:T:Q:OFFSET  deltopic:T  delgroup:G
// and prints one line per operation (`topic T r=.. w=.. perm=..` or `topic T MISSING`, `group G retryMaxTimes=..`,
// `offset G T Q = N` or `offset G T Q NONE`, `ok <op>`). Run as a single-file program: java -cp <5.5.0 cp> CfgKv.java
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.UpdateConsumerOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicConfigAndQueueMapping;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

public class CfgKv {
    public static void main(String[] args) throws Exception {
        String addr = args[0];
        ClientConfig cc = new ClientConfig();
        cc.setNamesrvAddr("127.0.0.1:1");
        cc.setInstanceName("cfgkv-" + System.nanoTime());
        MQClientInstance inst = MQClientManager.getInstance().getOrCreateMQClientInstance(cc);
        MQClientAPIImpl api = inst.getMQClientAPIImpl();
        api.start();
        for (int i = 1; i < args.length; i++) {
            String[] a = args[i].split(":");
            try {
                switch (a[0]) {
                    case "topic": {
                        TopicConfigAndQueueMapping t = null;
                        try {
                            t = api.getTopicConfig(addr, a[1], 5000);
                        } catch (MQBrokerException e) {
                            // TOPIC_NOT_EXIST
                        }
                        System.out.println(t == null ? "topic " + a[1] + " MISSING"
                            : "topic " + a[1] + " r=" + t.getReadQueueNums() + " w=" + t.getWriteQueueNums() + " perm=" + t.getPerm());
                        break;
                    }
                    case "group": {
                        SubscriptionGroupConfig g = null;
                        try {
                            g = api.getSubscriptionGroupConfig(addr, a[1], 5000);
                        } catch (MQBrokerException e) {
                            // SUBSCRIPTION_GROUP_NOT_EXIST
                        }
                        System.out.println(g == null ? "group " + a[1] + " MISSING"
                            : "group " + a[1] + " retryMaxTimes=" + g.getRetryMaxTimes() + " retryQueueNums=" + g.getRetryQueueNums());
                        break;
                    }
                    case "query": {
                        QueryConsumerOffsetRequestHeader h = new QueryConsumerOffsetRequestHeader();
                        h.setConsumerGroup(a[1]);
                        h.setTopic(a[2]);
                        h.setQueueId(Integer.parseInt(a[3]));
                        h.setSetZeroIfNotFound(false);
                        try {
                            long o = api.queryConsumerOffset(addr, h, 5000);
                            System.out.println("offset " + a[1] + " " + a[2] + " " + a[3] + " = " + o);
                        } catch (MQBrokerException e) {
                            System.out.println("offset " + a[1] + " " + a[2] + " " + a[3] + " NONE (" + e.getResponseCode() + ")");
                        }
                        break;
                    }
                    case "commit": {
                        UpdateConsumerOffsetRequestHeader h = new UpdateConsumerOffsetRequestHeader();
                        h.setConsumerGroup(a[1]);
                        h.setTopic(a[2]);
                        h.setQueueId(Integer.parseInt(a[3]));
                        h.setCommitOffset(Long.parseLong(a[4]));
                        api.updateConsumerOffset(addr, h, 5000);
                        System.out.println("ok " + args[i]);
                        break;
                    }
                    case "deltopic":
                        api.deleteTopicInBroker(addr, a[1], 5000);
                        System.out.println("ok " + args[i]);
                        break;
                    case "delgroup":
                        api.deleteSubscriptionGroup(addr, a[1], true, 5000);
                        System.out.println("ok " + args[i]);
                        break;
                    default:
                        System.out.println("unknown op " + args[i]);
                }
            } catch (Exception e) {
                System.out.println("error " + args[i] + ": " + e);
            }
        }
        api.shutdown();
        System.exit(0);
    }
}
