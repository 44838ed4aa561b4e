#include "config.h"

#include "hash.h"

#define FNV1A_PRIME 1099511628211ull

uint64_t tr_fnv1a_more(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= FNV1A_PRIME;
	}
	return h;
}

uint64_t tr_fnv1a_str(const char *s)
{
	uint64_t h = TR_FNV1A_BASIS;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= FNV1A_PRIME;
	}
	return h;
}
