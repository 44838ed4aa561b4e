# tracerig@.service, with the install's paths put in at make time (bindir
# and sysconfdir are in terms of ${prefix} until then).  configure's
# --with-systemdsystemunitdir says where it goes; =no leaves it out.
EXTRA_DIST += conf/systemd/tracerig@.service.in
CLEANFILES += conf/systemd/tracerig@.service
if INSTALL_SYSTEMD_UNIT
systemdsystemunit_DATA = conf/systemd/tracerig@.service
endif
# Built by `make` even when not installed: tests/core/service.sh checks it.
noinst_DATA = conf/systemd/tracerig@.service
conf/systemd/tracerig@.service: $(srcdir)/conf/systemd/tracerig@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) conf/systemd && \
	sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		$(srcdir)/conf/systemd/tracerig@.service.in >$@.tmp && mv $@.tmp $@
# distcheck installs as a user under its own prefix.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-systemdsystemunitdir='$${dc_install_base}/lib/systemd/system'
