# Distribution packaging kept upstream: packaging/build-debs.sh copies
# packaging/debian/ into a clean copy of the tree and builds the .debs;
# packaging/rpm/tracerig.spec has the same split.  docs/packaging.md.
EXTRA_DIST += packaging/build-debs.sh packaging/build-rpms.sh packaging/clean-copy.sh \
	packaging/version.sh packaging/debian packaging/rpm docs/packaging.md

# The core on a split install (no packages needed), then the real packages
# in a Debian 12 root, and the RPM spec (each skips without its tools).
dist_check_DATA += tests/packaging/lib-packaging.sh
TESTS += tests/packaging/split.sh
TESTS_SLOWEST += tests/packaging/debs.sh
TESTS_SLOW += tests/packaging/rpms.sh
dist_check_SCRIPTS += tests/packaging/split.sh tests/packaging/debs.sh tests/packaging/rpms.sh
