package compat.lite;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONObject;
import org.apache.rocketmq.remoting.protocol.body.ConsumeQueueData;
import org.apache.rocketmq.remoting.protocol.body.QueryConsumeQueueResponseBody;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.StringAppendOperator;

/**
 * What the lite scenarios read from the broker's store directory, for both store types (lite.sh LITE_STORE_TYPE,
 * LiteMain --store-type):
 * <ul>
 * <li>storeType=default: the file consume queue consumequeue/&lt;lmq&gt;/0/00000000000000000000 (20-byte units),
 * config/topics.json, config/subscriptionGroup.json, config/lmqConsumerOffset.json.</li>
 * <li>storeType=defaultRocksDB (Java 5.5.0 RocksDBMessageStore): one RocksDB in consumequeue/ itself (CF default:
 * key i32 topicLen | 0x01 | topic | 0x01 | i32 queueId | 0x01 | i64 cqOffset, value i64 phy | i32 size | i64 tagsCode |
 * i64 storeTimestamp, all big-endian — RocksDBConsumeQueueTable.buildCQKeyByteBuffer0 / buildCQValueByteBuffer;
 * CF offset: the max/min keys), written with the WAL off, so another process sees a unit only once the broker
 * flushed it (SIGTERM flushes): read it only from a stopped broker's store, ask the running broker otherwise
 * (QUERY_CONSUME_QUEUE, GET_MAX_OFFSET). Topics, groups and consumer offsets (LMQ ones included: the broker runs
 * RocksDBConsumerOffsetManager, no lmqConsumerOffset.json) are RocksDB KV stores config/topics,
 * config/subscriptionGroups, config/consumerOffsets (BrokerController, useSingleRocksDBForAllConfigs=false), key
 * the name (topic@group for offsets), value JSON; written with the WAL on, so a read-only open sees them live.</li>
 * </ul>
 * The org.rocksdb classes are those of rocketmq-rocksdb 1.0.6 (RocksDB 8.4.4), the jar Java 5.5.0 runs with (on the
 * runner's classpath through rocketmq-tools 5.5.0 -> rocketmq-broker -> rocketmq-store).
 */
final class LiteStore {
    private LiteStore() {
    }

    static String type = "default";

    static boolean rocks() {
        return "defaultRocksDB".equals(type);
    }

    static Path cqDb() {
        return LiteMain.store.resolve("consumequeue");
    }

    // ------------------------------------------------------------------ RocksDB, read-only
    private static boolean loaded;

    private static synchronized void load() {
        if (!loaded) {
            RocksDB.loadLibrary();
            loaded = true;
        }
    }

    private static String logDir;

    private static synchronized String logDir() throws IOException {
        if (logDir == null) logDir = Files.createTempDirectory("lite-rocks-ro").toString();
        return logDir;
    }

    interface DbReader<T> {
        T read(RocksDB db, List<ColumnFamilyHandle> handles, List<String> names) throws Exception;
    }

    /** opens the RocksDB at dir read-only with every column family it has (a read-only open takes no lock and
     * replays the WAL, but sees nothing of another process's unflushed memtable written without WAL) */
    static <T> T readOnly(Path dir, DbReader<T> r) throws Exception {
        load();
        List<byte[]> cfs;
        try (Options o = new Options()) {
            cfs = RocksDB.listColumnFamilies(o, dir.toString());
        }
        List<ColumnFamilyDescriptor> ds = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<ColumnFamilyOptions> opts = new ArrayList<>();
        for (byte[] cf : cfs) {
            ColumnFamilyOptions co = new ColumnFamilyOptions().setMergeOperator(new StringAppendOperator());
            opts.add(co);
            ds.add(new ColumnFamilyDescriptor(cf, co));
            names.add(new String(cf, StandardCharsets.UTF_8));
        }
        List<ColumnFamilyHandle> hs = new ArrayList<>();
        // the info LOG of this open goes elsewhere: in the database directory it would rotate the broker's LOG
        try (DBOptions dbo = new DBOptions().setDbLogDir(logDir()); RocksDB db = RocksDB.openReadOnly(dbo, dir.toString(), ds, hs)) {
            try {
                return r.read(db, hs, names);
            } finally {
                for (ColumnFamilyHandle h : hs) h.close();
            }
        } finally {
            for (ColumnFamilyOptions co : opts) co.close();
        }
    }

    /** every key/value (UTF-8) of the CF "default" of a config KV store (config/topics, ...); empty when the
     * directory holds no RocksDB */
    static Map<String, String> kv(Path dir) throws Exception {
        if (!Files.exists(dir.resolve("CURRENT"))) return new LinkedHashMap<>();
        return readOnly(dir, (db, hs, names) -> {
            Map<String, String> out = new LinkedHashMap<>();
            try (RocksIterator it = db.newIterator(hs.get(names.indexOf("default")))) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    out.put(new String(it.key(), StandardCharsets.UTF_8), new String(it.value(), StandardCharsets.UTF_8));
                }
            }
            return out;
        });
    }

    static byte[] cqKey(String topic, int queueId, long cqOffset) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + 1 + t.length + 1 + 4 + 1 + 8).putInt(t.length).put((byte) 1).put(t)
            .put((byte) 1).putInt(queueId).put((byte) 1).putLong(cqOffset).array();
    }

    /** units 0.. (phy, size, tagsCode) of (topic, 0) in the RocksDB consume queue, up to n, until the first gap */
    static List<long[]> rocksUnits(String topic, int n) throws Exception {
        if (!Files.exists(cqDb().resolve("CURRENT"))) return new ArrayList<>();
        return readOnly(cqDb(), (db, hs, names) -> {
            List<long[]> out = new ArrayList<>();
            ColumnFamilyHandle units = hs.get(names.indexOf("default"));
            for (int i = 0; i < n; i++) {
                byte[] v = db.get(units, cqKey(topic, 0, i));
                if (v == null || v.length < 20) break;
                ByteBuffer b = ByteBuffer.wrap(v);
                out.add(new long[] {b.getLong(), b.getInt(), b.getLong()});
            }
            return out;
        });
    }

    // ------------------------------------------------------------------ consume-queue units
    /** the first n units (CommitLog offset, size, tags code) of (lmq, 0) as the store on disk has them: the file
     * consume queue, or the RocksDB one (only complete once the broker that wrote them stopped) */
    static List<long[]> unitsOnDisk(String lmqName, int n) throws Exception {
        return rocks() ? rocksUnits(lmqName, n) : fileUnits(lmqName, n);
    }

    /** the first n 20-byte units of consumequeue/&lt;lmq&gt;/0/00..00; a unit of zeros ends the list */
    static List<long[]> fileUnits(String lmqName, int n) throws IOException {
        Path f = LiteMain.cqDir(lmqName).resolve("00000000000000000000");
        List<long[]> out = new ArrayList<>();
        if (!Files.exists(f)) return out;
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "r")) {
            for (int i = 0; i < n && (long) (i + 1) * 20 <= r.length(); i++) {
                r.seek((long) i * 20);
                long phy = r.readLong();
                int size = r.readInt();
                long tags = r.readLong();
                if (phy == 0 && size == 0 && tags == 0 && i > 0) break;
                if (size == 0) break;
                out.add(new long[] {phy, size, tags});
            }
        }
        return out;
    }

    /** the first n units of (lmq, 0) as the running broker answers QUERY_CONSUME_QUEUE (mqadmin queryCq) */
    static List<long[]> unitsOfBroker(String lmqName, int n) throws Exception {
        QueryConsumeQueueResponseBody b = LiteMain.admin.queryConsumeQueue(LiteMain.broker, lmqName, 0, 0, n, null);
        List<long[]> out = new ArrayList<>();
        if (b == null || b.getQueueData() == null) return out;
        for (ConsumeQueueData d : b.getQueueData()) out.add(new long[] {d.getPhysicOffset(), d.getPhysicSize(), d.getTagsCode()});
        return out;
    }

    /** the units while the broker runs: the file on disk (its units are written by the dispatch), or the broker's
     * answer with RocksDB (unflushed units are in its memtable only) */
    static List<long[]> unitsLive(String lmqName, int n) throws Exception {
        return rocks() ? unitsOfBroker(lmqName, n) : fileUnits(lmqName, n);
    }

    static String unitsWhere(boolean live) {
        if (!rocks()) return "consumequeue/<lmq>/0/00000000000000000000";
        return live ? "QUERY_CONSUME_QUEUE" : "the RocksDB consumequeue/ (read-only)";
    }

    // ------------------------------------------------------------------ persisted consumer offsets
    /** the persisted consumer offset tables "topic@group" -> {queueId: offset}: config/lmqConsumerOffset.json, or
     * the KV store config/consumerOffsets with RocksDB; null when there is none (yet) */
    static Map<String, JSONObject> offsetTables() throws Exception {
        if (rocks()) {
            Path d = LiteMain.store.resolve("config").resolve("consumerOffsets");
            if (!Files.exists(d.resolve("CURRENT"))) return null;
            Map<String, JSONObject> out = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : kv(d).entrySet()) {
                JSONObject w = JSON.parseObject(e.getValue());
                out.put(e.getKey(), w == null || w.getJSONObject("offsetTable") == null ? new JSONObject() : w.getJSONObject("offsetTable"));
            }
            return out;
        }
        Path f = LiteMain.store.resolve("config").resolve("lmqConsumerOffset.json");
        if (!Files.exists(f)) return null;
        JSONObject j = JSON.parseObject(Files.readString(f));
        if (j == null || j.getJSONObject("offsetTable") == null) return null;
        Map<String, JSONObject> out = new LinkedHashMap<>();
        for (String k : j.getJSONObject("offsetTable").keySet()) out.put(k, j.getJSONObject("offsetTable").getJSONObject(k));
        return out;
    }

    static String offsetsWhere() {
        return rocks() ? "config/consumerOffsets (RocksDB KV)" : "lmqConsumerOffset.json";
    }

    /** topics / groups as persisted: topics.json topicConfigTable / subscriptionGroup.json subscriptionGroupTable,
     * or the KV stores config/topics / config/subscriptionGroups */
    static JSONObject persistedTopic(String topic) throws Exception {
        if (rocks()) {
            String v = kv(LiteMain.store.resolve("config").resolve("topics")).get(topic);
            return v == null ? null : JSON.parseObject(v);
        }
        JSONObject topics = JSON.parseObject(Files.readString(LiteMain.store.resolve("config/topics.json")));
        return topics.getJSONObject("topicConfigTable").getJSONObject(topic);
    }

    static JSONObject persistedGroup(String group) throws Exception {
        if (rocks()) {
            String v = kv(LiteMain.store.resolve("config").resolve("subscriptionGroups")).get(group);
            return v == null ? null : JSON.parseObject(v);
        }
        JSONObject groups = JSON.parseObject(Files.readString(LiteMain.store.resolve("config/subscriptionGroup.json")));
        return groups.getJSONObject("subscriptionGroupTable").getJSONObject(group);
    }

    static String configWhere() {
        return rocks() ? "the RocksDB KV stores config/topics and config/subscriptionGroups"
            : "config/topics.json and config/subscriptionGroup.json";
    }
}
