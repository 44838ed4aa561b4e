# `tracerig report` (the command is core/report.c): one concern per file.
tr_report_sources = \
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
