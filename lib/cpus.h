/* The CPUs perf events can be opened on. */
#ifndef TR_LIB_CPUS_H
#define TR_LIB_CPUS_H

#include <stddef.h>

/* The online CPUs (/sys/devices/system/cpu/online, "0-3,6"), in order, in
 * a malloc'd array.  Returns 0 or a negative errno. */
int tr_online_cpus(int **out, size_t *n);

#endif
