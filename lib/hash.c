#include "config.h"

#include <string.h>

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

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

uint64_t tr_hash_words(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ seed ^ len, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = mix(h, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = mix(h, w);
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32);
}
