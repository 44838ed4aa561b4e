# The .NET benchmarks (their workload is tests/dotnet/apps/web; what they
# share is bench/dotnet/lib.sh).
EXTRA_DIST += bench/dotnet/lib.sh bench/dotnet/run.sh bench/eventpipe/run.sh
