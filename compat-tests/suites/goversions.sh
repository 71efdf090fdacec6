# compat-tests/suites/goversions.sh — plug-in suite "goversions": released rocketmq-client-go/v2 versions against the
# broker (issue #20 item 3, Go part). Sourced by run.sh and setup-all.sh (see "Plug-in suites" in run.sh).
#
# Releases (compat-tests/go-versions/<version>/go.mod, one binary each: go-versions/bin/compat-gv-<version>):
#   default run          v2.0.0   the oldest release that builds with the installed Go (its reflect2 pinned to
#                                 v1.0.2, see go-versions/README.md)
#   COMPAT_MATRIX=full   v2.0.0 and v2.1.2 (the newest tag); the repo-HEAD pseudo-version is the "go" suite
#   GOVERSIONS=v2.1.2    explicit list (space or comma separated), overrides both
# Scenario ids: GV<digits>-<name>, e.g. GV200-SYNC; client column go-v2.0.0. Names: SYNC ASYNC ONEWAY BATCH PUSH PULL
# POLL ORDER TXN (what each checks: go-versions/README.md). A feature the release lacks passes with "n/a: ...".
# shellcheck shell=bash

PLUGIN_SUITES+=(goversions)
GOVERSIONS_DIR="${COMPAT_DIR:?}/go-versions"
GOVERSIONS_NAMES=(SYNC ASYNC ONEWAY BATCH PUSH PULL POLL ORDER TXN) # = groups in go-versions/cmd/compat-gv/main.go

goversions_versions() {
  local v=${GOVERSIONS:-}
  if [ -z "$v" ]; then
    if [ "${COMPAT_MATRIX:-}" = full ]; then v="v2.0.0 v2.1.2"; else v="v2.0.0"; fi
  fi
  echo "${v//,/ }"
}

goversions_ids_of() { # goversions_ids_of <version> -> GV200-SYNC ...
  local p n
  p=${1#v}; p=${p%%-*}; p="GV${p//./}"
  for n in "${GOVERSIONS_NAMES[@]}"; do echo "$p-$n"; done
}

goversions_ids() {
  local v
  for v in $(goversions_versions); do goversions_ids_of "$v"; done
}

# download the modules and build the binaries of this run's releases (idempotent; ~0.1 s when up to date)
goversions_setup() {
  # shellcheck disable=SC2046
  "$GOVERSIONS_DIR/build.sh" $(goversions_versions)
}

suite_goversions() { # suite_goversions <broker addr>
  local A=$1 v ids bin out t0
  for v in $(goversions_versions); do
    # shellcheck disable=SC2046
    ids=$(filter_only $(goversions_ids_of "$v") | paste -sd, -)
    [ -n "$ids" ] || continue
    bin="$GOVERSIONS_DIR/bin/compat-gv-$v"
    out="$RUN_DIR/goversions-$v-$CUR_BROKER.out"
    if ! "$GOVERSIONS_DIR/build.sh" "$v" > "$out.build" 2>&1 || [ ! -x "$bin" ]; then
      fail_all "compat-gv for rocketmq-client-go $v not built: $(tail -n 3 "$out.build" | tr '\n' ' ' | cut -c1-300)" ${ids//,/ }
      continue
    fi
    t0=$SECONDS
    # the NameServer is always passed explicitly (old releases otherwise fall back to NAMESRV_ADDR, then an http
    # lookup of jmenv.tbsite.net); NAMESRV_ADDR is set too, loopback only
    NAMESRV_ADDR="$NS_ADDR" timeout -k 5 330 "$bin" -ns "$NS_ADDR" -broker "$A" -broker-name "$BROKER_NAME" \
      -run "$ids" -run-id "${RID}${CUR_BROKER:0:1}" -log "$RUN_DIR/goversions-$v-$CUR_BROKER.log" > "$out" 2>&1
    ingest_json_lines "$out" "$ids" "go-$v"
    log "goversions: rocketmq-client-go $v on $CUR_BROKER took $((SECONDS - t0)) s"
  done
}
goversions_client_of() { # GV200-SYNC -> go-v2.0.0
  local p=${1%%-*}; p=${p#GV}
  echo "go-v${p:0:1}.${p:1:1}.${p:2}"
}
