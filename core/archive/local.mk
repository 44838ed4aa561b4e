# The archive: the staging area sources write into, the stream that
# packages it as they go, writing it out, and the JSON it holds.  It
# includes nothing from the session.
tr_archive_sources = \
	core/archive/staging.c core/archive/staging.h \
	core/archive/stream.c core/archive/stream.h \
	core/archive/writeback.c core/archive/writeback.h \
	core/archive/output.c core/archive/output.h \
	core/archive/sideband.c core/archive/sideband.h \
	core/archive/json.c core/archive/json.h \
	core/archive/jsonread.c core/archive/jsonread.h
