#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "elfopen.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int usable;

static void init(void)
{
	usable = elf_version(EV_CURRENT) != EV_NONE;
}

int tr_libelf_ready(void)
{
	pthread_once(&once, init);
	return usable ? 0 : -ENOTSUP;
}

Elf *tr_elf_open_fd(int fd, int *err)
{
	Elf *elf;

	*err = tr_libelf_ready();
	if (*err)
		return NULL;
	/* Read, not mapped: the objects are traced processes' files, and one
	 * truncated while mapped would make our reads past its new end
	 * fault (SIGBUS); read, a cut file is only a malformed one. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		*err = -ENOEXEC;
	return elf;
}
