/* The shared symbolizer behind the services' symbolize* calls. */
#ifndef TR_SYMBOLIZER_H
#define TR_SYMBOLIZER_H

#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

struct tr_symbolizer;

struct tr_symbolizer *tr_symbolizer_new(void);
/* Frees every cache; strings handed out by lookups die with it. */
void tr_symbolizer_free(struct tr_symbolizer *sym);

/* pid is a host PID; kernel != 0 for kernel addresses (pid ignored).
 * Thread-safe.  Returns 0 with out->name set, or -ENOENT with out->name
 * NULL and out->dso naming the object when the mapping is known
 * ("[unknown]" otherwise).  dso_offset is what perf shows as the offset
 * into the object (address - map start + map file offset; the address
 * itself for the kernel and JIT code, whose dso is "/tmp/perf-PID.map"). */
int tr_symbolizer_lookup(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			 struct tracerig_symbol *out);
/* The frame's name as every output writes it, from the (process, address)
 * cache (see the service frame_name in tracerig/plugin.h).  Thread-safe.
 * *name and out's strings live until tr_symbolizer_free. */
int tr_symbolizer_frame_name(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			     const char **name, struct tracerig_symbol *out);
/* The same for a frame of a sample taken at sample_ns (CLOCK_MONOTONIC;
 * 0: unknown): a miss rereads what the process's code is named by
 * exactly when the sample is newer than the last read (see the service
 * frame_name with a time). */
int tr_symbolizer_frame_name_at(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
				uint64_t sample_ns, const char **name, struct tracerig_symbol *out);
/* The generation of the process's address space that frame names are
 * cached under (see the service frame_generation).  Thread-safe.  0, or
 * -ENOMEM. */
int tr_symbolizer_frame_generation(struct tr_symbolizer *sym, pid_t pid, uint32_t *gen);
/* Rereads the process's mappings now and reads every object, its vDSO and
 * its JIT maps while the process (and its mount namespace) still exists,
 * so it resolves after it exits.  Call again after an exec.  -ESRCH when
 * the process is gone (or has no mappings: kernel threads). */
int tr_symbolizer_remember(struct tr_symbolizer *sym, pid_t pid);
/* A perf-PID.map or jitdump file (format recognised from its content) with
 * JIT symbols for `pid`, read now and reread as it grows.  Without one,
 * the process's own /tmp/perf-<NSpid>.map (through /proc/PID/root) and the
 * jit-<NSpid>.dump it maps are used. */
int tr_symbolizer_add_jit_file(struct tr_symbolizer *sym, pid_t pid, const char *path);

/* The file of the executable mapping holding addr (see the service
 * symbolizer_object in tracerig/plugin.h).  Thread-safe.  Besides
 * -ENOENT, -EMFILE or -ENFILE when the object (or the process's maps)
 * could not be opened for want of descriptors: nothing is held against
 * it, it may be asked again once some are closed. */
int tr_symbolizer_object(struct tr_symbolizer *sym, pid_t pid, uint64_t addr,
			 struct tracerig_object *out);

/* The mapping holding addr (see the service symbolizer_mapping in
 * tracerig/plugin.h).  Thread-safe. */
int tr_symbolizer_mapping(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			  struct tracerig_frame_mapping *out);

/* The running kernel's _text and _etext (the service kernel_text).
 * Thread-safe. */
int tr_symbolizer_kernel_text(struct tr_symbolizer *sym, uint64_t *text, uint64_t *etext);

/* The process model fed by a recording (see the services of the same
 * names in tracerig/plugin.h). */
int tr_symbolizer_record_mmap(struct tr_symbolizer *sym, const struct tracerig_mapping *m);
int tr_symbolizer_record_exec(struct tr_symbolizer *sym, pid_t pid);
int tr_symbolizer_record_fork(struct tr_symbolizer *sym, pid_t parent, pid_t child);
/* Drops what is kept for `pid` (its mappings, JIT symbols, frame names):
 * its process exited and nothing will ask about it again.  Objects, and
 * the strings handed out, stay.  A later call about `pid` starts a new
 * process, under generations it never had.  0, or -ENOENT when nothing
 * was kept. */
int tr_symbolizer_forget(struct tr_symbolizer *sym, pid_t pid);
/* How many processes state is kept for, and (frames) how many frame names:
 * what grows with the processes a session sees. */
size_t tr_symbolizer_processes(struct tr_symbolizer *sym, size_t *frames);

#endif
