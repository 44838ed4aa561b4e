#!/usr/bin/env bash
# ebpf in flight mode: what reading the aggregation map costs at every
# bucket, key by key vs in batches (bench/ebpf_flight/readmap.c).  Prints
# a Markdown section.
#   bash bench/ebpf_flight/run.sh      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "ebpf_flight: run as root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -I "$top/plugins/ebpf" -o "$tmp/readmap" "$top/bench/ebpf_flight/readmap.c" -lbpf
rows=$(for n in 1000 10000 65536; do "$tmp/readmap" "$n"; done)
full=$(printf '%s\n' "$rows" | awk -F' *\\| *' '$2 == 65536 { sub(/ ms/, "", $4); print $4 }')
cat <<MD
## ebpf in flight mode: reading the aggregation at every bucket

In flight mode the ebpf backend reads its whole aggregation map at every
bucket boundary (a window / 8, at least 250 ms; [flight.md](flight.md)).
Time to read a map of the \`agg\` map's key and value sizes holding N
entries, key by key (get_next_key + lookup, two system calls an entry) and
in batches of 4096 (BPF_MAP_LOOKUP_BATCH, what oc_read does, falling back
to the walk on kernels before 5.6); median of 5 reads:

    bash bench/ebpf_flight/run.sh

| entries | key by key | batches |
|---|---|---|
$rows

65536 entries is aggregation_size's default, the map full: read in
batches, ${full} ms of one CPU per bucket, i.e. about $(awk -v t="$full" 'BEGIN { printf "%.1f", t / 3750 * 100 }')% of it with the
default 30 s window (3.75 s buckets) and $(awk -v t="$full" 'BEGIN { printf "%.0f", t / 250 * 100 }')% with a window of 2 s or less
(250 ms buckets).  A few thousand entries, the usual off-CPU profile of a
service, cost a few ms a bucket.
MD
