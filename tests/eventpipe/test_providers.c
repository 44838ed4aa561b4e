/* The `[eventpipe] providers` list reads dotnet-trace's --providers syntax
 * as dotnet-trace does, its presets are what their sources say, items merge
 * into one provider per name, and every wrong item is refused with a
 * message that quotes it. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/list.h"
#include "providers.h"
#include "testing.h"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNTIME_PRIVATE "Microsoft-Windows-DotNETRuntimePrivate"

/* Microsoft-Windows-DotNETRuntime keywords (dotnet/runtime ClrEtwAll.man,
 * TraceEvent ClrTraceEventParser.Keywords, dotnet-trace ProviderUtils.cs). */
#define KW_GC 0x1ULL
#define KW_GCHANDLE 0x2ULL
#define KW_BINDER 0x4ULL
#define KW_LOADER 0x8ULL
#define KW_JIT 0x10ULL
#define KW_NGEN 0x20ULL
#define KW_STOPENUMERATION 0x80ULL
#define KW_SECURITY 0x400ULL
#define KW_APPDOMAINRESOURCEMANAGEMENT 0x800ULL
#define KW_CONTENTION 0x4000ULL
#define KW_EXCEPTION 0x8000ULL
#define KW_THREADING 0x10000ULL
#define KW_JITTEDMETHODILTONATIVEMAP 0x20000ULL
#define KW_SUPPRESSNGEN 0x40000ULL
#define KW_TYPE 0x80000ULL
#define KW_GCHEAPSURVIVALANDMOVEMENT 0x400000ULL
#define KW_GCHEAPANDTYPENAMES 0x1000000ULL
#define KW_STACK 0x40000000ULL
#define KW_THREADTRANSFER 0x80000000ULL
#define KW_CODESYMBOLS 0x400000000ULL
#define KW_COMPILATION 0x1000000000ULL

/* Microsoft-Windows-DotNETRuntimePrivate (ClrPrivateTraceEventParser). */
#define PKW_GC 0x1ULL
#define PKW_BINDING 0x2ULL
#define PKW_MULTICOREJIT 0x20000ULL

/* TraceEvent's ClrTraceEventParser.Keywords.Default, cpu-sampling's. */
#define KW_TRACEEVENT_DEFAULT                                                             \
	(KW_GC | KW_TYPE | KW_GCHEAPSURVIVALANDMOVEMENT | KW_BINDER | KW_LOADER | KW_JIT | \
	 KW_NGEN | KW_SUPPRESSNGEN | KW_STOPENUMERATION | KW_SECURITY |                   \
	 KW_APPDOMAINRESOURCEMANAGEMENT | KW_EXCEPTION | KW_THREADING | KW_CONTENTION |   \
	 KW_STACK | KW_JITTEDMETHODILTONATIVEMAP | KW_THREADTRANSFER |                    \
	 KW_GCHEAPANDTYPENAMES | KW_CODESYMBOLS | KW_COMPILATION)

/* What EventPipeProvider's constructor gives a provider without keywords. */
#define KW_EVENTPIPEPROVIDER_DEFAULT 0xF00000000000ULL

#define INFORMATIONAL 4
#define VERBOSE 5

static char why[1024];

static int add(struct ep_providers *p, const char *item)
{
	why[0] = '\0';
	return ep_providers_add(p, item, why, sizeof(why));
}

static const struct ep_provider *find(const struct ep_providers *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, name) == 0)
			return &p->v[i];
	return NULL;
}

/* The list holds exactly one provider, with these values. */
#define EXPECT_ONE(p, name_, keywords_, level_, filter_)                              \
	do {                                                                          \
		const char *f_ = (filter_);                                           \
		EXPECT_EQ_INT(1, (p)->n);                                             \
		if ((p)->n == 1) {                                                    \
			EXPECT_EQ_STR(name_, (p)->v[0].name);                         \
			EXPECT_EQ_INT((uint64_t)(keywords_), (p)->v[0].keywords);     \
			EXPECT_EQ_INT(level_, (p)->v[0].level);                       \
			if (f_)                                                       \
				EXPECT_EQ_STR(f_, (p)->v[0].filter);                  \
			else                                                          \
				EXPECT_TRUE((p)->v[0].filter == NULL);                \
		}                                                                     \
	} while (0)

/* `item` alone gives one provider with these values. */
static void expect_item(const char *item, const char *name, uint64_t keywords, uint32_t level,
			const char *filter)
{
	struct ep_providers p = { 0 };

	if (add(&p, item) != 0)
		TEST_FAIL("\"%s\" refused: %s", item, why);
	EXPECT_ONE(&p, name, keywords, level, filter);
	ep_providers_free(&p);
}

DEF_TEST(each_syntax_form)
{
	/* Name (not written like a preset's name, so a provider) */
	expect_item("System.Runtime", "System.Runtime", 0, INFORMATIONAL, NULL);
	expect_item("Microsoft-DotNETCore-SampleProfiler", EP_SAMPLE_PROFILER, 0, INFORMATIONAL,
		    NULL);
	/* Name:Keywords */
	expect_item(RUNTIME ":0x10", RUNTIME, KW_JIT, INFORMATIONAL, NULL);
	/* Name:Keywords:Level */
	expect_item("Foo:1C:5", "Foo", 0x1C, VERBOSE, NULL);
	/* Name:Keywords:Level:FilterData */
	expect_item("Foo:1:Warning:key=value", "Foo", 1, 3, "key=value");
	/* a bare name with capitals is a provider, though it reads like a preset */
	expect_item("GCC", "GCC", 0, INFORMATIONAL, NULL);
}

DEF_TEST(defaults_for_omitted_empty_or_blank_fields)
{
	expect_item("Foo:", "Foo", 0, INFORMATIONAL, NULL);
	expect_item("Foo::", "Foo", 0, INFORMATIONAL, NULL);
	expect_item("Foo:::", "Foo", 0, INFORMATIONAL, NULL);
	expect_item("Foo: : : ", "Foo", 0, INFORMATIONAL, NULL);
	expect_item("Foo::5", "Foo", 0, VERBOSE, NULL);
	expect_item("Foo:0x3:", "Foo", 3, INFORMATIONAL, NULL);
	expect_item("Foo:::a=b", "Foo", 0, INFORMATIONAL, "a=b");
}

DEF_TEST(hex_keywords_with_and_without_0x)
{
	expect_item("Foo:0x1C", "Foo", 0x1C, INFORMATIONAL, NULL);
	expect_item("Foo:1C", "Foo", 0x1C, INFORMATIONAL, NULL);
	expect_item("Foo:0X1c", "Foo", 0x1C, INFORMATIONAL, NULL);
	expect_item("Foo:FFFFFFFFFFFFFFFF", "Foo", UINT64_MAX, INFORMATIONAL, NULL);
	expect_item("Foo:0xffffffffffffffff", "Foo", UINT64_MAX, INFORMATIONAL, NULL);
	/* leading zeros do not count against the 16 digits */
	expect_item("Foo:0x00000000000000000001", "Foo", 1, INFORMATIONAL, NULL);
	expect_item("Foo:0", "Foo", 0, INFORMATIONAL, NULL);
}

DEF_TEST(level_by_name_and_number)
{
	static const char *const names[] = {
		"logalways", "CRITICAL", "Error", "warning", "Informational", "VERBOSE",
	};
	char item[64];

	for (int l = 0; l <= 5; l++) {
		snprintf(item, sizeof(item), "Foo:1:%d", l);
		expect_item(item, "Foo", 1, (uint32_t)l, NULL);
		snprintf(item, sizeof(item), "Foo:1:%s", names[l]);
		expect_item(item, "Foo", 1, (uint32_t)l, NULL);
	}
	/* int.TryParse takes blanks around a number */
	expect_item("Foo:1: 3 ", "Foo", 1, 3, NULL);
	expect_item("Foo:1:05", "Foo", 1, VERBOSE, NULL);
}

DEF_TEST(filter_data)
{
	/* quotes protect ';' and '='; GetArgumentString puts them back only
	 * around a value that needs them */
	expect_item("Foo:1:4:a=1;b=\"x;y=z\";c=\"plain\"", "Foo", 1, INFORMATIONAL,
		    "a=1;b=\"x;y=z\";c=plain");
	/* ':' after the third belongs to the filter data */
	expect_item("Microsoft-Diagnostics-DiagnosticSource:0x3:5:FilterAndPayloadSpecs="
		    "\"SqlClientDiagnosticListener/System.Data.SqlClient.WriteCommandBefore"
		    "@Activity1Start:-Command;Command.CommandText\"",
		    "Microsoft-Diagnostics-DiagnosticSource", 3, VERBOSE,
		    "FilterAndPayloadSpecs=\"SqlClientDiagnosticListener/System.Data.SqlClient."
		    "WriteCommandBefore@Activity1Start:-Command;Command.CommandText\"");
	expect_item("Foo:1:4:Spec=a:b:c", "Foo", 1, INFORMATIONAL, "Spec=a:b:c");
	/* Regex.Unescape first */
	expect_item("Foo:1:4:k=a\\r\\nb", "Foo", 1, INFORMATIONAL, "k=a\r\nb");
	expect_item("Foo:1:4:k=a\\x2Cb\\u00E9\\\\c\\tq\\101", "Foo", 1, INFORMATIONAL,
		    "k=a,b\xC3\xA9\\c\tqA");
	/* a ';' at the end, as dotnet-trace takes it; blanks are kept */
	expect_item("Foo:1:4:a=1;", "Foo", 1, INFORMATIONAL, "a=1");
	expect_item("Foo:1:4: a = b", "Foo", 1, INFORMATIONAL, " a = b");
	/* empty values */
	expect_item("Foo:1:4:a=;b=\"\"", "Foo", 1, INFORMATIONAL, "a=;b=");
}

struct expect_provider {
	const char *name;
	uint64_t keywords;
	uint32_t level;
};

struct expect_preset {
	const char *name;
	struct expect_provider v[3];
};

/* The values taken from the sources (see providers.c). */
static const struct expect_preset expected_presets[] = {
	/* GC at Informational */
	{ "gc", { { RUNTIME, KW_GC, INFORMATIONAL } } },
	/* dotnet-trace ListProfilesCommandHandler.cs gc-verbose */
	{ "gc-verbose", { { RUNTIME, KW_GC | KW_GCHANDLE | KW_EXCEPTION, VERBOSE } } },
	/* dotnet-trace gc-collect */
	{ "gc-collect", { { RUNTIME, KW_GC, INFORMATIONAL },
			  { RUNTIME_PRIVATE, PKW_GC, INFORMATIONAL } } },
	{ "jit", { { RUNTIME, KW_JIT | KW_NGEN | KW_LOADER | KW_COMPILATION, VERBOSE } } },
	{ "exceptions", { { RUNTIME, KW_EXCEPTION, INFORMATIONAL } } },
	{ "contention", { { RUNTIME, KW_CONTENTION, INFORMATIONAL } } },
	{ "threading", { { RUNTIME, KW_THREADING, INFORMATIONAL } } },
	{ "loader", { { RUNTIME, KW_LOADER, INFORMATIONAL } } },
	/* dotnet-trace cpu-sampling (before it became a collect-linux profile) */
	{ "cpu-sampling", { { EP_SAMPLE_PROFILER, KW_EVENTPIPEPROVIDER_DEFAULT, INFORMATIONAL },
			    { RUNTIME, KW_TRACEEVENT_DEFAULT, INFORMATIONAL } } },
	/* perfcollect's default LTTng lists, as keywords */
	{ "perfcollect", { { RUNTIME, KW_THREADING | KW_THREADTRANSFER | KW_EXCEPTION |
					      KW_CONTENTION | KW_JIT | KW_NGEN | KW_LOADER |
					      KW_GC | KW_COMPILATION, VERBOSE },
			   { RUNTIME_PRIVATE, PKW_GC | PKW_BINDING | PKW_MULTICOREJIT,
			     VERBOSE } } },
	{ "default", { { RUNTIME, KW_THREADING | KW_THREADTRANSFER | KW_EXCEPTION |
					  KW_CONTENTION | KW_JIT | KW_NGEN | KW_LOADER | KW_GC |
					  KW_COMPILATION, VERBOSE },
		       { RUNTIME_PRIVATE, PKW_GC | PKW_BINDING | PKW_MULTICOREJIT, VERBOSE } } },
};

DEF_TEST(each_preset_is_what_its_source_says)
{
	char a[1024], b[1024];

	/* the hex in the table is the named keywords */
	EXPECT_EQ_INT(0x14C14FCCBDULL, KW_TRACEEVENT_DEFAULT);
	for (size_t i = 0; i < sizeof(expected_presets) / sizeof(expected_presets[0]); i++) {
		const struct expect_preset *e = &expected_presets[i];
		struct ep_providers p = { 0 };
		size_t n = 0;

		if (add(&p, e->name) != 0) {
			TEST_FAIL("preset %s refused: %s", e->name, why);
			continue;
		}
		for (; n < 3 && e->v[n].name; n++) {
			const struct ep_provider *got = find(&p, e->v[n].name);

			if (!got) {
				TEST_FAIL("preset %s lacks %s", e->name, e->v[n].name);
				continue;
			}
			if (got != &p.v[n])
				TEST_FAIL("preset %s: %s is not provider %zu", e->name,
					  e->v[n].name, n);
			if (got->keywords != e->v[n].keywords || got->level != e->v[n].level)
				TEST_FAIL("preset %s: %s is 0x%" PRIX64 ":%" PRIu32 ", expected "
					  "0x%" PRIX64 ":%" PRIu32, e->name, got->name,
					  got->keywords, got->level, e->v[n].keywords,
					  e->v[n].level);
			EXPECT_TRUE(got->filter == NULL);
		}
		if (p.n != n)
			TEST_FAIL("preset %s has %zu providers, expected %zu", e->name, p.n, n);
		ep_providers_free(&p);
	}

	/* default is perfcollect */
	{
		struct ep_providers d = { 0 }, pc = { 0 };

		EXPECT_EQ_INT(0, add(&d, "default"));
		EXPECT_EQ_INT(0, add(&pc, "perfcollect"));
		ep_providers_str(&pc, a, sizeof(a));
		EXPECT_EQ_STR(a, ep_providers_str(&d, b, sizeof(b)));
		ep_providers_free(&d);
		ep_providers_free(&pc);
	}
	/* preset names in any case, as dotnet-trace's profiles */
	{
		struct ep_providers p = { 0 };

		EXPECT_EQ_INT(0, add(&p, "GC-Verbose"));
		EXPECT_ONE(&p, RUNTIME, KW_GC | KW_GCHANDLE | KW_EXCEPTION, VERBOSE, NULL);
		ep_providers_free(&p);
	}
}

DEF_TEST(preset_names_and_docs)
{
	const char *names = ep_preset_names(), *cursor = names, *item;
	size_t i = 0, len;

	EXPECT_EQ_STR("gc, gc-verbose, gc-collect, jit, exceptions, contention, threading, "
		      "loader, cpu-sampling, perfcollect, default", names);
	while (tr_list_next(&cursor, &item, &len)) {
		const char *doc = ep_preset_doc(i++);

		if (!doc) {
			TEST_FAIL("no doc line for preset %.*s", (int)len, item);
			break;
		}
		if (strncmp(doc, item, len) != 0 || strncmp(doc + len, ": ", 2) != 0)
			TEST_FAIL("doc line \"%s\" is not for preset %.*s", doc, (int)len, item);
	}
	EXPECT_EQ_INT(11, i);
	EXPECT_TRUE(ep_preset_doc(i) == NULL);
	/* a doc line shows the providers */
	EXPECT_CONTAINS(". Providers: " RUNTIME ":0x8003:Verbose", ep_preset_doc(1));
}

DEF_TEST(merging_ors_keywords_and_takes_the_higher_level)
{
	struct ep_providers p = { 0 };
	const struct ep_provider *rt;

	/* names compare case-insensitively; the first spelling stays */
	EXPECT_EQ_INT(0, add(&p, RUNTIME ":0x1:2"));
	EXPECT_EQ_INT(0, add(&p, "microsoft-windows-dotnetruntime:0x10:5"));
	EXPECT_ONE(&p, RUNTIME, 0x11, VERBOSE, NULL);
	EXPECT_EQ_INT(0, add(&p, RUNTIME ":0x100:LogAlways"));
	EXPECT_ONE(&p, RUNTIME, 0x111, VERBOSE, NULL);
	ep_providers_free(&p);

	/* a preset and an explicit item */
	EXPECT_EQ_INT(0, add(&p, "gc"));
	EXPECT_EQ_INT(0, add(&p, RUNTIME ":0x8000:Verbose"));
	EXPECT_ONE(&p, RUNTIME, KW_GC | KW_EXCEPTION, VERBOSE, NULL);
	ep_providers_free(&p);

	/* two presets */
	EXPECT_EQ_INT(0, add(&p, "gc-collect"));
	EXPECT_EQ_INT(0, add(&p, "jit"));
	EXPECT_EQ_INT(2, p.n);
	rt = find(&p, RUNTIME);
	CHECK_NOT_NULL(rt);
	EXPECT_EQ_INT(KW_GC | KW_JIT | KW_NGEN | KW_LOADER | KW_COMPILATION, rt->keywords);
	EXPECT_EQ_INT(VERBOSE, rt->level);
	CHECK_NOT_NULL(find(&p, RUNTIME_PRIVATE));
	EXPECT_EQ_INT(INFORMATIONAL, find(&p, RUNTIME_PRIVATE)->level);
	ep_providers_free(&p);

	/* a filter joins a provider that had none; the same one again is fine */
	EXPECT_EQ_INT(0, add(&p, "Bar:1"));
	EXPECT_EQ_INT(0, add(&p, "Bar:2:5:x=y"));
	EXPECT_EQ_INT(0, add(&p, "Bar:4:3:x=\"y\""));
	EXPECT_ONE(&p, "Bar", 7, VERBOSE, "x=y");
	EXPECT_EQ_STR("Bar:2:5:x=y", p.v[0].origin);
	ep_providers_free(&p);
}

DEF_TEST(two_different_filters_are_refused_naming_both_items)
{
	struct ep_providers p = { 0 };

	EXPECT_EQ_INT(0, add(&p, "Foo:1:4:a=1"));
	EXPECT_EQ_INT(-EINVAL, add(&p, "foo:2:5:a=2"));
	EXPECT_CONTAINS("\"Foo:1:4:a=1\"", why);
	EXPECT_CONTAINS("\"foo:2:5:a=2\"", why);
	/* the list is as it was */
	EXPECT_ONE(&p, "Foo", 1, INFORMATIONAL, "a=1");
	ep_providers_free(&p);
}

/* `item` is refused, `why` quotes it (or `shown`, when the item cannot be
 * shown as it is), and the list is left as it was. */
static void expect_refused(struct ep_providers *p, const char *item, const char *shown,
			   const char *says)
{
	char before[4096], after[4096], quoted[512];
	size_t n = p->n;

	ep_providers_str(p, before, sizeof(before));
	if (add(p, item) != -EINVAL) {
		TEST_FAIL("\"%s\" was not refused", item);
		return;
	}
	snprintf(quoted, sizeof(quoted), "\"%s\"", shown ? shown : item);
	EXPECT_CONTAINS(quoted, why);
	if (says)
		EXPECT_CONTAINS(says, why);
	EXPECT_EQ_INT(n, p->n);
	EXPECT_EQ_STR(before, ep_providers_str(p, after, sizeof(after)));
}

DEF_TEST(each_rejection_names_the_item)
{
	struct ep_providers p = { 0 };
	char name[300], shown[100];

	EXPECT_EQ_INT(0, add(&p, "gc"));
	expect_refused(&p, ":0x1", NULL, "no provider name");
	expect_refused(&p, " :0x1", NULL, "no provider name");
	expect_refused(&p, "Fo\x01o:1", "Fo?o:1", "not printable ASCII");
	expect_refused(&p, "Fo\xC3\xA9:1", NULL, "not printable ASCII");
	expect_refused(&p, "Foo :1", NULL, "blank");
	expect_refused(&p, "Foo:zz", NULL,
		       "keywords \"zz\" are not hexadecimal (write them as dotnet-trace does: "
		       "0x1C or 1C)");
	expect_refused(&p, "Foo:0x", NULL, "not hexadecimal");
	expect_refused(&p, "Foo: 0x1", NULL, "not hexadecimal");
	expect_refused(&p, "Foo:0x10000000000000000", NULL, "do not fit in 64 bits");
	expect_refused(&p, "Foo:1:6", NULL, "level 6 is above 5");
	expect_refused(&p, "Foo:1:99999999999", NULL, "is above 5");
	expect_refused(&p, "Foo:1:-1", NULL, "neither a number nor a level");
	expect_refused(&p, "Foo:1:loud", NULL, "neither a number nor a level");
	expect_refused(&p, "Foo:1:4:5:a=b", NULL, "more than 4 fields");
	expect_refused(&p, "Foo:1:4:x:y", NULL, "more than 4 fields");
	expect_refused(&p, "Foo:1:4:a", NULL, "not key=value");
	expect_refused(&p, "Foo:1:4:=a", NULL, "not key=value");
	expect_refused(&p, "Foo:1:4:a=1;;b=2", NULL, "not key=value");
	expect_refused(&p, "Foo:1:4:a=\"b", NULL, "not closed");
	expect_refused(&p, "Foo:1:4:a=b=c", NULL, "without quotes");
	expect_refused(&p, "Foo:1:4:a=x\"b\"", NULL, "without quotes");
	expect_refused(&p, "Foo:1:4:a=1;a=2", NULL, "key \"a\" twice");
	expect_refused(&p, "Foo:1:4:a=\\q", NULL, "escape \"\\q\"");
	expect_refused(&p, "Foo:1:4:a=\\x4", NULL, "escape \"\\x4\"");
	expect_refused(&p, "Foo:1:4:a=\\0", NULL, "escape \"\\0\"");
	expect_refused(&p, "Foo:1:4:a=\\uD800", NULL, "escape \"\\uD800\"");
	expect_refused(&p, "Foo:1:4:a=b\\", NULL, "escape \"\\\"");
	expect_refused(&p, "Foo:1:4:a=\x7F", "Foo:1:4:a=?", "control or non-ASCII");
	expect_refused(&p, "Foo,Bar:1", NULL, "','");
	expect_refused(&p, "gcc", NULL, "unknown preset \"gcc\" (did you mean gc? presets: gc, ");
	expect_refused(&p, "perfcolect", NULL, "did you mean perfcollect?");
	expect_refused(&p, "cpu", NULL, "did you mean cpu-sampling?");
	expect_refused(&p, "zzzzzzzz", NULL, "(presets: gc, gc-verbose");
	EXPECT_TRUE(strstr(why, "did you mean") == NULL);

	/* a name of 257 characters; 256 is fine */
	memset(name, 'N', 257);
	strcpy(name + 257, ":1");
	snprintf(shown, sizeof(shown), "%.80s...", name);
	expect_refused(&p, name, shown, "longer than 256");
	strcpy(name + 256, ":1");
	EXPECT_EQ_INT(0, add(&p, name));
	name[256] = '\0';
	EXPECT_EQ_INT(1, ep_providers_remove(&p, name));

	/* an empty item; and no `why` at all */
	EXPECT_EQ_INT(-EINVAL, add(&p, ""));
	EXPECT_CONTAINS("empty item", why);
	EXPECT_EQ_INT(-EINVAL, ep_providers_add(&p, "Foo:zz", NULL, 0));
	EXPECT_EQ_INT(1, p.n);
	ep_providers_free(&p);
}

DEF_TEST(at_most_64_providers)
{
	struct ep_providers p = { 0 };
	char item[32];

	for (int i = 0; i < EP_PROVIDERS_MAX - 1; i++) {
		snprintf(item, sizeof(item), "P%d:1", i);
		EXPECT_EQ_INT(0, add(&p, item));
	}
	/* a preset of two providers does not fit the last place: none of it
	 * is added */
	expect_refused(&p, "gc-collect", NULL, "more than 64 providers");
	EXPECT_EQ_INT(0, add(&p, "P63:1"));
	EXPECT_EQ_INT(EP_PROVIDERS_MAX, p.n);
	expect_refused(&p, "P64:1", NULL, "more than 64 providers");
	/* merging into one that is there still works */
	EXPECT_EQ_INT(0, add(&p, "p0:2:5"));
	EXPECT_EQ_INT(3, p.v[0].keywords);
	ep_providers_free(&p);
}

DEF_TEST(remove)
{
	struct ep_providers p = { 0 };

	EXPECT_EQ_INT(0, add(&p, "cpu-sampling"));
	EXPECT_EQ_INT(0, add(&p, "Foo:1"));
	EXPECT_EQ_INT(3, p.n);
	EXPECT_EQ_INT(1, ep_providers_remove(&p, EP_SAMPLE_PROFILER));
	EXPECT_EQ_INT(2, p.n);
	EXPECT_EQ_STR(RUNTIME, p.v[0].name);
	EXPECT_EQ_STR("Foo", p.v[1].name);
	EXPECT_EQ_INT(0, ep_providers_remove(&p, EP_SAMPLE_PROFILER));
	EXPECT_EQ_INT(1, ep_providers_remove(&p, "MICROSOFT-WINDOWS-DOTNETRUNTIME"));
	EXPECT_EQ_INT(1, ep_providers_remove(&p, "Foo"));
	EXPECT_EQ_INT(0, p.n);
	EXPECT_EQ_INT(0, ep_providers_remove(&p, "Foo"));
	ep_providers_free(&p);
}

DEF_TEST(str_is_dotnet_trace_syntax)
{
	struct ep_providers p = { 0 };
	char buf[1024];

	/* EventPipeProvider.ToString: Name:0x{Keywords:X16}:{level}[:args] */
	EXPECT_EQ_INT(0, add(&p, "gc-collect"));
	EXPECT_EQ_STR(RUNTIME ":0x0000000000000001:4," RUNTIME_PRIVATE ":0x0000000000000001:4",
		      ep_providers_str(&p, buf, sizeof(buf)));
	ep_providers_free(&p);
	EXPECT_EQ_INT(0, add(&p, "Foo:ff:Verbose:k=\"a;b\";c=d"));
	EXPECT_EQ_STR("Foo:0x00000000000000FF:5:k=\"a;b\";c=d",
		      ep_providers_str(&p, buf, sizeof(buf)));
	ep_providers_free(&p);
	EXPECT_EQ_STR("", ep_providers_str(&p, buf, sizeof(buf)));

	/* cut to the buffer, always terminated */
	EXPECT_EQ_INT(0, add(&p, "gc"));
	EXPECT_EQ_STR("Microsof", ep_providers_str(&p, buf, 9));
	buf[0] = 'x';
	EXPECT_TRUE(ep_providers_str(&p, buf, 0) == buf && buf[0] == 'x');
	ep_providers_free(&p);
}

static int same_providers(const struct ep_providers *a, const struct ep_providers *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct ep_provider *x = &a->v[i], *y = &b->v[i];

		if (strcmp(x->name, y->name) != 0 || x->keywords != y->keywords ||
		    x->level != y->level || !x->filter != !y->filter ||
		    (x->filter && strcmp(x->filter, y->filter) != 0))
			return 0;
	}
	return 1;
}

DEF_TEST(str_round_trip)
{
	static const char *const items[] = {
		"perfcollect",
		"cpu-sampling",
		"My.Source:0xFF:2:Spec=a:b;k=\"x;y=z\";t=a\\r\\nb\\x2Cc\\u00E9\\u4E2D\\\\d\\x7F",
		"Other:0:LogAlways",
		"Third:FFFFFFFFFFFFFFFF:1:e=",
		"Fourth:1:4:k=v\\x20",
	};
	struct ep_providers p = { 0 }, back = { 0 };
	char s1[4096], s2[4096];
	const char *cursor, *item;
	size_t len;

	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if (add(&p, items[i]) != 0)
			TEST_FAIL("\"%s\" refused: %s", items[i], why);
	ep_providers_str(&p, s1, sizeof(s1));
	/* nothing the list syntax or a terminal would take for something else */
	EXPECT_CONTAINS("t=a\\r\\nb\\x2Cc\\u00E9\\u4E2D\\\\d\\x7F", s1);
	for (const char *c = s1; *c; c++)
		if (*c < 0x20 || *c > 0x7E)
			TEST_FAIL("str has byte 0x%02X", (unsigned char)*c);

	/* parse it back, item by item, as the core would split it */
	cursor = s1;
	while (tr_list_next(&cursor, &item, &len)) {
		char one[1024];

		snprintf(one, sizeof(one), "%.*s", (int)len, item);
		if (add(&back, one) != 0)
			TEST_FAIL("\"%s\" does not parse back: %s", one, why);
	}
	EXPECT_TRUE(same_providers(&p, &back));
	EXPECT_EQ_STR(s1, ep_providers_str(&back, s2, sizeof(s2)));
	ep_providers_free(&p);
	ep_providers_free(&back);
}

DEF_TEST(free_leaves_an_empty_list)
{
	struct ep_providers p = { 0 };

	ep_providers_free(&p);
	EXPECT_EQ_INT(0, add(&p, "perfcollect"));
	EXPECT_EQ_INT(0, add(&p, "Foo:1:4:a=b"));
	ep_providers_free(&p);
	EXPECT_TRUE(p.v == NULL);
	EXPECT_EQ_INT(0, p.n);
	ep_providers_free(&p);
	/* and it is usable again */
	EXPECT_EQ_INT(0, add(&p, "gc"));
	EXPECT_EQ_INT(1, p.n);
	ep_providers_free(&p);
}

int main(void)
{
	RUN_TEST(each_syntax_form);
	RUN_TEST(defaults_for_omitted_empty_or_blank_fields);
	RUN_TEST(hex_keywords_with_and_without_0x);
	RUN_TEST(level_by_name_and_number);
	RUN_TEST(filter_data);
	RUN_TEST(each_preset_is_what_its_source_says);
	RUN_TEST(preset_names_and_docs);
	RUN_TEST(merging_ors_keywords_and_takes_the_higher_level);
	RUN_TEST(two_different_filters_are_refused_naming_both_items);
	RUN_TEST(each_rejection_names_the_item);
	RUN_TEST(at_most_64_providers);
	RUN_TEST(remove);
	RUN_TEST(str_is_dotnet_trace_syntax);
	RUN_TEST(str_round_trip);
	RUN_TEST(free_leaves_an_empty_list);
	TEST_MAIN_END();
}
