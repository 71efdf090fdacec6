package compat.rocksdb;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.AbstractCompactionFilter;
import org.rocksdb.AbstractCompactionFilterFactory;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.CompactionOptionsUniversal;
import org.rocksdb.CompactionPriority;
import org.rocksdb.CompactionStopStyle;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.DataBlockIndexType;
import org.rocksdb.FlushOptions;
import org.rocksdb.IndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.RateLimiter;
import org.rocksdb.RemoveConsumeQueueCompactionFilter;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.SkipListMemTableConfig;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.WALRecoveryMode;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.rocksdb.util.SizeUnit;

/**
 * The RocksDB consume queue of RocketMQ 5.5.0 (storeType=defaultRocksDB) on the real rocketmq-rocksdb 1.0.6 jar:
 * the column families, options and write options of RocksDBOptionsFactory / ConsumeQueueRocksDBStorage, the key
 * and value layouts of RocksDBConsumeQueueTable / RocksDBConsumeQueueOffsetTable, and the fork's native
 * RemoveConsumeQueueCompactionFilter. Modes (each opens, acts, prints every entry, closes):
 * <pre>
 *   write   DB            units TopicTest/1 cq 0..4 (phy 1000*i, size 200, tags 0x1234, time 1700000000000+i),
 *                         %LMQ%$P$l/0 cq 0 (phy 4000), their max keys and the checkpoint 4200, in one batch
 *   dump    DB            nothing but the listing
 *   compact DB MINPHY     forced full compaction of the units with the filter at MINPHY (Java cleanExpired)
 *   destroy DB TOPIC QID  deleteRange over the queue's units, delete its min/max keys (Java destroy)
 * </pre>
 * Listing lines: "cq KEYHEX VALUEHEX" for CF default, "off KEYHEX VALUEHEX" for CF offset, then "rocksdb VERSION".
 */
public final class RocksCq {
    private static final byte CTRL_0 = 0, CTRL_1 = 1, CTRL_2 = 2;

    private RocksCq() {
    }

    /** ConsumeQueueCompactionFilterFactory: a new native filter with the min offset per compaction. */
    static final class FilterFactory extends AbstractCompactionFilterFactory<RemoveConsumeQueueCompactionFilter> {
        private final long minPhyOffset;

        FilterFactory(long minPhyOffset) {
            this.minPhyOffset = minPhyOffset;
        }

        @Override
        public String name() {
            return "ConsumeQueueCompactionFilterFactory";
        }

        @Override
        public RemoveConsumeQueueCompactionFilter createCompactionFilter(AbstractCompactionFilter.Context context) {
            return new RemoveConsumeQueueCompactionFilter(minPhyOffset);
        }
    }

    static byte[] cqKey(String topic, int queueId, long cqOffset) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(19 + t.length).putInt(t.length).put(CTRL_1).put(t).put(CTRL_1)
            .putInt(queueId).put(CTRL_1).putLong(cqOffset).array();
    }

    static byte[] cqValue(long phy, int size, long tagsCode, long storeTime) {
        return ByteBuffer.allocate(28).putLong(phy).putInt(size).putLong(tagsCode).putLong(storeTime).array();
    }

    static byte[] offsetKey(String topic, boolean max, int queueId) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(14 + t.length).putInt(t.length).put(CTRL_1).put(t).put(CTRL_1)
            .put((max ? "max" : "min").getBytes(StandardCharsets.UTF_8)).put(CTRL_1).putInt(queueId).array();
    }

    static byte[] offsetValue(long phy, long cqOffset) {
        return ByteBuffer.allocate(16).putLong(phy).putLong(cqOffset).array();
    }

    static byte[] queueBound(String topic, int queueId, byte ctrl) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(11 + t.length).putInt(t.length).put(CTRL_1).put(t).put(CTRL_1)
            .putInt(queueId).put(ctrl).array();
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder(b.length * 2);
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    /** RocksDBOptionsFactory.createCQCFOptions with the 5.5.0 defaults (lz4, bottommost zstd). */
    static ColumnFamilyOptions unitOptions(long minPhyOffset) {
        BlockBasedTableConfig table = new BlockBasedTableConfig().setFormatVersion(5)
            .setIndexType(IndexType.kBinarySearch).setDataBlockIndexType(DataBlockIndexType.kDataBlockBinaryAndHash)
            .setDataBlockHashTableUtilRatio(0.75).setBlockSize(32 * SizeUnit.KB).setMetadataBlockSize(4 * SizeUnit.KB)
            .setFilterPolicy(new BloomFilter(16, false)).setCacheIndexAndFilterBlocks(false)
            .setCacheIndexAndFilterBlocksWithHighPriority(true).setPinL0FilterAndIndexBlocksInCache(false)
            .setPinTopLevelIndexAndFilter(true).setBlockCache(new LRUCache(1024 * SizeUnit.MB, 8, false))
            .setWholeKeyFiltering(true);
        CompactionOptionsUniversal universal = new CompactionOptionsUniversal().setSizeRatio(100)
            .setMaxSizeAmplificationPercent(25).setAllowTrivialMove(true).setMinMergeWidth(2)
            .setMaxMergeWidth(Integer.MAX_VALUE).setStopStyle(CompactionStopStyle.CompactionStopStyleTotalSize)
            .setCompressionSizePercent(-1);
        return new ColumnFamilyOptions().setMaxWriteBufferNumber(4).setWriteBufferSize(128 * SizeUnit.MB)
            .setMinWriteBufferNumberToMerge(1).setTableFormatConfig(table).setMemTableConfig(new SkipListMemTableConfig())
            .setCompressionType(CompressionType.getCompressionType("lz4"))
            .setBottommostCompressionType(CompressionType.getCompressionType("zstd")).setNumLevels(7)
            .setCompactionPriority(CompactionPriority.MinOverlappingRatio).setCompactionStyle(CompactionStyle.UNIVERSAL)
            .setCompactionOptionsUniversal(universal).setMaxCompactionBytes(100 * SizeUnit.GB)
            .setSoftPendingCompactionBytesLimit(100 * SizeUnit.GB).setHardPendingCompactionBytesLimit(256 * SizeUnit.GB)
            .setLevel0FileNumCompactionTrigger(2).setLevel0SlowdownWritesTrigger(8).setLevel0StopWritesTrigger(10)
            .setTargetFileSizeBase(256 * SizeUnit.MB).setTargetFileSizeMultiplier(2)
            .setMergeOperator(new StringAppendOperator()).setCompactionFilterFactory(new FilterFactory(minPhyOffset))
            .setReportBgIoStats(true).setOptimizeFiltersForHits(true);
    }

    /** RocksDBOptionsFactory.createOffsetCFOptions. */
    static ColumnFamilyOptions offsetOptions() {
        BlockBasedTableConfig table = new BlockBasedTableConfig().setFormatVersion(5)
            .setIndexType(IndexType.kBinarySearch).setDataBlockIndexType(DataBlockIndexType.kDataBlockBinarySearch)
            .setBlockSize(32 * SizeUnit.KB).setFilterPolicy(new BloomFilter(16, false))
            .setCacheIndexAndFilterBlocks(false).setCacheIndexAndFilterBlocksWithHighPriority(true)
            .setPinL0FilterAndIndexBlocksInCache(false).setPinTopLevelIndexAndFilter(true)
            .setBlockCache(new LRUCache(128 * SizeUnit.MB, 8, false)).setWholeKeyFiltering(true);
        return new ColumnFamilyOptions().setMaxWriteBufferNumber(4).setWriteBufferSize(64 * SizeUnit.MB)
            .setMinWriteBufferNumberToMerge(1).setTableFormatConfig(table).setMemTableConfig(new SkipListMemTableConfig())
            .setCompressionType(CompressionType.NO_COMPRESSION).setNumLevels(7).setCompactionStyle(CompactionStyle.LEVEL)
            .setLevel0FileNumCompactionTrigger(2).setLevel0SlowdownWritesTrigger(8).setLevel0StopWritesTrigger(10)
            .setTargetFileSizeBase(64 * SizeUnit.MB).setTargetFileSizeMultiplier(2)
            .setMaxBytesForLevelBase(256 * SizeUnit.MB).setMaxBytesForLevelMultiplier(2)
            .setMergeOperator(new StringAppendOperator()).setInplaceUpdateSupport(true);
    }

    /** RocksDBOptionsFactory.createDBOptions (db_log_dir left unset: LOG goes into the DB directory). */
    static DBOptions dbOptions() {
        return new DBOptions().setInfoLogLevel(InfoLogLevel.INFO_LEVEL)
            .setWalRecoveryMode(WALRecoveryMode.PointInTimeRecovery).setManualWalFlush(true).setCreateIfMissing(true)
            .setBytesPerSync(SizeUnit.MB).setCreateMissingColumnFamilies(true).setMaxOpenFiles(-1)
            .setMaxLogFileSize(SizeUnit.GB).setKeepLogFileNum(5).setMaxManifestFileSize(SizeUnit.GB)
            .setAllowConcurrentMemtableWrite(false).setAtomicFlush(true).setCompactionReadaheadSize(4 * SizeUnit.MB)
            .setMaxBackgroundJobs(32).setMaxSubcompactions(8).setParanoidChecks(true)
            .setDelayedWriteRate(16 * SizeUnit.MB).setRateLimiter(new RateLimiter(100 * SizeUnit.MB))
            .setUseDirectIoForFlushAndCompaction(false).setUseDirectReads(false);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: RocksCq write|dump|compact|destroy DB [MINPHY | TOPIC QID]");
            System.exit(2);
        }
        RocksDB.loadLibrary();
        String mode = args[0];
        long minPhy = mode.equals("compact") ? Long.parseLong(args[2]) : 0;
        List<ColumnFamilyDescriptor> descriptors = Arrays.asList(
            new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, unitOptions(minPhy)),
            new ColumnFamilyDescriptor("offset".getBytes(StandardCharsets.UTF_8), offsetOptions()));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        RocksDB db = RocksDB.open(dbOptions(), args[1], descriptors, handles);
        ColumnFamilyHandle units = handles.get(0), offsets = handles.get(1);
        WriteOptions writeOptions = new WriteOptions().setSync(false).setDisableWAL(true);
        switch (mode) {
            case "write":
                try (WriteBatch batch = new WriteBatch()) {
                    for (int i = 0; i < 5; i++) {
                        batch.put(units, cqKey("TopicTest", 1, i), cqValue(1000L * i, 200, 0x1234L, 1700000000000L + i));
                    }
                    batch.put(units, cqKey("%LMQ%$P$l", 0, 0), cqValue(4000L, 200, 0x1234L, 1700000000004L));
                    batch.put(offsets, offsetKey("TopicTest", true, 1), offsetValue(4000L, 4));
                    batch.put(offsets, offsetKey("%LMQ%$P$l", true, 0), offsetValue(4000L, 0));
                    batch.put(offsets, offsetKey("CHECKPOINT_TOPIC", true, 0), ByteBuffer.allocate(8).putLong(4200L).array());
                    db.write(writeOptions, batch);
                }
                break;
            case "compact":
                CompactRangeOptions compact = new CompactRangeOptions()
                    .setBottommostLevelCompaction(CompactRangeOptions.BottommostLevelCompaction.kForce)
                    .setAllowWriteStall(true).setExclusiveManualCompaction(false).setChangeLevel(true)
                    .setTargetLevel(-1).setMaxSubcompactions(4);
                db.compactRange(units, null, null, compact);
                break;
            case "destroy":
                String topic = args[2];
                int queueId = Integer.parseInt(args[3]);
                try (WriteBatch batch = new WriteBatch()) {
                    batch.deleteRange(units, queueBound(topic, queueId, CTRL_0), queueBound(topic, queueId, CTRL_2));
                    batch.delete(offsets, offsetKey(topic, false, queueId));
                    batch.delete(offsets, offsetKey(topic, true, queueId));
                    db.write(writeOptions, batch);
                }
                break;
            case "dump":
                break;
            default:
                System.err.println("unknown mode " + mode);
                System.exit(2);
        }
        db.flush(new FlushOptions().setWaitForFlush(true).setAllowWriteStall(true), handles);
        for (int c = 0; c < 2; c++) {
            try (RocksIterator it = db.newIterator(handles.get(c))) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    System.out.println((c == 0 ? "cq " : "off ") + hex(it.key()) + " " + hex(it.value()));
                }
            }
        }
        System.out.println("rocksdb " + RocksDB.rocksdbVersion());
        for (ColumnFamilyHandle h : handles) {
            h.close();
        }
        db.closeE();
    }
}
