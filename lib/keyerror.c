/* Key values said wrong through config_error (keyerror.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "keyerror.h"

void tr_key_error(const struct tracerig_services *svc, struct tracerig_ctx *ctx, int *count,
		  char *first, size_t first_len, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (svc)
		svc->run->config_error(ctx, key, "%s", msg);
	if (!(*count)++)
		snprintf(first, first_len, "%s: %s", key, msg);
}
