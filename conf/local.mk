# Installed configuration: tracerig.conf and the profiles the built
# backends support.
confdir = $(sysconfdir)/tracerig
profilesdir = $(confdir)/profiles
dist_conf_DATA = conf/tracerig.conf
dist_profiles_DATA =
if BUILD_PLUGIN_PERF_EVENTS
dist_profiles_DATA += conf/profiles/cpu.ini conf/profiles/cpu-dwarf.ini conf/profiles/threadtime.ini
endif
if BUILD_PLUGIN_EBPF
dist_profiles_DATA += conf/profiles/offcpu.ini conf/profiles/offcpu-dwarf.ini \
	conf/profiles/offcpu-cfi.ini conf/profiles/cpu-cfi.ini
if BUILD_PLUGIN_PERF_EVENTS
dist_profiles_DATA += conf/profiles/wall.ini
endif
endif
if BUILD_PLUGIN_LTTNG
dist_profiles_DATA += conf/profiles/lttng.ini
if BUILD_PLUGIN_PERF_EVENTS
dist_profiles_DATA += conf/profiles/dotnet.ini
endif
endif
EXTRA_DIST += conf/profiles
