# The command line: its parsing, and the commands that talk to a detached
# session from outside (`tracerig start/stop/snapshot/status`).  main.c is
# the program's (core/local.mk), the rest in the core library.
tr_cli_sources = \
	core/cli/cli.c core/cli/cli.h \
	core/cli/detach.c core/cli/detach.h
