/* The hash functions of every table in the tree: FNV-1a for short
 * strings and bytes, a word-at-a-time hash for long keys, Knuth's
 * multiplicative hash for PIDs, Fibonacci hashing for 64-bit keys and a
 * multiply-mix for keys of several numbers.  None is meant to resist
 * chosen input; the tables (lib/probe.h) probe linearly and grow, so a bad
 * spread costs time, never memory or correctness. */
#ifndef TR_LIB_HASH_H
#define TR_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TR_FNV1A_BASIS 0xcbf29ce484222325ull

/* Continues an FNV-1a hash `h` over `len` bytes: start from TR_FNV1A_BASIS,
 * or from it mixed with a part of the key that is not bytes (a pointer). */
uint64_t tr_fnv1a_more(uint64_t h, const void *data, size_t len);

static inline uint64_t tr_fnv1a(const void *data, size_t len)
{
	return tr_fnv1a_more(TR_FNV1A_BASIS, data, len);
}

uint64_t tr_fnv1a_str(const char *s);

/* Bytes hashed eight at a time, from `seed` (0, or a part of the key that
 * is not bytes: a parent pointer): for long keys (folded stacks, frame
 * names), where byte-wise FNV-1a was a tenth of a conversion's CPU.  Not
 * the same values as FNV-1a. */
uint64_t tr_hash_words(uint64_t seed, const void *data, size_t len);

/* One more 64-bit part of a key of several (ids, offsets, pointers), into
 * `h`: finish with h ^ (h >> 31) so that a mask of the low bits sees the
 * high ones. */
static inline uint64_t tr_hash_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x9E3779B97F4A7C15ull;
}

/* PIDs are dense small numbers: multiplying spreads them over the table. */
static inline size_t tr_pid_hash(pid_t pid)
{
	return (size_t)pid * 2654435761u;
}

/* A 64-bit key (an address, a PID widened) by Fibonacci hashing, the high
 * half folded into the low so that a mask of the low bits sees it all. */
static inline uint64_t tr_u64_hash(uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull;

	return h ^ (h >> 32);
}

/* A frame's key, (process, generation of its maps, address), as the core's
 * frame cache and perf_events' frame texts both key on it. */
static inline size_t tr_frame_key_hash(pid_t pid, uint32_t gen, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull ^
		     ((uint64_t)(uint32_t)pid << 32 | gen) * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h ^ (h >> 29));
}

#endif
