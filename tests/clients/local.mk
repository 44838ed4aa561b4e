# Third-party viewers opening the archive's files in headless Chromium
# (npm packages pinned in package-lock.json, installed by the tests).
check_PROGRAMS += tests/clients/render-flamegraph
tests_clients_render_flamegraph_LDADD = $(tr_core_libs)

TESTS += tests/clients/flamegraph.sh
TESTS_SLOW += tests/clients/speedscope.sh
dist_check_SCRIPTS += tests/clients/speedscope.sh tests/clients/flamegraph.sh
dist_check_DATA += tests/clients/lib-clients.sh tests/clients/speedscope.js \
	tests/clients/flamegraph.js tests/clients/speedscope-schema.js tests/clients/package.json tests/clients/package-lock.json
