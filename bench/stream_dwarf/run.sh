#!/usr/bin/env bash
# bench/stream with callchain = dwarf (perf: --call-graph dwarf): the
# samples' user stacks copied and unwound, by tracerig while collecting
# (converted as far as they are unwound), by perf script after.
#   bash bench/stream_dwarf/run.sh [BUILDDIR]      (as root)
# Environment as bench/stream's; VARIANTS defaults to "yes/yes yes/yes/6/zlib",
# DURATIONS to "10 60 120".
export CALLCHAIN=dwarf
export VARIANTS=${VARIANTS:-"yes/yes yes/yes/6/zlib"}
# perf script unwinds every sample after the recording: minutes at 300 s.
export DURATIONS=${DURATIONS:-"10 60 120"}
exec bash "$(dirname "$0")/../stream/run.sh" "$@"
