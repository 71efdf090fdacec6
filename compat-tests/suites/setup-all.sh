#!/usr/bin/env bash
# Runs the <name>_setup function of every plug-in suite in compat-tests/suites (what each needs installed:
# client jars, Python wheels, Go module versions). Called by .ci/run; idempotent.
set -uo pipefail
SUITES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMPAT_DIR=$(dirname "$SUITES_DIR")
export COMPAT_DIR
PLUGIN_SUITES=()
for f in "$SUITES_DIR"/*.sh; do
  case $f in */setup-all.sh) continue ;; esac
  # shellcheck disable=SC1090
  . "$f"
done
rc=0
for p in "${PLUGIN_SUITES[@]}"; do
  if declare -F "${p}_setup" > /dev/null; then
    echo "setup: suite $p"
    "${p}_setup" || { echo "setup of suite $p failed; its scenarios will report it" >&2; rc=1; }
  fi
done
exit $rc
