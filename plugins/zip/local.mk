if BUILD_PLUGIN_ZIP
plugin_LTLIBRARIES += plugins/zip/zip.la
plugins_zip_zip_la_SOURCES = plugins/zip/plugin.c plugins/zip/pieces.c plugins/zip/pieces.h \
	plugins/zip/outfile.c plugins/zip/outfile.h
plugins_zip_zip_la_CFLAGS = $(AM_CFLAGS) $(LIBZIP_CFLAGS) $(ZLIB_CFLAGS) -include config.h
plugins_zip_zip_la_LIBADD = lib/libtrzpiece.la lib/libtrutil.la $(LIBZIP_LIBS) $(ZLIB_LIBS)
plugins_zip_zip_la_LDFLAGS = $(plugin_ldflags)
endif
TESTS += tests/zip/zip.sh
dist_check_SCRIPTS += tests/zip/zip.sh

# Deflated pieces made one entry, and the core's thread that deflates a
# staged file while it grows (no root).
if BUILD_PLUGIN_ZIP
check_PROGRAMS += tests/zip/test_pieces
TESTS += tests/zip/test_pieces
UNIT_TESTS += tests/zip/test_pieces
tests_zip_test_pieces_SOURCES = tests/zip/test_pieces.c plugins/zip/pieces.c
tests_zip_test_pieces_CFLAGS = $(AM_CFLAGS) $(LIBZIP_CFLAGS) $(ZLIB_CFLAGS) -include config.h
tests_zip_test_pieces_LDADD = $(tr_core_libs) $(LIBZIP_LIBS) $(ZLIB_LIBS)
endif
TESTS_SLOW += tests/zip/stream.sh
dist_check_SCRIPTS += tests/zip/stream.sh
