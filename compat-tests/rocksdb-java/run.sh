#!/usr/bin/env bash
# compat-tests/rocksdb-java/run.sh — file compatibility of rmqd's RocksDB consume queue (RocksCqStore, cargo
# feature rocksdb-cq) with Java 5.5.0's, through the real org.apache.rocketmq:rocketmq-rocksdb 1.0.6 jar
# (RocksDB 8.4.4 with the fork's RemoveConsumeQueueCompactionFilter). Builds compat.rocksdb.RocksCq with Maven
# (offline first, as the jar is usually in ~/.m2), then runs tests/store_rocksdb_cq.rs with its ignored tests:
#   Java writes (units, max, checkpoint, LMQ) -> rmqd opens, reads, appends, flushes -> Java reads every key
#   -> Java compacts with its native filter -> rmqd reads the survivors and corrects the min offset;
#   rmqd writes (units, max, lazy min, checkpoint, a destroyed queue) -> Java lists exactly those bytes
#   -> Java destroys a queue (deleteRange) -> rmqd sees it gone.
# Needs java 17+, mvn, and the system librocksdb + libclang of README "RocksDB consume queue".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
(cd "$here" && { mvn -o -q package || mvn -q package; })
cd "$here/../.."
. scripts/rocksdb-env
# (the two *_java_broker tests belong to broker.sh)
exec cargo test --features rocksdb-cq --test store_rocksdb_cq -- --include-ignored --skip _java_broker "$@"
