#!/usr/bin/env bash
# Installs what is missing, builds tracerig, and runs the main job —
# `tracerig -c profiles/cpu.ini` — on the built-in demo workload, then shows
# where the archive is and what it holds.  Run as root on Debian 12.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# What building and the main job need; the test suite's tools (browsers,
# Go, packaging, fuzzing) are scripts/test.sh's (scripts/deps.sh --test).
bash scripts/deps.sh --build
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
echo "== building (scripts/build.sh --no-check _build/plain)"
scripts/build.sh --no-check _build/plain

build=$top/_build/plain
archive=$top/demo.trace.zip
echo "== tracerig -c profiles/cpu.ini -o demo.trace.zip -- tracerig-demo"
"$build/tracerig" -c profiles/cpu.ini -o "$archive" -- "$build/demo/tracerig-demo" --seconds 3

echo
echo "== $archive holds:"
unzip -l "$archive"
echo
echo "== tracerig report demo.trace.zip"
"$build/tracerig" report "$archive"
cat <<EOT

Open cpu.svg from the archive in a browser, perf.data with 'perf report -i',
or the whole .trace.zip in PerfView.  Install with 'make -C _build/plain install'
to run 'tracerig -c profiles/cpu.ini' from anywhere.
EOT
