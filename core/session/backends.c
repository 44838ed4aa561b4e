#include "config.h"

#include <string.h>

#include "backends.h"
#include "lib/closest.h"

static const struct {
	const char *name, *package;
} shipped[] = {
#include "core/session/backends.inc"
};

#define N_SHIPPED (sizeof(shipped) / sizeof(shipped[0]))

const char *tr_backend_package(const char *name)
{
	for (size_t i = 0; i < N_SHIPPED; i++)
		if (strcmp(shipped[i].name, name) == 0)
			return shipped[i].package;
	return NULL;
}

const char *tr_backend_closest(const char *name)
{
	const char *names[N_SHIPPED];

	for (size_t i = 0; i < N_SHIPPED; i++)
		names[i] = shipped[i].name;
	return tr_closest(name, names, N_SHIPPED);
}
