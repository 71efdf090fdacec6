# shellcheck shell=bash
# compat-tests/suites/cpp.sh — plug-in suite "cpp": the C++ SDK (rocketmq-client-cpp, the librocketmq bundled in the
# PyPI wheel rocketmq==0.4.4) through its Python binding. Scenarios: compat-tests/cpp/scenarios.py (CPP-01..CPP-13,
# `--list`); stored records are checked with a raw PULL (compat-tests/cpp/rawmq.py), not through the client under test.
# Needs: python3 with venv + pip; cpp_setup makes compat-tests/.venv-cpp (idempotent, < 1 s when up to date).
# Env: CPP_CONSUME_TIMEOUT (s, default 15) = how long a consumer scenario waits for its messages.
PLUGIN_SUITES+=(cpp)
CPP_WHEEL_VERSION=${CPP_WHEEL_VERSION:-0.4.4}
CPP_VENV=${CPP_VENV:-$COMPAT_DIR/.venv-cpp}
CPP_IDS=(CPP-01 CPP-02 CPP-03 CPP-04 CPP-05 CPP-06 CPP-07 CPP-08 CPP-09 CPP-10 CPP-11 CPP-12 CPP-13)

cpp_ids() { printf '%s\n' "${CPP_IDS[@]}"; }

cpp_ready() {
  [ -x "$CPP_VENV/bin/python" ] && "$CPP_VENV/bin/python" -c '
import sys, importlib.metadata as m
sys.exit(0 if m.version("rocketmq") == sys.argv[1] else 1)' "$CPP_WHEEL_VERSION" 2> /dev/null
}

cpp_setup() {
  cpp_ready && return 0
  echo "cpp: creating $CPP_VENV with rocketmq==$CPP_WHEEL_VERSION (manylinux1 wheel bundling librocketmq)" >&2
  python3 -m venv "$CPP_VENV" || return 1
  printf '*\n' > "$CPP_VENV/.gitignore"
  "$CPP_VENV/bin/pip" install -q --disable-pip-version-check "rocketmq==$CPP_WHEEL_VERSION" || return 1
  "$CPP_VENV/bin/python" -c 'import rocketmq.client' || return 1
}

suite_cpp() { # suite_cpp <broker addr>
  local A=$1 ids; ids=$(filter_only "${CPP_IDS[@]}" | paste -sd, -)
  [ -n "$ids" ] || return 0
  if ! cpp_ready && ! cpp_setup > "$RUN_DIR/cpp-setup.out" 2>&1; then
    fail_all "cpp_setup failed (python venv + pip install rocketmq==$CPP_WHEEL_VERSION): $(tail -n 2 "$RUN_DIR/cpp-setup.out" | tr '\n' ' ' | cut -c1-200)" ${ids//,/ }
    return
  fi
  local out="$RUN_DIR/cpp-$CUR_BROKER.out" home="$RUN_DIR/cpp-home-$CUR_BROKER"
  mkdir -p "$home"   # librocketmq writes its logs under $HOME/logs/rocketmq-cpp
  HOME="$home" timeout -k 5 420 "$CPP_VENV/bin/python" "$COMPAT_DIR/cpp/scenarios.py" --ns "$NS_ADDR" --broker "$A" \
    --run-id "${RID}c${CUR_BROKER:0:1}" --only "$ids" > "$out" 2> "$RUN_DIR/cpp-$CUR_BROKER.err"
  ingest_json_lines "$out" "$ids" "cpp-$CPP_WHEEL_VERSION"
}
cpp_client_of() { echo "cpp-$CPP_WHEEL_VERSION"; }
