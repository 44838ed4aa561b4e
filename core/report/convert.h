/* `tracerig convert`: an archive's stacks as pprof, folded or speedscope. */
#ifndef TR_CONVERT_H
#define TR_CONVERT_H

/* argv[0] is "convert"; returns the exit status. */
int tr_convert_main(int argc, char **argv);

#endif
