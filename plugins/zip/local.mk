if BUILD_PLUGIN_ZIP
plugin_LTLIBRARIES += plugins/zip/zip.la
plugins_zip_zip_la_SOURCES = plugins/zip/plugin.c
plugins_zip_zip_la_CFLAGS = $(AM_CFLAGS) $(LIBZIP_CFLAGS) -include config.h
plugins_zip_zip_la_LIBADD = lib/libtrutil.la $(LIBZIP_LIBS)
plugins_zip_zip_la_LDFLAGS = $(plugin_ldflags)
endif
TESTS += tests/zip/zip.sh
dist_check_SCRIPTS += tests/zip/zip.sh
