#include "config.h"

#include "lib/sanitize.h"
#include "text.h"

#define BUFS 8

const char *rp_tty(const char *s)
{
	static char bufs[BUFS][1024];
	static unsigned next;
	char *b = bufs[next++ % BUFS];

	if (!s)
		return "?";
	tr_sanitize_name(b, sizeof(bufs[0]), s);
	return b;
}
