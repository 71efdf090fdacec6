#!/usr/bin/env bash
# compat-tests/decode-check.sh [frame files...]  (stdin when none)
# Decodes Remoting frames (4-byte length prefix included) with the REAL org.apache.rocketmq.remoting.protocol
# .RemotingCommand.decode and prints one JSON line per frame (see java/src/main/java/compat/DecodeCheck.java).
# Exit 1 when a frame does not decode. Needs compat-tests/setup.sh to have run.
COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CP="$COMPAT_DIR/java/target/classes:$(cat "$COMPAT_DIR/java/target/cp.txt")" || exit 2
H=${TMPDIR:-/tmp}/rmqd-decode-check; mkdir -p "$H"
exec java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Duser.home="$H" -Drocketmq.home.dir="$H" \
  -Drmq.logback.configurationFile=rmq.client.logback.xml -cp "$CP" compat.DecodeCheck "$@"
