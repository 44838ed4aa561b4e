#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"
#include "lib/vec.h"

void bytebuf_put(struct bytebuf *b, const void *data, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		void *p = tr_vec_grow(b->p, &b->cap, b->len + n, 1, 4096);

		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

void bytebuf_u32(struct bytebuf *b, uint32_t v)
{
	bytebuf_put(b, &v, sizeof(v));
}

void bytebuf_u64(struct bytebuf *b, uint64_t v)
{
	bytebuf_put(b, &v, sizeof(v));
}
