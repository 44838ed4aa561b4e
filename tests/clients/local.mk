# Third-party viewers opening the archive's files in headless Chromium
# (npm packages pinned in package-lock.json, installed by the tests).
clients_sh_tests = tests/clients/speedscope.sh
TESTS += $(clients_sh_tests)
dist_check_SCRIPTS += $(clients_sh_tests)
dist_check_DATA += tests/clients/lib-clients.sh tests/clients/speedscope.js \
	tests/clients/package.json tests/clients/package-lock.json
