#!/usr/bin/env bash
# compat-tests/setup.sh — resolve the real RocketMQ Java artifacts from Maven Central and compile the scenario
# runner. Idempotent: a second run with a warm ~/.m2 and unchanged sources does nothing but check (~1 s).
#
# Produces: compat-tests/java/target/cp.txt        (classpath: namesrv, broker, client, tools)
#           compat-tests/grpc-java/{,proxy/}target/cp.txt, compat-tests/grpc-go/bin/compat-grpc-go (suite grpc)
#           compat-tests/java/target/classes/compat (compat.Main, compat.DecodeCheck)
#           compat-tests/java/target/rocketmq.version
# The official benchmark tools (rocketmq-example) have a classpath of their own, resolved by scripts/bench from
# compat-tests/java/bench-tools/pom.xml; the suites do not need them.
# Env: ROCKETMQ_VERSION (default 5.3.3; "auto" probes 5.5.1 first and falls back to 5.3.3), MVN (default mvn),
#      COMPAT_SETUP_FORCE=1 rebuilds.
# Why 5.3.3: 5.5.1 is the newest release, but Maven Central as reachable here serves only part of its module jars
# (rocketmq-client/-namesrv/-tools/-srvutil/-filter/-auth 5.5.1 missing, checked 2026-11-29), so a 5.5.1 probe
# costs ~25 s and ~100 MB of downloads for nothing on every fresh machine.
set -euo pipefail
COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JAVA_DIR="$COMPAT_DIR/java"
T="$JAVA_DIR/target"
MVN=${MVN:-mvn}
mkdir -p "$T" "$COMPAT_DIR/.run"
LOG="$COMPAT_DIR/.run/setup.log"
t0=$SECONDS

command -v java >/dev/null || { echo "setup: java not found (need JDK 17)" >&2; exit 1; }
command -v "$MVN" >/dev/null || { echo "setup: mvn not found (need Maven 3.8+)" >&2; exit 1; }

# The grpc suite's own projects (rocketmq-proxy classpath, rocketmq-client-java 5.2.0, the Go gRPC client v5.1.4):
# grpc_setup in suites/grpc.sh, idempotent (about 1 s when up to date); a failure leaves the other suites alone.
(PLUGIN_SUITES=(); . "$COMPAT_DIR/suites/grpc.sh"; grpc_setup) \
  || echo "setup: grpc suite setup failed (see $COMPAT_DIR/.run/grpc-setup.log); its scenarios will report it" >&2

# Fingerprint of everything that affects the build.
fp=$( (cat "$JAVA_DIR/pom.xml"; find "$JAVA_DIR/src" -type f -name '*.java' -print0 | sort -z | xargs -0 cat; echo "${ROCKETMQ_VERSION:-}") | sha256sum | cut -c1-16)
if [ "${COMPAT_SETUP_FORCE:-0}" != 1 ] && [ -s "$T/cp.txt" ] && [ -f "$T/.fingerprint" ] && [ "$(cat "$T/.fingerprint")" = "$fp" ] \
   && [ -f "$T/classes/compat/Main.class" ]; then
  missing=0
  tr ':' '\n' < "$T/cp.txt" | while read -r j; do [ -f "$j" ] || { echo "missing $j"; exit 1; }; done || missing=1
  if [ $missing = 0 ]; then
    echo "setup: up to date (rocketmq $(cat "$T/rocketmq.version"), $((SECONDS - t0)) s)"
    exit 0
  fi
fi

build() { # build <version> [extra mvn args]
  local v=$1; shift
  echo "setup: resolving rocketmq $v and compiling scenarios ..." >&2
  "$MVN" -B -q -Drocketmq.version="$v" "$@" package >> "$LOG" 2>&1
}

: > "$LOG"
chosen=""
ROCKETMQ_VERSION=${ROCKETMQ_VERSION:-5.3.3}
if [ "$ROCKETMQ_VERSION" != auto ]; then
  build "$ROCKETMQ_VERSION" -f "$JAVA_DIR/pom.xml" && chosen=$ROCKETMQ_VERSION
else
  # 5.5.1 is the newest release, but Maven Central (as reachable here) did not serve all of its module jars
  # when this was written (rocketmq-client/-namesrv/-tools 5.5.1 missing); fall back to 5.3.3.
  # a previous successful choice is tried first, so a rebuild does not re-probe a version that is not served
  prev=$(cat "$T/rocketmq.version" 2>/dev/null || true)
  for v in $prev 5.5.1 5.3.3; do
    if build "$v" -f "$JAVA_DIR/pom.xml"; then chosen=$v; break; fi
    echo "setup: rocketmq $v did not resolve (see $LOG)" >&2
  done
fi
[ -n "$chosen" ] || { echo "setup: FAILED, see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }

echo "$chosen" > "$T/rocketmq.version"
echo "$fp" > "$T/.fingerprint"
echo "setup: done (rocketmq $chosen, $(tr ':' '\n' < "$T/cp.txt" | wc -l) jars, $((SECONDS - t0)) s)"
