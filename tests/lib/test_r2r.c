/* ReadyToRun method tables read from the framework assemblies installed
 * here (found through `dotnet --list-runtimes`), and hostile images made
 * from them: truncated, with bytes changed, with lengths that lie.  arm64
 * code is tested on an x64 image made arm64 (its RUNTIME_FUNCTIONs
 * rewritten with their lengths in the unwind data, both forms), composite
 * images on those tests/dotnet/composite.sh and r2r-arm64.sh publish in
 * the build tree (skipped until they ran there; R2R_TEST_APPS names
 * another build tree's tests/dotnet/apps). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/r2r.h"
#include "../testing.h"

static char fx_dir[4096]; /* .../Microsoft.NETCore.App/VERSION/, "" without one */

/* The newest Microsoft.NETCore.App that dotnet lists ("NAME VERSION [DIR]"). */
static void find_runtime(void)
{
	char line[4096];
	FILE *f = popen("dotnet --list-runtimes 2>/dev/null", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char ver[256], dir[3000];

		if (sscanf(line, "Microsoft.NETCore.App %255s [%2999[^]]]", ver, dir) == 2)
			snprintf(fx_dir, sizeof(fx_dir), "%s/%s/", dir, ver);
	}
	pclose(f);
}

static char *path_of(const char *dll)
{
	static char p[4500];

	snprintf(p, sizeof(p), "%s%s", fx_dir, dll);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *b = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (b = malloc((size_t)st.st_size)) &&
	    read(fd, b, (size_t)st.st_size) != st.st_size) {
		free(b);
		b = NULL;
	}
	*len = b ? (size_t)st.st_size : 0;
	close(fd);
	return b;
}

static int read_dll(const char *dll, unsigned flags, struct tr_r2r *r, char *why, size_t why_len)
{
	int fd = open(path_of(dll), O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = tr_r2r_read(fd, flags, r, why, why_len);
	close(fd);
	return rc;
}

/* Sorted, disjoint, non-empty ranges with names: what tr_r2r_find's
 * binary search relies on.  Returns the number of violations. */
static size_t bad_ranges(const struct tr_r2r *r)
{
	size_t bad = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].start_rva >= r->v[i].end_rva || !r->v[i].name || !r->v[i].name[0])
			bad++;
		if (i && r->v[i - 1].end_rva > r->v[i].start_rva)
			bad++;
	}
	return bad;
}

static const struct tr_r2r_method *by_name(const struct tr_r2r *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

static const struct tr_r2r_method *by_signature(const struct tr_r2r *r, const char *sig)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].signature && strcmp(r->v[i].signature, sig) == 0)
			return &r->v[i];
	return NULL;
}

static size_t count_prefix(const struct tr_r2r *r, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += strncmp(r->v[i].name, prefix, strlen(prefix)) == 0;
	return n;
}

DEF_TEST(corelib_names_its_methods)
{
	struct tr_r2r r;
	char why[256];
	const struct tr_r2r_method *m;
	int rc = read_dll("System.Private.CoreLib.dll", 0, &r, why, sizeof(why));

	if (rc) {
		TEST_FAIL("System.Private.CoreLib.dll: %d %s", rc, why);
		return;
	}
	EXPECT_TRUE(r.n > 20000);
	EXPECT_EQ_INT(0, bad_ranges(&r));
	EXPECT_TRUE(r.rtr_major >= 5);
	/* Plain methods, a nested type, a generic type's shared code. */
	m = by_name(&r, "System.String::Concat");
	CHECK_NOT_NULL(m);
	EXPECT_TRUE(by_name(&r, "System.String::IndexOf") != NULL);
	EXPECT_TRUE(by_name(&r, "Interop+Sys::Write") != NULL);
	EXPECT_TRUE(by_name(&r, "System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]::TryInsert") != NULL);
	EXPECT_TRUE(count_prefix(&r, "System.Collections.Generic.List`1[System.Int32]::") > 0);
	/* A lookup inside the code, at its start and past its end. */
	EXPECT_TRUE(tr_r2r_find(&r, m->start_rva) == m);
	EXPECT_TRUE(tr_r2r_find(&r, m->end_rva - 1) == m);
	EXPECT_TRUE(tr_r2r_find(&r, m->end_rva) != m);
	EXPECT_TRUE(tr_r2r_find(&r, r.v[0].start_rva - 1) == NULL);
	EXPECT_TRUE(tr_r2r_find(&r, r.v[r.n - 1].end_rva) == NULL);
	tr_r2r_free(&r);
}

DEF_TEST(system_text_json_names_its_methods)
{
	struct tr_r2r r;
	char why[256];
	int rc = read_dll("System.Text.Json.dll", 0, &r, why, sizeof(why));

	if (rc) {
		TEST_FAIL("System.Text.Json.dll: %d %s", rc, why);
		return;
	}
	EXPECT_TRUE(r.n > 2000);
	EXPECT_EQ_INT(0, bad_ranges(&r));
	EXPECT_TRUE(count_prefix(&r, "System.Text.Json.JsonSerializer::") > 10);
	EXPECT_TRUE(by_name(&r, "System.Text.Json.Utf8JsonWriter::WriteStartObject") != NULL);
	tr_r2r_free(&r);
}

/* Whole names as the runtime writes them in a jitdump (seen in
 * jit-PID.dump of .NET 10.0.12, less "[PreJIT]"), and none without the
 * flag. */
DEF_TEST(signatures_are_written_as_the_runtime_does)
{
	static const char *const want[] = {
		"void [System.Private.CoreLib] System.AppContext::Setup(char**,char**,int32)",
		"instance bool [System.Private.CoreLib] System.Collections.Generic.Dictionary`2"
		"[System.__Canon,System.__Canon]::TryInsert(!0,!1,valuetype "
		"System.Collections.Generic.InsertionBehavior)",
		"uint8& [System.Private.CoreLib] System.Runtime.CompilerServices.StaticsHelpers::"
		"GetGCStaticBase(valuetype System.Runtime.CompilerServices.MethodTable*)",
		"native int [System.Private.CoreLib] System.Diagnostics.Tracing.EventPipeInternal::"
		"CreateProvider(string,method unmanaged void *(uint8*,int32,uint8,int64,int64,"
		"valuetype Interop/Advapi32/EVENT_FILTER_DESCRIPTOR*,void*),void*)",
	};
	struct tr_r2r r;
	char why[256];
	int rc = read_dll("System.Private.CoreLib.dll", TR_R2R_SIGNATURES, &r, why, sizeof(why));

	if (rc) {
		TEST_FAIL("System.Private.CoreLib.dll: %d %s", rc, why);
		return;
	}
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		size_t i;

		for (i = 0; i < r.n; i++)
			if (r.v[i].signature && strcmp(r.v[i].signature, want[k]) == 0)
				break;
		if (i == r.n)
			TEST_FAIL("no method is \"%s\"", want[k]);
	}
	for (size_t i = 0; i < r.n; i++)
		if (!r.v[i].signature || !strstr(r.v[i].signature, r.v[i].name)) {
			TEST_FAIL("%s: signature \"%s\"", r.v[i].name, r.v[i].signature ? r.v[i].signature : "(null)");
			break;
		}
	tr_r2r_free(&r);

	rc = read_dll("System.Text.Json.dll", TR_R2R_SIGNATURES, &r, why, sizeof(why));
	if (rc) {
		TEST_FAIL("System.Text.Json.dll: %d %s", rc, why);
		return;
	}
	/* Types of another assembly say which; custom modifiers follow. */
	EXPECT_TRUE(by_signature(&r, "class [System.Runtime]System.Type[] [System.Text.Json] "
				 "System.Text.Json.Reflection.ReflectionExtensions::GetSortedTypeHierarchy("
				 "class [System.Runtime]System.Type)") != NULL);
	EXPECT_TRUE(by_signature(&r, "instance void modreq([System.Runtime]System.Runtime.CompilerServices."
				 "IsExternalInit) [System.Text.Json] System.Text.Json.Serialization."
				 "JsonConverter::set_ConverterStrategy(valuetype System.Text.Json."
				 "ConverterStrategy)") != NULL);
	tr_r2r_free(&r);

	rc = read_dll("System.Text.Json.dll", 0, &r, why, sizeof(why));
	EXPECT_EQ_INT(0, rc);
	EXPECT_TRUE(r.n > 0 && r.v[0].signature == NULL);
	tr_r2r_free(&r);
}

/* The two ways the runtime maps an image (r2r.h): section by section with
 * page-rounded offsets, and flat; both go through the file offset. */
DEF_TEST(mapped_addresses_become_rvas)
{
	struct tr_r2r r;
	char why[256];
	uint32_t rva = 0;
	uint64_t base = 0x7f0000000000ull;
	const struct tr_r2r_section *text;
	int rc = read_dll("System.Private.CoreLib.dll", 0, &r, why, sizeof(why));

	if (rc) {
		TEST_FAIL("System.Private.CoreLib.dll: %d %s", rc, why);
		return;
	}
	CHECK_NOT_NULL(r.sec);
	text = &r.sec[0];
	/* Image layout: .text mapped at base + (VirtualAddress & ~0xfff)
	 * from file offset PointerToRawData & ~0xfff. */
	EXPECT_EQ_INT(0, tr_r2r_addr_rva(&r, base + (text->rva & ~0xfffu) + 0x40 + (text->file_off & 0xfff),
					 base + (text->rva & ~0xfffu), text->file_off & ~0xfffu, &rva));
	EXPECT_EQ_INT(text->rva + 0x40, rva);
	/* Flat: the whole file from offset 0. */
	EXPECT_EQ_INT(0, tr_r2r_addr_rva(&r, base + text->file_off + 0x40, base, 0, &rva));
	EXPECT_EQ_INT(text->rva + 0x40, rva);
	/* The headers are no section's; nor is an address below the mapping. */
	EXPECT_EQ_INT(-ENOENT, tr_r2r_addr_rva(&r, base + 0x10, base, 0, &rva));
	EXPECT_EQ_INT(-ENOENT, tr_r2r_addr_rva(&r, base - 1, base, 0, &rva));
	EXPECT_EQ_INT(-ENOENT, tr_r2r_file_rva(&r, UINT64_MAX, &rva));
	tr_r2r_free(&r);
}

DEF_TEST(what_has_no_r2r_code_says_so)
{
	struct tr_r2r r;
	char why[256];
	static const uint8_t junk[] = "#!/bin/sh\necho not a PE image\n";
	int fd;

	/* A reference facade: IL only. */
	EXPECT_EQ_INT(-ENOEXEC, read_dll("System.Runtime.dll", 0, &r, why, sizeof(why)));
	EXPECT_CONTAINS("IL only", why);
	EXPECT_TRUE(r.n == 0 && r.v == NULL);
	EXPECT_EQ_INT(-ENOEXEC, tr_r2r_parse(junk, sizeof(junk), 0, &r, why, sizeof(why)));
	EXPECT_CONTAINS("not a PE image", why);
	EXPECT_EQ_INT(-ENOEXEC, tr_r2r_parse(junk, 0, 0, &r, why, sizeof(why)));
	/* Not a regular file. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		EXPECT_EQ_INT(-EINVAL, tr_r2r_read(fd, 0, &r, why, sizeof(why)));
		EXPECT_CONTAINS("regular", why);
		close(fd);
	}
}

/* rc is one of the documented outcomes, a refusal says why, and a table
 * that came out is one tr_r2r_find can search. */
static int sane_outcome(int rc, const struct tr_r2r *r, const char *why)
{
	if (rc == 0)
		return bad_ranges(r) == 0;
	return (rc == -EINVAL || rc == -ENOEXEC) && why[0] && r->n == 0 && r->v == NULL;
}

/* A small R2R image of the framework (61 methods, 28 KiB): quick to parse
 * thousands of times. */
#define SMALL "System.Runtime.Serialization.Primitives.dll"

DEF_TEST(truncated_images_are_refused_cleanly)
{
	size_t len, refused = 0, steps = 0, sections_end = 0;
	uint8_t *img = slurp(path_of(SMALL), &len);
	struct tr_r2r r;
	char why[256];

	CHECK_NOT_NULL(img);
	EXPECT_EQ_INT(0, tr_r2r_parse(img, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_TRUE(r.n > 20);
	/* What follows the last section (the Authenticode signature) is not
	 * needed: cuts there may parse. */
	for (size_t i = 0; i < r.n_sec; i++)
		if (r.sec[i].file_off + (size_t)r.sec[i].file_size > sections_end)
			sections_end = r.sec[i].file_off + (size_t)r.sec[i].file_size;
	tr_r2r_free(&r);
	EXPECT_TRUE(sections_end > len / 2 && sections_end <= len);
	for (size_t cut = 0; cut < sections_end; cut += 37, steps++) {
		/* A copy of exactly cut bytes: ASan sees any read past it. */
		uint8_t *t = malloc(cut ? cut : 1);
		int rc;

		CHECK_NOT_NULL(t);
		memcpy(t, img, cut);
		rc = tr_r2r_parse(t, cut, TR_R2R_SIGNATURES, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why))
			TEST_FAIL("cut at %zu: rc %d, why \"%s\", %zu methods", cut, rc, why, r.n);
		refused += rc != 0;
		tr_r2r_free(&r);
		free(t);
	}
	/* Each cut loses some section's bytes. */
	EXPECT_EQ_INT(steps, refused);
	free(img);
}

DEF_TEST(changed_bytes_never_crash)
{
	size_t len;
	uint8_t *img = slurp(path_of(SMALL), &len), *t;
	uint32_t seed = 12345;
	struct tr_r2r r;
	char why[256];

	CHECK_NOT_NULL(img);
	t = malloc(len);
	CHECK_NOT_NULL(t);
	for (int i = 0; i < 3000; i++) {
		int rc;

		memcpy(t, img, len);
		/* One to four bytes changed, anywhere (a fixed sequence). */
		for (int k = 0, n = 1 + i % 4; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			t[(seed >> 8) % len] = (uint8_t)(seed >> 24);
		}
		rc = tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why)) {
			TEST_FAIL("variant %d: rc %d, why \"%s\"", i, rc, why);
			tr_r2r_free(&r);
			break;
		}
		tr_r2r_free(&r);
	}
	free(t);
	free(img);
}

static uint8_t *find_bytes(uint8_t *img, size_t len, const void *what, size_t n)
{
	return memmem(img, len, what, n);
}

/* Lengths and counts that point beyond the file are refused by name. */
DEF_TEST(lying_lengths_are_refused)
{
	size_t len;
	uint8_t *img = slurp(path_of(SMALL), &len), *t, *p;
	uint32_t n_sec;
	struct tr_r2r r;
	char why[256];
	static const uint8_t rtr[] = { 'R', 'T', 'R', 0 }, tables[] = { '#', '~', 0, 0 };

	CHECK_NOT_NULL(img);
	t = malloc(len);
	CHECK_NOT_NULL(t);

	/* READYTORUN_HEADER.NumberOfSections */
	memcpy(t, img, len);
	p = find_bytes(t, len, rtr, sizeof(rtr));
	CHECK_NOT_NULL(p);
	n_sec = img[p - t + 12] | (uint32_t)img[p - t + 13] << 8;
	EXPECT_TRUE(n_sec >= 3);
	memcpy(p + 12, "\xff\xff\xff\x0f", 4);
	EXPECT_EQ_INT(-EINVAL, tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_CONTAINS("sections", why);

	/* Each READYTORUN_SECTION's size (RuntimeFunctions among them). */
	for (uint32_t i = 0; i < n_sec && i < 64; i++) {
		memcpy(t, img, len);
		memcpy(p + 16 + 12 * i + 8, "\xf0\xff\xff\x7f", 4);
		EXPECT_TRUE(sane_outcome(tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)), &r, why));
		tr_r2r_free(&r);
	}

	/* The tables stream's size in the metadata root. */
	memcpy(t, img, len);
	p = find_bytes(t, len, tables, sizeof(tables));
	CHECK_NOT_NULL(p);
	memcpy(p - 4, "\xf0\xff\xff\x7f", 4);
	EXPECT_EQ_INT(-EINVAL, tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_CONTAINS("beyond the metadata", why);

	/* A row count beyond the stream. */
	memcpy(t, img, len);
	p = find_bytes(t, len, tables, sizeof(tables));
	{
		uint32_t off = p[-8] | (uint32_t)p[-7] << 8, md;
		uint8_t *root = find_bytes(t, len, "BSJB", 4);

		CHECK_NOT_NULL(root);
		md = (uint32_t)(root - t) + off;
		/* the first row count (Module) at +24 */
		memcpy(t + md + 24, "\xff\xff\xff\x00", 4);
	}
	EXPECT_EQ_INT(-EINVAL, tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_CONTAINS("beyond its stream", why);

	free(t);
	free(img);
}

DEF_TEST(a_large_image_cut_short_is_refused)
{
	size_t len;
	uint8_t *img = slurp(path_of("System.Private.CoreLib.dll"), &len);
	struct tr_r2r r;
	char why[256];

	CHECK_NOT_NULL(img);
	/* Cut where the sections, the R2R tables and the metadata lie. */
	for (int i = 1; i < 16; i++) {
		size_t cut = len / 16 * i;
		int rc = tr_r2r_parse(img, cut, 0, &r, why, sizeof(why));

		EXPECT_EQ_INT(-EINVAL, rc);
		EXPECT_TRUE(sane_outcome(rc, &r, why));
		tr_r2r_free(&r);
	}
	free(img);
}

/* ---- arm64: an x64 image made arm64 ---- */

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int64_t file_off(const struct tr_r2r *r, uint32_t rva)
{
	for (size_t i = 0; i < r->n_sec; i++)
		if (rva >= r->sec[i].rva && rva - r->sec[i].rva < r->sec[i].file_size)
			return (int64_t)r->sec[i].file_off + (rva - r->sec[i].rva);
	return -1;
}

/* SMALL with its machine made arm64 for Linux and its RuntimeFunctions
 * rewritten as arm64's (BeginAddress, UnwindData): a third of them with
 * .xdata records (their FunctionLength, in instructions, in the bytes the
 * shorter table freed), the others packed in the UnwindData word.  x64's
 * lengths rounded up to whole instructions.  *len gets the size; the
 * x64 table is left in x64. */
static uint8_t *arm64_image(size_t *len, struct tr_r2r *x64)
{
	uint8_t *img = slurp(path_of(SMALL), len), *rtr, *old = NULL;
	uint32_t pe, n_sec, n;
	int64_t rf = -1, sec_entry = -1;
	char why[256];

	if (!img)
		return NULL;
	if (tr_r2r_parse(img, *len, TR_R2R_SIGNATURES, x64, why, sizeof(why)) != 0)
		goto bad;
	pe = rd32le(img + 0x3c);
	img[pe + 4] = (uint8_t)(0xaa64 ^ 0x7b79);
	img[pe + 5] = (uint8_t)((0xaa64 ^ 0x7b79) >> 8);
	rtr = memmem(img, *len, "RTR\0", 4);
	if (!rtr)
		goto bad;
	n_sec = rd32le(rtr + 12);
	for (uint32_t i = 0; i < n_sec; i++)
		if (rd32le(rtr + 16 + 12 * i) == 102) {
			sec_entry = rtr + 16 + 12 * i - img;
			rf = file_off(x64, rd32le(rtr + 16 + 12 * i + 4));
		}
	if (rf < 0)
		goto bad;
	n = rd32le(img + sec_entry + 8) / 12;
	/* x64's table read before any of it is overwritten. */
	old = malloc(12 * (size_t)n + 1);
	if (!old)
		goto bad;
	memcpy(old, img + rf, 12 * (size_t)n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = rd32le(old + 12 * i), e = rd32le(old + 12 * i + 4);
		uint32_t words = (e - b + 3) / 4;

		wr32le(img + rf + 8 * i, b);
		if (i % 3 == 0 || words > 0x7ff) {
			uint32_t x = rd32le(img + sec_entry + 4) + 8 * n + 4 * i;

			wr32le(img + rf + 8 * n + 4 * i, words | 1u << 21); /* E bit: no meaning here */
			wr32le(img + rf + 8 * i + 4, x);
		} else {
			wr32le(img + rf + 8 * i + 4, 1u | words << 2);
		}
	}
	wr32le(img + sec_entry + 8, 8 * n);
	free(old);
	return img;
bad:
	free(old);
	free(img);
	tr_r2r_free(x64);
	return NULL;
}

DEF_TEST(arm64_lengths_come_from_the_unwind_data)
{
	size_t len;
	struct tr_r2r x64, a;
	char why[256];
	uint8_t *img = arm64_image(&len, &x64);
	int rc;

	CHECK_NOT_NULL(img);
	EXPECT_EQ_INT(0x8664, x64.machine);
	rc = tr_r2r_parse(img, len, TR_R2R_SIGNATURES, &a, why, sizeof(why));
	if (rc) {
		TEST_FAIL("arm64 variant: %d %s", rc, why);
		goto out;
	}
	EXPECT_EQ_INT(0xaa64, a.machine);
	EXPECT_EQ_INT(x64.n, a.n);
	EXPECT_EQ_INT(0, bad_ranges(&a));
	/* Each method where it was, named as it was; its end rounded up to an
	 * instruction, that of its main body or of a funclet (x64's are not
	 * aligned), but never past the next method. */
	for (size_t i = 0; i < x64.n; i++) {
		const struct tr_r2r_method *m = tr_r2r_find(&a, x64.v[i].start_rva);
		uint32_t next = i + 1 < x64.n ? x64.v[i + 1].start_rva : UINT32_MAX;

		if (!m || m->start_rva != x64.v[i].start_rva || strcmp(m->signature, x64.v[i].signature) != 0 ||
		    m->end_rva < x64.v[i].end_rva || m->end_rva > x64.v[i].end_rva + 3 + 3 * 8 ||
		    m->end_rva > next) {
			TEST_FAIL("x64 [0x%x, 0x%x) %s: arm64 %s [0x%x, 0x%x)", x64.v[i].start_rva,
				  x64.v[i].end_rva, x64.v[i].signature, m ? m->signature : "none",
				  m ? m->start_rva : 0, m ? m->end_rva : 0);
			break;
		}
	}
	tr_r2r_free(&a);
out:
	tr_r2r_free(&x64);
	free(img);
}

/* Unwind data out of the image, code that would end beyond 4 GiB, and
 * cuts and changed bytes of the arm64 variant. */
DEF_TEST(hostile_arm64_images_are_refused_cleanly)
{
	size_t len, steps = 0, refused = 0;
	struct tr_r2r x64, r;
	char why[256];
	uint8_t *img = arm64_image(&len, &x64), *t, *rtr;
	uint32_t seed = 777, n_sec;
	int64_t rf = -1;

	CHECK_NOT_NULL(img);
	t = malloc(len);
	CHECK_NOT_NULL(t);
	rtr = memmem(img, len, "RTR\0", 4);
	CHECK_NOT_NULL(rtr);
	n_sec = rd32le(rtr + 12);
	for (uint32_t i = 0; i < n_sec; i++)
		if (rd32le(rtr + 16 + 12 * i) == 102)
			rf = file_off(&x64, rd32le(rtr + 16 + 12 * i + 4));
	EXPECT_TRUE(rf > 0);
	/* The first RUNTIME_FUNCTION has .xdata (i % 3 == 0): moved away. */
	memcpy(t, img, len);
	wr32le(t + rf + 4, 0x7ffffff0);
	EXPECT_EQ_INT(-EINVAL, tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_CONTAINS("unwind data", why);
	memcpy(t, img, len);
	wr32le(t + rf + 4, rd32le(t + rf + 4) + 2); /* misaligned: read as packed */
	EXPECT_TRUE(sane_outcome(tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)), &r, why));
	tr_r2r_free(&r);
	/* The largest length (2^18 instructions) from near the top of the
	 * address space. */
	memcpy(t, img, len);
	wr32le(t + rf, 0xfffffff0);
	wr32le(t + rf + 8 * 1 + 4, 1u | 0x7ffu << 2);
	wr32le(t + rf + 8, 0xffffff00);
	EXPECT_EQ_INT(-EINVAL, tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why)));
	EXPECT_CONTAINS("beyond 4 GiB", why);
	for (size_t cut = 0; cut < len; cut += 101, steps++) {
		uint8_t *c = malloc(cut ? cut : 1);
		int rc;

		CHECK_NOT_NULL(c);
		memcpy(c, img, cut);
		rc = tr_r2r_parse(c, cut, TR_R2R_SIGNATURES, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why))
			TEST_FAIL("cut at %zu: rc %d, why \"%s\"", cut, rc, why);
		refused += rc != 0;
		tr_r2r_free(&r);
		free(c);
	}
	EXPECT_TRUE(refused > steps / 2);
	for (int i = 0; i < 2000; i++) {
		int rc;

		memcpy(t, img, len);
		for (int k = 0, n = 1 + i % 4; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			/* Half of them in the RUNTIME_FUNCTIONs and .xdata. */
			if (k == 0 && i % 2)
				t[rf + (seed >> 8) % 4096 % (len - (size_t)rf)] = (uint8_t)(seed >> 24);
			else
				t[(seed >> 8) % len] = (uint8_t)(seed >> 24);
		}
		rc = tr_r2r_parse(t, len, TR_R2R_SIGNATURES, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why)) {
			TEST_FAIL("variant %d: rc %d, why \"%s\"", i, rc, why);
			tr_r2r_free(&r);
			break;
		}
		tr_r2r_free(&r);
	}
	free(t);
	tr_r2r_free(&x64);
	free(img);
}

/* ---- composite images, as published in the build tree ---- */

static char apps_dir[4096];

static const char *app_file(const char *rel)
{
	static char p[8192];

	snprintf(p, sizeof(p), "%s/%s", apps_dir, rel);
	return p;
}

/* How the tests open components: from a directory, or from memory. */
struct opener {
	const char *dir;
	const char *refuse;   /* a component to refuse (ENOENT) */
	const char *swap_from, *swap_to; /* open swap_to when asked for swap_from */
	/* Served from memory instead of dir, for hostile components: */
	const char *mem_name;
	const uint8_t *mem;
	size_t mem_len;
	unsigned asked;
	int bad_name; /* asked for a name that is no file name */
};

static int test_open(void *arg, const char *name)
{
	struct opener *o = arg;
	char p[8192];
	int fd;

	o->asked++;
	if (strchr(name, '/') || name[0] == '.')
		o->bad_name = 1;
	if (o->refuse && strcmp(name, o->refuse) == 0)
		return -ENOENT;
	if (o->mem_name && strcmp(name, o->mem_name) == 0) {
		fd = memfd_create("component", MFD_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (write(fd, o->mem, o->mem_len) != (ssize_t)o->mem_len) {
			close(fd);
			return -EIO;
		}
		return fd;
	}
	if (o->swap_from && strcmp(name, o->swap_from) == 0)
		name = o->swap_to;
	snprintf(p, sizeof(p), "%s/%s", o->dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

#define SMALL_COMPOSITE_DIR "r2rmap/arm64-composite/out"
#define SMALL_COMPOSITE SMALL_COMPOSITE_DIR "/R2rMap.r2r.dll"
#define BIG_COMPOSITE_DIR "composite/x64/out"
#define BIG_COMPOSITE BIG_COMPOSITE_DIR "/Composite.r2r.dll"

static int parse_composite(const char *rel, struct opener *o, struct tr_r2r *r, char *why,
			   size_t why_len)
{
	size_t len;
	uint8_t *img = slurp(app_file(rel), &len);
	int rc;

	if (!img)
		return -ENOENT;
	rc = tr_r2r_parse_with(img, len, TR_R2R_SIGNATURES, test_open, o, r, why, why_len);
	free(img);
	return rc;
}

DEF_TEST(a_composite_image_is_named_from_its_components)
{
	char dir[8192];
	struct opener o = { .dir = dir };
	struct tr_r2r r;
	char why[256];
	size_t n;
	int rc, fd;

	snprintf(dir, sizeof(dir), "%s", app_file(SMALL_COMPOSITE_DIR));
	rc = parse_composite(SMALL_COMPOSITE, &o, &r, why, sizeof(why));
	if (rc) {
		TEST_FAIL("%s: %d %s", SMALL_COMPOSITE, rc, why);
		return;
	}
	/* Newtonsoft.Json's 4054 methods and the app's 19. */
	EXPECT_TRUE(r.n > 4000);
	EXPECT_EQ_INT(0xaa64, r.machine);
	EXPECT_EQ_INT(0, bad_ranges(&r));
	EXPECT_EQ_INT(2, o.asked); /* each component opened once */
	EXPECT_TRUE(by_signature(&r, "instance void [Newtonsoft.Json] Newtonsoft.Json.JsonTextWriter::"
				 "WriteStartObject()") != NULL);
	EXPECT_TRUE(by_signature(&r, "int32 [R2rMap] R2rMap.Program::Main()") != NULL);
	n = r.n;
	tr_r2r_free(&r);

	/* Without a way to open them, said so. */
	fd = open(app_file(SMALL_COMPOSITE), O_RDONLY | O_CLOEXEC);
	EXPECT_EQ_INT(-ENOEXEC, tr_r2r_read(fd, 0, &r, why, sizeof(why)));
	EXPECT_CONTAINS("composite", why);
	if (fd >= 0)
		close(fd);
	/* One that cannot be opened: the other's methods are named. */
	o.refuse = "Newtonsoft.Json.dll";
	o.asked = 0;
	EXPECT_EQ_INT(0, parse_composite(SMALL_COMPOSITE, &o, &r, why, sizeof(why)));
	EXPECT_TRUE(r.n > 0 && r.n < 100);
	EXPECT_EQ_INT(0, count_prefix(&r, "Newtonsoft."));
	EXPECT_TRUE(by_name(&r, "R2rMap.Program::Main") != NULL);
	tr_r2r_free(&r);
	/* Another assembly where a component should be (another MVID): not
	 * used. */
	o.refuse = NULL;
	o.swap_from = "Newtonsoft.Json.dll";
	o.swap_to = "R2rMap.dll";
	EXPECT_EQ_INT(0, parse_composite(SMALL_COMPOSITE, &o, &r, why, sizeof(why)));
	EXPECT_TRUE(r.n > 0 && r.n < 100);
	EXPECT_EQ_INT(0, count_prefix(&r, "Newtonsoft."));
	tr_r2r_free(&r);
	/* None at all: refused, with the first reason. */
	o.swap_from = NULL;
	o.dir = "/nonexistent";
	EXPECT_EQ_INT(-ENOEXEC, parse_composite(SMALL_COMPOSITE, &o, &r, why, sizeof(why)));
	EXPECT_CONTAINS("none of whose", why);
	EXPECT_CONTAINS("No such file", why);
	EXPECT_TRUE(r.n == 0 && r.v == NULL);
	EXPECT_TRUE(n > 4000);
}

/* A component that lies (cut, bytes changed), a composite image cut or
 * changed, and a manifest whose component name is no file name. */
DEF_TEST(hostile_composites_and_components_are_refused_cleanly)
{
	char dir[8192];
	struct opener o = { .dir = dir };
	size_t len, clen;
	uint8_t *img, *comp, *t;
	struct tr_r2r r;
	char why[256];
	uint32_t seed = 4242;
	uint8_t *p;

	snprintf(dir, sizeof(dir), "%s", app_file(SMALL_COMPOSITE_DIR));
	img = slurp(app_file(SMALL_COMPOSITE), &len);
	comp = slurp(app_file(SMALL_COMPOSITE_DIR "/Newtonsoft.Json.dll"), &clen);
	CHECK_NOT_NULL(img);
	CHECK_NOT_NULL(comp);
	t = malloc(clen > len ? clen : len);
	CHECK_NOT_NULL(t);
	/* The component, cut and changed. */
	o.mem_name = "Newtonsoft.Json.dll";
	o.mem = t;
	for (size_t cut = 0; cut < clen; cut += clen / 97 + 1) {
		int rc;

		memcpy(t, comp, cut);
		o.mem_len = cut;
		rc = tr_r2r_parse_with(img, len, TR_R2R_SIGNATURES, test_open, &o, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why))
			TEST_FAIL("component cut at %zu: rc %d, why \"%s\"", cut, rc, why);
		tr_r2r_free(&r);
	}
	o.mem_len = clen;
	for (int i = 0; i < 300; i++) {
		int rc;

		memcpy(t, comp, clen);
		for (int k = 0, n = 1 + i % 4; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			t[(seed >> 8) % clen] = (uint8_t)(seed >> 24);
		}
		rc = tr_r2r_parse_with(img, len, TR_R2R_SIGNATURES, test_open, &o, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why)) {
			TEST_FAIL("component variant %d: rc %d, why \"%s\"", i, rc, why);
			tr_r2r_free(&r);
			break;
		}
		tr_r2r_free(&r);
	}
	/* The composite image, cut and changed. */
	o.mem_name = NULL;
	for (size_t cut = 0; cut < len; cut += len / 301 + 1) {
		uint8_t *c = malloc(cut ? cut : 1);
		int rc;

		CHECK_NOT_NULL(c);
		memcpy(c, img, cut);
		rc = tr_r2r_parse_with(c, cut, TR_R2R_SIGNATURES, test_open, &o, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why))
			TEST_FAIL("composite cut at %zu: rc %d, why \"%s\"", cut, rc, why);
		tr_r2r_free(&r);
		free(c);
	}
	for (int i = 0; i < 600; i++) {
		int rc;

		memcpy(t, img, len);
		for (int k = 0, n = 1 + i % 4; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			t[(seed >> 8) % len] = (uint8_t)(seed >> 24);
		}
		rc = tr_r2r_parse_with(t, len, TR_R2R_SIGNATURES, test_open, &o, &r, why, sizeof(why));
		if (!sane_outcome(rc, &r, why)) {
			TEST_FAIL("composite variant %d: rc %d, why \"%s\"", i, rc, why);
			tr_r2r_free(&r);
			break;
		}
		tr_r2r_free(&r);
	}
	/* The manifest's names of the components made paths: never asked. */
	memcpy(t, img, len);
	for (p = t; (p = memmem(p, len - (size_t)(p - t), "Newtonsoft.Json\0", 16)); p += 16)
		memcpy(p, "../../etc/shado\0", 16);
	for (p = t; (p = memmem(p, len - (size_t)(p - t), "R2rMap\0", 7)); p += 7)
		memcpy(p, "/a/b/c\0", 7);
	o.asked = 0;
	o.bad_name = 0;
	EXPECT_EQ_INT(-ENOEXEC, tr_r2r_parse_with(t, len, TR_R2R_SIGNATURES, test_open, &o, &r, why,
						  sizeof(why)));
	EXPECT_CONTAINS("not a file name", why);
	EXPECT_EQ_INT(0, o.bad_name);
	EXPECT_EQ_INT(0, o.asked);
	free(t);
	free(comp);
	free(img);
}

/* The framework and an app in one image, checked against the runtime in
 * tests/dotnet/composite.sh: here, that it is read whole. */
DEF_TEST(a_self_contained_composite_image_is_read)
{
	char dir[8192];
	struct opener o = { .dir = dir };
	struct tr_r2r r;
	char why[256];
	int rc;

	snprintf(dir, sizeof(dir), "%s", app_file(BIG_COMPOSITE_DIR));
	rc = parse_composite(BIG_COMPOSITE, &o, &r, why, sizeof(why));
	if (rc) {
		TEST_FAIL("%s: %d %s", BIG_COMPOSITE, rc, why);
		return;
	}
	EXPECT_TRUE(r.n > 50000);
	EXPECT_EQ_INT(0x8664, r.machine);
	EXPECT_EQ_INT(0, bad_ranges(&r));
	EXPECT_TRUE(o.asked > 100);
	EXPECT_TRUE(by_name(&r, "System.String::Concat") != NULL);
	EXPECT_TRUE(by_name(&r, "System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]::TryInsert") != NULL);
	EXPECT_TRUE(by_signature(&r, "int64 [Composite] Composite.Program::Spin(float64)") != NULL);
	tr_r2r_free(&r);
}

int main(void)
{
	find_runtime();
	if (!fx_dir[0]) {
		const char *why = "no Microsoft.NETCore.App runtime listed by `dotnet --list-runtimes`";

		SKIP_TEST(corelib_names_its_methods, why);
		SKIP_TEST(system_text_json_names_its_methods, why);
		SKIP_TEST(signatures_are_written_as_the_runtime_does, why);
		SKIP_TEST(mapped_addresses_become_rvas, why);
		SKIP_TEST(what_has_no_r2r_code_says_so, why);
		SKIP_TEST(truncated_images_are_refused_cleanly, why);
		SKIP_TEST(changed_bytes_never_crash, why);
		SKIP_TEST(lying_lengths_are_refused, why);
		SKIP_TEST(a_large_image_cut_short_is_refused, why);
		SKIP_TEST(arm64_lengths_come_from_the_unwind_data, why);
		SKIP_TEST(hostile_arm64_images_are_refused_cleanly, why);
		SKIP_TEST(a_composite_image_is_named_from_its_components, why);
		SKIP_TEST(hostile_composites_and_components_are_refused_cleanly, why);
		SKIP_TEST(a_self_contained_composite_image_is_read, why);
		TEST_MAIN_END();
	}
	RUN_TEST(corelib_names_its_methods);
	RUN_TEST(system_text_json_names_its_methods);
	RUN_TEST(signatures_are_written_as_the_runtime_does);
	RUN_TEST(mapped_addresses_become_rvas);
	RUN_TEST(what_has_no_r2r_code_says_so);
	RUN_TEST(truncated_images_are_refused_cleanly);
	RUN_TEST(changed_bytes_never_crash);
	RUN_TEST(lying_lengths_are_refused);
	RUN_TEST(a_large_image_cut_short_is_refused);
	RUN_TEST(arm64_lengths_come_from_the_unwind_data);
	RUN_TEST(hostile_arm64_images_are_refused_cleanly);
	{
		const char *apps = getenv("R2R_TEST_APPS");
		struct stat st;

		snprintf(apps_dir, sizeof(apps_dir), "%s", apps && *apps ? apps : "tests/dotnet/apps");
		if (stat(app_file(SMALL_COMPOSITE), &st) == 0) {
			RUN_TEST(a_composite_image_is_named_from_its_components);
			RUN_TEST(hostile_composites_and_components_are_refused_cleanly);
		} else {
			SKIP_TEST(a_composite_image_is_named_from_its_components,
				  "no " SMALL_COMPOSITE " (tests/dotnet/r2r-arm64.sh publishes it)");
			SKIP_TEST(hostile_composites_and_components_are_refused_cleanly,
				  "no " SMALL_COMPOSITE " (tests/dotnet/r2r-arm64.sh publishes it)");
		}
		if (stat(app_file(BIG_COMPOSITE), &st) == 0)
			RUN_TEST(a_self_contained_composite_image_is_read);
		else
			SKIP_TEST(a_self_contained_composite_image_is_read,
				  "no " BIG_COMPOSITE " (tests/dotnet/composite.sh publishes it)");
	}
	TEST_MAIN_END();
}
