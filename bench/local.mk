# The .NET benchmark (its workload is tests/dotnet/apps/web).
EXTRA_DIST += bench/dotnet/run.sh
