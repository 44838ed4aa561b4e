/* Command-line parsing into struct tr_options. */
#ifndef TR_CLI_H
#define TR_CLI_H

#include <stdio.h>

#include "core/session/options.h"

/* Returns 0, or an exit status (after printing --help/--version or an
 * error) that main should return. */
int tr_cli_parse(int argc, char **argv, struct tr_options *opts, int *done);
void tr_cli_free(struct tr_options *opts);
void tr_cli_usage(FILE *out);

#endif
