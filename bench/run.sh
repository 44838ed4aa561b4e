#!/usr/bin/env bash
# Runs every backend's benchmark (bench/*/run.sh) side by side with the tool a
# user would otherwise use, and writes the figures, with the command that
# reproduces each, to docs/PERFORMANCE.md.
#   bash bench/run.sh [NAME...]      (as root, after scripts/test.sh or a build)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export BUILD=${BUILD:-$top/_build/plain}
if [ ! -x "$BUILD/tracerig" ]; then
	bash scripts/deps.sh && scripts/build.sh "$BUILD" || exit 1
fi
export TRACERIG="$BUILD/tracerig"
export TRACERIG_PLUGIN_PATH="$BUILD/plugins"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for d in bench/*/; do
		[ -x "$d/run.sh" ] || [ -f "$d/run.sh" ] && names+=("$(basename "$d")")
	done
fi

out=$(mktemp)
{
	echo "# Performance"
	echo
	echo "Measured by \`bash bench/run.sh\` on $(date -u +%Y-%m-%d): $(nproc) CPUs,"
	echo "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r)."
	echo "Each section compares tracerig with the tool a user would otherwise use,"
	echo "in the same run, on the same workload; rerun one with \`bash bench/run.sh NAME\`."
	echo
} >"$out"
status=0
for name in "${names[@]}"; do
	echo "bench: $name" >&2
	echo "<!-- bench:$name -->" >>"$out"
	if ! bash "bench/$name/run.sh" >>"$out"; then
		echo "bench: $name failed" >&2
		echo "## $name: the benchmark failed on this machine (see its output)" >>"$out"
		status=1
	fi
	echo >>"$out"
done
# Keep sections of benchmarks not rerun this time, and the file's order
# and header: a rerun section takes its old place (a new one goes last).
if [ $# -gt 0 ] && [ -f docs/PERFORMANCE.md ]; then
	python3 - "$out" docs/PERFORMANCE.md <<'PY'
import re, sys
new, old = sys.argv[1], sys.argv[2]
split = lambda path: re.split(r'(?m)^(?=<!-- bench:)', open(path).read())
name = lambda sec: re.match(r'<!-- bench:(\S+) -->', sec).group(1)
fresh = {name(sec): sec for sec in split(new)[1:]}
head, *sections = split(old)
out = [fresh.pop(name(sec), sec) for sec in sections]
open(new, 'w').write(head + ''.join(out) + ''.join(fresh.values()))
PY
fi
mv "$out" docs/PERFORMANCE.md
echo "bench: wrote docs/PERFORMANCE.md" >&2
exit $status
