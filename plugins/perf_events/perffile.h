/* perf.data's file header (tools/perf/util/header.h), as the writer
 * (perfdata.c) lays it out and the converter (script.c) reads it back. */
#ifndef TR_PERF_PERFFILE_H
#define TR_PERF_PERFFILE_H

#include <stdint.h>

/* "PERFILE2" read as a little/big endian u64 tells perf the byte order. */
#define PD_MAGIC 0x32454c4946524550ULL
/* Bits of the header's feature bitmap; the numbers are ABI. */
#define PD_FEAT_BITS 256

struct pd_file_section {
	uint64_t offset, size;
};

struct pd_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct pd_file_section attrs;
	struct pd_file_section data;
	struct pd_file_section event_types; /* unused since perf 3.x */
	uint64_t adds_features[PD_FEAT_BITS / 64];
};

_Static_assert(sizeof(struct pd_file_header) == 104, "perf_file_header is 104 bytes");

#endif
