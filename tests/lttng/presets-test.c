/* The lttng presets are what the documentation says they are, lists build
 * and deduplicate as specified, and the CTF clock is read from metadata. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf.h"
#include "dotnet.h"
#include "presets.h"
#include "testing.h"

#define DOC TR_ABS_SRCDIR "/plugins/lttng/presets.md"

static int list_has(const struct lttng_preset *preset, const char *name)
{
	for (size_t i = 0; lttng_preset_event(preset, i); i++)
		if (strcmp(lttng_preset_event(preset, i), name) == 0)
			return 1;
	return 0;
}

/* presets.md: "## name" starts a preset, "    Provider:Event" lines list it. */
DEF_TEST(every_preset_expands_to_its_documented_list)
{
	FILE *f = fopen(DOC, "r");
	const struct lttng_preset *cur = NULL;
	size_t idx = 0, documented = 0;
	char line[512];

	CHECK_NOT_NULL(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "## ", 3) == 0) {
			if (cur && lttng_preset_event(cur, idx))
				TEST_FAIL("preset %s: documentation stops at %zu of %zu events",
					  cur->name, idx, lttng_preset_size(cur));
			cur = lttng_preset_find(line + 3);
			if (!cur)
				TEST_FAIL("documented preset '%s' is not in the table", line + 3);
			idx = 0;
			documented++;
		} else if (cur && strncmp(line, "    ", 4) == 0) {
			if (!lttng_preset_event(cur, idx))
				TEST_FAIL("preset %s: documented event %s is not in the table",
					  cur->name, line + 4);
			else if (strcmp(lttng_preset_event(cur, idx++), line + 4) != 0)
				TEST_FAIL("preset %s, event %zu: table has %s, documentation %s",
					  cur->name, idx - 1, lttng_preset_event(cur, idx - 1), line + 4);
		}
	}
	fclose(f);
	if (cur && lttng_preset_event(cur, idx))
		TEST_FAIL("preset %s: documentation stops early", cur->name);
	{
		size_t in_table = 0;

		for (const struct lttng_preset *p = lttng_presets; p->name; p++)
			in_table++;
		EXPECT_EQ_INT(in_table, documented);
	}
}

DEF_TEST(presets_mirror_perfcollect_names_and_sizes)
{
	static const struct { const char *name; size_t n; } expect[] = {
		{ "default", 183 }, { "gccollectonly", 80 }, { "gconly", 110 },
		{ "gcwithheap", 47 }, { "threading", 26 }, { "exceptions", 9 },
		{ "jit", 26 }, { "loader", 18 },
	};

	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		const struct lttng_preset *p = lttng_preset_find(expect[i].name);

		if (!p) {
			TEST_FAIL("preset %s missing", expect[i].name);
			continue;
		}
		EXPECT_EQ_INT(expect[i].n, lttng_preset_size(p));
	}
	EXPECT_TRUE(lttng_preset_find("nosuch") == NULL);
}

/* The preset key's choices (the core's check of each item) are the
 * presets there are, in their order. */
DEF_TEST(the_preset_key_choices_are_the_presets)
{
	char names[512] = "";
	size_t used = 0;

	for (const struct lttng_preset *p = lttng_presets; p->name; p++)
		used += snprintf(names + used, sizeof(names) - used, "%s%s", used ? "," : "",
				 p->name);
	EXPECT_EQ_STR(LTTNG_PRESET_NAMES, names);
}

DEF_TEST(presets_have_no_duplicates_and_full_names)
{
	for (const struct lttng_preset *p = lttng_presets; p->name; p++) {
		for (size_t i = 0; lttng_preset_event(p, i); i++) {
			const char *colon = strchr(lttng_preset_event(p, i), ':');

			if (!colon || colon == lttng_preset_event(p, i) || !colon[1] || strchr(lttng_preset_event(p, i), '*'))
				TEST_FAIL("%s: '%s' is not a full Provider:Event name", p->name,
					  lttng_preset_event(p, i));
			for (size_t j = 0; j < i; j++)
				if (strcmp(lttng_preset_event(p, i), lttng_preset_event(p, j)) == 0)
					TEST_FAIL("%s: %s listed twice", p->name, lttng_preset_event(p, i));
		}
	}
}

/* perfcollect's loader list loses these to a duplicate bash declaration. */
DEF_TEST(loader_includes_assembly_domain_module_and_module_loads)
{
	static const char *const want[] = {
		"DotNETRuntime:AssemblyLoad", "DotNETRuntime:AssemblyLoad_V1",
		"DotNETRuntime:DomainModuleLoad", "DotNETRuntime:DomainModuleLoad_V1",
		"DotNETRuntime:ModuleLoad", "DotNETRuntime:ModuleLoad_V1",
		"DotNETRuntime:ModuleLoad_V2", "DotNETRuntime:ModuleDCStartV2",
		"DotNETRuntime:AppDomainLoad_V1",
	};
	static const char *const with_loader[] = { "loader", "default", "gconly" };

	for (size_t k = 0; k < 3; k++) {
		const struct lttng_preset *p = lttng_preset_find(with_loader[k]);

		CHECK_NOT_NULL(p);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (!list_has(p, want[i]))
				TEST_FAIL("preset %s lacks %s", p->name, want[i]);
	}
}

DEF_TEST(default_contains_gc_collections_jit_and_exceptions)
{
	const struct lttng_preset *def = lttng_preset_find("default");
	const struct lttng_preset *jit = lttng_preset_find("jit");

	CHECK_NOT_NULL(def);
	CHECK_NOT_NULL(jit);
	EXPECT_TRUE(list_has(def, "DotNETRuntime:GCStart_V2"));
	EXPECT_TRUE(list_has(def, "DotNETRuntime:ExceptionThrown_V1"));
	EXPECT_TRUE(list_has(def, "DotNETRuntime:ContentionStart_V1"));
	EXPECT_TRUE(list_has(def, "DotNETRuntimePrivate:BGCBegin"));
	/* gccollectonly leaves out allocation ticks; gconly has them. */
	EXPECT_TRUE(!list_has(def, "DotNETRuntime:GCAllocationTick_V3"));
	EXPECT_TRUE(list_has(lttng_preset_find("gconly"), "DotNETRuntime:GCAllocationTick_V3"));
	EXPECT_TRUE(list_has(lttng_preset_find("gcwithheap"),
			     "DotNETRuntime:GCBulkMovedObjectRanges"));
	for (size_t i = 0; lttng_preset_event(jit, i); i++)
		if (!list_has(def, lttng_preset_event(jit, i)))
			TEST_FAIL("default lacks jit event %s", lttng_preset_event(jit, i));
}

DEF_TEST(list_merges_presets_and_events_without_duplicates)
{
	static const char *const presets[] = { "gccollectonly", "loader", "gccollectonly" };
	static const char *const events[] = { "DotNETRuntime:GCStart", "lttng_ust_libc:*", "my:ev" };
	const struct tracerig_list p = { 3, presets }, e = { 3, events }, none = { 0, NULL };
	struct lttng_event_list l;
	char err[256] = "";

	EXPECT_EQ_INT(0, lttng_event_list_build(&l, &p, &e, err, sizeof(err)));
	EXPECT_EQ_INT(80 + 18 + 2, l.n);
	EXPECT_EQ_STR("DotNETRuntime:GCStart", l.n ? l.names[0] : NULL);
	EXPECT_EQ_STR("lttng_ust_libc:*", l.n > 98 ? l.names[98] : NULL);
	EXPECT_EQ_STR("my:ev", l.n > 99 ? l.names[99] : NULL);
	lttng_event_list_free(&l);

	EXPECT_EQ_INT(0, lttng_event_list_build(&l, NULL, &none, err, sizeof(err)));
	EXPECT_EQ_INT(0, l.n);
	lttng_event_list_free(&l);
}

DEF_TEST(unknown_preset_and_bad_names_are_rejected)
{
	static const char *const presets[] = { "default", "gcsonly" };
	static const char *const blank[] = { "a:b c:d" };
	const struct tracerig_list p = { 2, presets }, e = { 1, blank };
	struct lttng_event_list l;
	char err[256] = "";

	EXPECT_EQ_INT(-EINVAL, lttng_event_list_build(&l, &p, NULL, err, sizeof(err)));
	EXPECT_CONTAINS("unknown preset 'gcsonly'", err);
	EXPECT_CONTAINS("gccollectonly", err);
	EXPECT_EQ_INT(0, l.n);
	EXPECT_EQ_INT(-EINVAL, lttng_event_list_build(&l, NULL, &e, err, sizeof(err)));
	EXPECT_CONTAINS("separate names with commas", err);
}

static size_t put_packet(unsigned char *buf, const char *text, size_t padding)
{
	size_t len = strlen(text), content = 37 + len, packet = content + padding;
	uint32_t v;

	memset(buf, 0, packet);
	v = 0x75D11D57u;
	memcpy(buf, &v, 4);
	v = (uint32_t)(content * 8);
	memcpy(buf + 24, &v, 4);
	v = (uint32_t)(packet * 8);
	memcpy(buf + 28, &v, 4);
	buf[35] = 1;
	buf[36] = 8;
	memcpy(buf + 37, text, len);
	return packet;
}

DEF_TEST(clock_is_read_from_packetized_metadata)
{
	unsigned char buf[1024];
	size_t len;
	char name[32];
	int64_t offset = 0;

	/* The clock block split across two packets, with padding between. */
	len = put_packet(buf, "/* CTF 1.8 */\nclock {\n\tname = \"monot", 13);
	len += put_packet(buf + len, "onic\";\n\tfreq = 1000000000;\n\toffset = 1795401942086359748;\n};\n", 0);
	EXPECT_EQ_INT(0, ctf_metadata_clock(buf, len, name, sizeof(name), &offset));
	EXPECT_EQ_STR("monotonic", name);
	EXPECT_EQ_INT(1795401942086359748LL, offset);
}

DEF_TEST(clock_offset_s_and_other_frequencies)
{
	const char *text = "clock {\n name = realtime;\n freq = 1000;\n offset_s = 10;\n offset = 500;\n};\n";
	char name[32];
	int64_t offset = 0;

	EXPECT_EQ_INT(0, ctf_metadata_clock((const unsigned char *)text, strlen(text), name,
					    sizeof(name), &offset));
	EXPECT_EQ_STR("realtime", name);
	EXPECT_EQ_INT(10500000000LL, offset);
	EXPECT_EQ_INT(-ENOENT, ctf_metadata_clock((const unsigned char *)"trace {};", 9, name,
						  sizeof(name), &offset));
}

static void collect(void *arg, const char *name)
{
	char *out = arg;

	strcat(out, name);
	strcat(out, ";");
}

DEF_TEST(metadata_event_names_are_listed)
{
	unsigned char buf[2048];
	char names[256] = "";
	size_t len;

	/* An event block split across packets, a stream block with its own
	 * "name"-less fields, a trailing event without a name. */
	len = put_packet(buf, "stream {\n\tid = 0;\n};\n\nevent {\n\tname = \"tracerig_te", 7);
	len += put_packet(buf + len, "st:hello\";\n\tid = 0;\n};\n\nevent {\n\tname = \"lttng_ust_libc:malloc\";\n"
			  "\tid = 1;\n};\nevent {\n\tid = 2;\n};\n", 0);
	EXPECT_EQ_INT(2, ctf_metadata_events(buf, len, collect, names));
	EXPECT_EQ_STR("tracerig_test:hello;lttng_ust_libc:malloc;", names);
	names[0] = '\0';
	EXPECT_EQ_INT(0, ctf_metadata_events((const unsigned char *)"trace {};", 9, collect, names));
	EXPECT_EQ_STR("", names);
}

DEF_TEST(dotnet_maps_tell_runtime_and_provider)
{
	struct dotnet_status st;
	const char *maps =
		"7f00-7f10 r-xp 00000000 08:01 12 /usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.1/libcoreclr.so\n"
		"7f20-7f30 r--p 00000000 08:01 13 /usr/lib/x86_64-linux-gnu/liblttng-ust.so.1.0.0\n"
		"7f40-7f50 r-xp 00000000 00:00 0 [heap]\n";
	const char *with_provider =
		"7f00-7f10 r-xp 00000000 08:01 12 /opt/dn/libcoreclrtraceptprovider.so (deleted)\n";
	const char *not_dotnet = "7f00-7f10 r-xp 00000000 08:01 12 /opt/x/notlibcoreclr.so\n";

	memset(&st, 0, sizeof(st));
	dotnet_parse_maps(maps, &st);
	EXPECT_EQ_INT(1, st.is_dotnet);
	EXPECT_EQ_INT(0, st.provider_mapped);
	EXPECT_EQ_STR("/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.1", st.runtime_dir);
	memset(&st, 0, sizeof(st));
	dotnet_parse_maps(with_provider, &st);
	EXPECT_EQ_INT(1, st.provider_mapped);
	EXPECT_EQ_STR("/opt/dn/libcoreclrtraceptprovider.so", st.provider);
	memset(&st, 0, sizeof(st));
	dotnet_parse_maps(not_dotnet, &st);
	EXPECT_EQ_INT(0, st.is_dotnet);
}

DEF_TEST(dotnet_environment_switches)
{
	static const char env1[] = "PATH=/bin\0DOTNET_LTTng=0\0COMPlus_PerfMapEnabled=1\0";
	static const char env2[] = "XDOTNET_LTTng=0\0DOTNET_LTTng=1\0DOTNET_PerfMapEnabled=0\0"
				   "COMPlus_PerfMapEnabled=1\0";
	struct dotnet_status st;

	memset(&st, 0, sizeof(st));
	dotnet_parse_environ(env1, sizeof(env1) - 1, &st);
	EXPECT_EQ_INT(1, st.lttng_disabled);
	EXPECT_EQ_INT(1, st.perfmap);
	EXPECT_EQ_STR("1", st.perfmap_value);
	/* DOTNET_ wins over COMPlus_, as in the runtime; a name that only
	 * ends like one does not count. */
	memset(&st, 0, sizeof(st));
	dotnet_parse_environ(env2, sizeof(env2) - 1, &st);
	EXPECT_EQ_INT(0, st.lttng_disabled);
	EXPECT_EQ_INT(0, st.perfmap);
}

int main(void)
{
	RUN_TEST(every_preset_expands_to_its_documented_list);
	RUN_TEST(presets_mirror_perfcollect_names_and_sizes);
	RUN_TEST(the_preset_key_choices_are_the_presets);
	RUN_TEST(presets_have_no_duplicates_and_full_names);
	RUN_TEST(loader_includes_assembly_domain_module_and_module_loads);
	RUN_TEST(default_contains_gc_collections_jit_and_exceptions);
	RUN_TEST(list_merges_presets_and_events_without_duplicates);
	RUN_TEST(unknown_preset_and_bad_names_are_rejected);
	RUN_TEST(clock_is_read_from_packetized_metadata);
	RUN_TEST(clock_offset_s_and_other_frequencies);
	RUN_TEST(metadata_event_names_are_listed);
	RUN_TEST(dotnet_maps_tell_runtime_and_provider);
	RUN_TEST(dotnet_environment_switches);
	TEST_MAIN_END();
}
