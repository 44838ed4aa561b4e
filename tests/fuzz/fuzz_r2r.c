/* libFuzzer target: the ReadyToRun reader (lib/r2r.c), fed PE images as a
 * traced process (or its container) may plant them where the runtime maps
 * its framework assemblies.  A refusal must say why and leave nothing; a
 * table that comes out must be sorted and disjoint, its names and whole
 * names readable (ASan), the whole name holding the short one, and lookups
 * through it must agree with it. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/r2r.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_r2r r;
	char why[256];
	int rc = tr_r2r_parse(data, size, TR_R2R_SIGNATURES, &r, why, sizeof(why));
	uint32_t rva;

	if (rc) {
		assert(rc == -EINVAL || rc == -ENOEXEC);
		assert(why[0]);
		assert(r.n == 0 && r.v == NULL && r.names == NULL && r.sec == NULL);
		return 0;
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct tr_r2r_method *m = &r.v[i];

		assert(m->start_rva < m->end_rva);
		assert(i == 0 || r.v[i - 1].end_rva <= m->start_rva);
		assert(strlen(m->name) > 0);
		assert(m->signature && strlen(m->signature) <= TR_R2R_NAME_MAX);
		assert(strstr(m->signature, m->name) || strlen(m->signature) == TR_R2R_NAME_MAX);
		assert(tr_r2r_find(&r, m->start_rva) == m);
		assert(tr_r2r_find(&r, m->end_rva - 1) == m);
	}
	for (size_t i = 0; i < r.n_sec; i++)
		if (tr_r2r_file_rva(&r, r.sec[i].file_off, &rva) == 0)
			(void)tr_r2r_find(&r, rva);
	(void)tr_r2r_addr_rva(&r, 0x7f0000001234ull, 0x7f0000000000ull, 0, &rva);
	tr_r2r_free(&r);
	return 0;
}
