/* ReadyToRun symbols: see r2rsym.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/r2r.h"
#include "lib/untrusted.h"
#include "r2rsym.h"

/* What the runtime appends to a precompiled method's name in its jitdump. */
#define PREJIT "[PreJIT]"

/* Where a composite image's components are: its own directory, as the
 * process sees it. */
struct beside {
	pid_t root_pid;
	const char *path; /* the composite file's */
	size_t dir_len;
};

/* A component is a file the process chose like the image itself: opened
 * under lib/untrusted's rules, inside the process's root; for a process
 * that is gone, the same path in ours (as the symbolizer reads the image
 * itself then), lib/r2r's MVID check standing in for the inode check a
 * mapping allows. */
static int open_beside(void *arg, const char *file_name)
{
	const struct beside *b = arg;
	struct tr_untrusted u;
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)b->dir_len, b->path, file_name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = tr_untrusted_open(b->root_pid > 0 ? b->root_pid : 0, path, TR_R2R_MAX_SIZE, &u);
	if (fd == -ESRCH && b->root_pid > 0)
		fd = tr_untrusted_open(0, path, TR_R2R_MAX_SIZE, &u);
	return fd;
}

int tr_r2r_symbols(struct tr_elf *e, int fd, pid_t root_pid, const char *path,
		   struct tr_arena *arena)
{
	struct tr_r2r r;
	char name[TR_R2R_NAME_MAX + 64];
	const char *slash = path ? strrchr(path, '/') : NULL;
	struct beside b = { root_pid, path, slash ? (size_t)(slash - path) : 0 };
	/* Only an absolute path says where the components are. */
	int ret = tr_r2r_read_with(fd, TR_R2R_SIGNATURES, slash && path[0] == '/' ? open_beside : NULL,
				   &b, &r, NULL, 0);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < r.n_sec && e->n_loads < TR_ELF_MAX_LOADS; i++)
		e->loads[e->n_loads++] = (struct tr_elf_load){ .off = r.sec[i].file_off,
							       .filesz = r.sec[i].file_size,
							       .vaddr = r.sec[i].rva };
	for (size_t i = 0; i < r.n && ret == 0; i++) {
		const struct tr_r2r_method *m = &r.v[i];
		const char *text = m->signature ? m->signature : m->name;
		char *copy;
		int len;

		if (!text || m->end_rva <= m->start_rva)
			continue;
		len = snprintf(name, sizeof(name), "%s" PREJIT, text);
		copy = tr_arena_strndup(arena, name, (size_t)len < sizeof(name) ? (size_t)len
									 : sizeof(name) - 1);
		if (!copy || tr_symtab_add(&e->syms, m->start_rva, m->end_rva - m->start_rva, copy,
					   0) < 0)
			ret = -ENOMEM;
	}
	tr_r2r_free(&r);
	if (ret == 0)
		e->symbols_from = "ReadyToRun";
	return ret;
}
