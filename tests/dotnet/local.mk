# The .NET tests: the real runtime (the .NET SDK builds the apps under
# tests/dotnet/apps from source, in the build tree, when a test needs one).
dotnet_tests = tests/dotnet/ipc.sh tests/dotnet/enable.sh tests/dotnet/perfview.sh tests/dotnet/r2r.sh \
	tests/dotnet/r2r-arm64.sh
dotnet_alone_tests = tests/dotnet/lttng.sh tests/dotnet/perfcollect.sh
dotnet_slow_tests = tests/dotnet/frames.sh tests/dotnet/eventpipe.sh
TESTS += $(dotnet_tests)
TESTS_ALONE += $(dotnet_alone_tests)
TESTS_SLOWEST += tests/dotnet/composite.sh
TESTS_SLOW += $(dotnet_slow_tests)
dist_check_SCRIPTS += $(dotnet_tests) $(dotnet_alone_tests) $(dotnet_slow_tests) tests/dotnet/composite.sh
# Events the runtime dropped (tracerig stopped while its buffer fills).
TESTS += tests/dotnet/eventpipe_lost.sh
dist_check_SCRIPTS += tests/dotnet/eventpipe_lost.sh
dist_check_DATA += tests/dotnet/lib-dotnet.sh tests/dotnet/lib-sweep.sh tests/dotnet/r2r-check.py tests/dotnet/unnamed-check.py \
	tests/dotnet/lib-publish.sh tests/dotnet/r2r-map-check.py
EXTRA_DIST += tests/dotnet/apps/hot/Hot.csproj tests/dotnet/apps/hot/Program.cs \
	tests/dotnet/apps/hot/native/hotnative.c \
	tests/dotnet/apps/perfview/PerfViewCheck.csproj tests/dotnet/apps/perfview/Program.cs
EXTRA_DIST += tests/dotnet/apps/web/Web.csproj tests/dotnet/apps/web/Program.cs
# Published with ReadyToRun code: for arm64 with crossgen2's map
# (r2r-arm64.sh), self-contained as one composite image (composite.sh).
EXTRA_DIST += tests/dotnet/apps/r2rmap/R2rMap.csproj tests/dotnet/apps/r2rmap/Program.cs \
	tests/dotnet/apps/composite/Composite.csproj tests/dotnet/apps/composite/Program.cs
