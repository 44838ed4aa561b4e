# Distribution packaging kept upstream: packaging/build-debs.sh copies
# packaging/debian/ into a clean copy of the tree and builds the .debs;
# packaging/rpm/tracerig.spec has the same split.  docs/packaging.md.
EXTRA_DIST += packaging/build-debs.sh packaging/build-rpms.sh packaging/clean-copy.sh \
	packaging/version.sh packaging/debian packaging/rpm docs/packaging.md

# The core on a split install (no packages needed), then the real packages
# in a Debian 12 root, and the RPM spec (each skips without its tools).
packaging_sh_tests = tests/packaging/split.sh tests/packaging/debs.sh tests/packaging/rpms.sh
dist_check_DATA += tests/packaging/lib-packaging.sh
TESTS += $(packaging_sh_tests)
dist_check_SCRIPTS += $(packaging_sh_tests)
