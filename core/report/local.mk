# `tracerig report` (the command is report.c) and `tracerig convert`
# (convert.c): one concern per file.
tr_report_sources = \
	core/report/report.c core/report/report.h \
	core/report/convert.c core/report/convert.h \
	core/report/archive.c core/report/archive.h \
	core/report/lines.c core/report/lines.h \
	core/report/text.c core/report/text.h \
	core/report/counts.c core/report/counts.h \
	core/report/profile.c core/report/profile.h \
	core/report/perfscript.c core/report/perfscript.h \
	core/report/folded.c core/report/folded.h \
	core/report/cpu.c core/report/cpu.h \
	core/report/offcpu.c core/report/offcpu.h \
	core/report/overview.c core/report/overview.h \
	core/report/runtime.c core/report/runtime.h
