/* The EventPipe providers of `[eventpipe] providers = ...`: items in
 * dotnet-trace's --providers syntax, and presets after dotnet-trace's
 * profiles and perfcollect's default event set, merged into one list.
 *
 * The syntax is dotnet-trace's (dotnet/diagnostics,
 * src/Tools/dotnet-trace/ProviderUtils.cs, ToProvider):
 *  - an item splits at its first three ':' only (Split(':', 4)), so the
 *    filter data keeps any further ':';
 *  - a field that is empty or blank takes the default: keywords 0, level
 *    Informational;
 *  - keywords are hexadecimal, with or without 0x (Convert.ToInt64(s, 16)),
 *    16 digits at most;
 *  - a level is a number or a name, in any case: LogAlways 0, Critical 1,
 *    Error 2, Warning 3, Informational 4, Verbose 5;
 *  - filter data goes through Regex.Unescape, then splits into key=value
 *    pairs at the ';' outside double quotes, and a value in quotes loses
 *    them.  The runtime receives the pairs joined again with a value that
 *    holds ';' or '=' put back in quotes (Microsoft.Diagnostics.NETCore.
 *    Client's EventPipeProvider.GetArgumentString): `filter` holds that.
 *
 * Where we differ, on purpose:
 *  - dotnet-trace clamps a level above 5 to Verbose, and on filter data
 *    that is not key=value pairs (";;", a pair without '=', an unclosed
 *    quote) either throws or keeps surprising pieces; we refuse those, and
 *    say what to write.
 *  - dotnet-trace merges two --providers items with keywords OR-ed and the
 *    more verbose level, except that LogAlways (0) wins, and refuses two
 *    filters even when equal; a profile's provider is dropped when an item
 *    names it.  Here presets and items merge alike: keywords OR-ed, the
 *    higher level, one filter or equal ones.  (Level 0 means every level
 *    to an EventSource but LogAlways events only to the runtime's native
 *    providers, so no rule suits both; the higher number is the one a
 *    reader of the profile predicts.)
 *  - Omitted keywords were all bits in older dotnet-trace (long.MaxValue,
 *    then -1); now they are 0, as here: an EventSource takes 0 as every
 *    keyword, the native providers as only the events without one. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/closest.h"
#include "lib/list.h"
#include "lib/sanitize.h"
#include "lib/utf.h"
#include "providers.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* How much of an item a message quotes. */
#define SHOWN_MAX 80

#define SYNTAX "Name[:Keywords[:Level[:FilterData]]]"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNTIME_PRIVATE "Microsoft-Windows-DotNETRuntimePrivate"

/*
 * The presets, each written once as the list items it stands for, so that
 * it expands through the same parser as a profile's items and its line in
 * the profile reference shows exactly what it enables.
 *
 * Keywords of Microsoft-Windows-DotNETRuntime (dotnet/runtime
 * src/coreclr/vm/ClrEtwAll.man, the same in TraceEvent's
 * ClrTraceEventParser.Keywords): GC 0x1, GCHandle 0x2, AssemblyLoader
 * (TraceEvent: Binder) 0x4, Loader 0x8, Jit 0x10, NGen 0x20,
 * EndEnumeration (StopEnumeration) 0x80, Security 0x400,
 * AppDomainResourceManagement 0x800, Contention 0x4000, Exception 0x8000,
 * Threading 0x10000, JittedMethodILToNativeMap 0x20000,
 * OverrideAndSuppressNGenEvents (SupressNGen) 0x40000, Type 0x80000,
 * GCHeapSurvivalAndMovement 0x400000, GCHeapAndTypeNames 0x1000000,
 * Stack 0x40000000, ThreadTransfer 0x80000000, Codesymbols 0x400000000,
 * Compilation 0x1000000000.  Of Microsoft-Windows-DotNETRuntimePrivate
 * (TraceEvent's ClrPrivateTraceEventParser.Keywords): GC 0x1, Binding 0x2,
 * MulticoreJit 0x20000.  Levels of single events are ClrEtwAll.man's.
 */

/* GC keyword at Informational: collections, suspensions, heap stats,
 * segments, finalizers, per-heap and global history; Verbose would add an
 * allocation tick every 100 KB allocated, GC joins and pinned objects. */
#define SPEC_GC RUNTIME ":0x1:Informational"

/* dotnet-trace's gc-verbose (ListProfilesCommandHandler.cs):
 * GC | GCHandle | Exception at Verbose. */
#define SPEC_GC_VERBOSE RUNTIME ":0x8003:Verbose"

/* dotnet-trace's gc-collect: GC at Informational on the public and the
 * private provider (older versions: on the public one only). */
#define SPEC_GC_COLLECT RUNTIME ":0x1:Informational," RUNTIME_PRIVATE ":0x1:Informational"

/* Jit | NGen (method load/unload), Loader (module, assembly and domain
 * load/unload), Compilation (tiered compilation), at Verbose: the runtime
 * writes a method's name (MethodLoadVerbose rather than MethodLoad) only
 * when the provider is on at Verbose (eventtrace.cpp, SendMethodEvent),
 * and MethodJittingStarted is a Verbose event. */
#define SPEC_JIT RUNTIME ":0x1000000038:Verbose"

/* Exception: thrown (level Error), catch, finally and filter blocks. */
#define SPEC_EXCEPTIONS RUNTIME ":0x8000:Informational"

/* Contention: lock contention start and stop. */
#define SPEC_CONTENTION RUNTIME ":0x4000:Informational"

/* Threading at Informational: thread-pool worker and I/O threads created,
 * retired, adjusted, waiting.  Verbose would add an event for every work
 * item queued and dequeued (ThreadPoolEnqueue/Dequeue). */
#define SPEC_THREADING RUNTIME ":0x10000:Informational"

/* Loader: module, assembly and app-domain load and unload. */
#define SPEC_LOADER RUNTIME ":0x8:Informational"

/* dotnet-trace's cpu-sampling, its default profile until the current
 * version made cpu-sampling a perf profile of `collect-linux` (and offers
 * dotnet-common and dotnet-sampled-thread-time for EventPipe): the sampler
 * with the keywords EventPipeProvider's constructor defaults to, and the
 * runtime provider with ClrTraceEventParser.Keywords.Default (GC | Type |
 * GCHeapSurvivalAndMovement | Binder | Loader | Jit | NGen | SupressNGen |
 * StopEnumeration | Security | AppDomainResourceManagement | Exception |
 * Threading | Contention | Stack | JittedMethodILToNativeMap |
 * ThreadTransfer | GCHeapAndTypeNames | Codesymbols | Compilation). */
#define SPEC_CPU_SAMPLING                                                     \
	EP_SAMPLE_PROFILER ":0xF00000000000:Informational," RUNTIME            \
	":0x14C14FCCBD:Informational"

/* What perfcollect (microsoft/perfview src/perfcollect/perfcollect,
 * SetupLTTngSession) enables by default, as keywords.  Its LTTng lists:
 * DotNETRuntime_ThreadingKeyword, _ThreadingKeyword_ThreadTransferKeyword,
 * _NoKeyword, _ExceptionKeyword, _ContentionKeyword, _JitKeyword_NGenKeyword,
 * _JitKeyword, _LoaderKeyword, _GCKeyword_GCCollectOnly, _CompilationKeyword
 * on the public provider: Threading | ThreadTransfer | Exception |
 * Contention | Jit | NGen | Loader | GC | Compilation (EventPipe enables
 * the NoKeyword events whatever the keywords);
 * DotNETRuntimePrivate_GCPrivateKeyword_GCCollectOnly,
 * _BindingKeyword, _MulticoreJitPrivateKeyword on the private one: GC |
 * Binding | MulticoreJit.  LTTng tracepoints have no level, and the lists
 * hold Verbose events (MethodJittingStarted, FinalizeObject,
 * IncreaseMemoryPressure, ThreadPoolEnqueue, PrvFinalizeObject,
 * PinPlugAtGCTime) and the methods' names, so both providers are at
 * Verbose; one level per provider also brings the Verbose events the
 * GCCollectOnly lists leave out (GCAllocationTick, GCJoin,
 * PinObjectAtGCTime, GCOptimized).  TieredCompilationSettingsDCStart is
 * the rundown provider's, which a session asks for as its rundown, not as
 * a list item. */
#define SPEC_PERFCOLLECT                                                      \
	RUNTIME ":0x108001C039:Verbose," RUNTIME_PRIVATE ":0x20003:Verbose"

/* name, what it is for, the items it stands for */
#define EP_PRESETS(X)                                                                    \
	X("gc", "GC collections, pauses and heap statistics, at low overhead", SPEC_GC) \
	X("gc-verbose", "GC collections, allocation ticks, GC handles and exceptions "    \
	  "(dotnet-trace's gc-verbose)", SPEC_GC_VERBOSE)                                 \
	X("gc-collect", "GC collections only, public and private events "                 \
	  "(dotnet-trace's gc-collect)", SPEC_GC_COLLECT)                                 \
	X("jit", "methods jitted and loaded with their names, modules loaded, "           \
	  "tiered compilation", SPEC_JIT)                                                 \
	X("exceptions", "exceptions thrown and their catch, finally and filter blocks",   \
	  SPEC_EXCEPTIONS)                                                                \
	X("contention", "lock contention", SPEC_CONTENTION)                               \
	X("threading", "thread-pool threads created, retired and adjusted",               \
	  SPEC_THREADING)                                                                 \
	X("loader", "modules, assemblies and app domains loaded and unloaded",            \
	  SPEC_LOADER)                                                                    \
	X("cpu-sampling", "the runtime's stack sampler and its general events "           \
	  "(dotnet-trace's cpu-sampling)", SPEC_CPU_SAMPLING)                             \
	X("perfcollect", "what perfcollect enables by default: threading, exceptions, "   \
	  "contention, JIT with method names, loader, GC, binding, multicore JIT, "       \
	  "tiered compilation", SPEC_PERFCOLLECT)                                         \
	X("default", "what tracerig uses when `providers` is unset: the same as "         \
	  "perfcollect", SPEC_PERFCOLLECT)

struct ep_preset {
	const char *name;
	const char *doc;  /* "name: what. Providers: items" */
	const char *spec; /* the items, comma-separated */
};

#define PRESET_ENTRY(name, what, spec) { name, name ": " what ". Providers: " spec, spec },
static const struct ep_preset presets[] = { EP_PRESETS(PRESET_ENTRY) };

/* ", gc, gc-verbose, ..." at compile time; the names start after ", ". */
#define PRESET_NAME(name, what, spec) ", " name
static const char preset_names[] = EP_PRESETS(PRESET_NAME);

static const char *const level_names[EP_LEVEL_MAX + 1] = {
	"LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose",
};

#define LEVELS "0 LogAlways, 1 Critical, 2 Error, 3 Warning, 4 Informational, 5 Verbose"

#define ESCAPES "\\\\ \\\" \\n \\r \\t \\a \\b \\e \\f \\v \\xHH \\uHHHH \\ooo"

__attribute__((format(printf, 3, 4)))
static void say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* s[0..len) fit for a message: cut to SHOWN_MAX with "...", control and
 * invalid bytes replaced (lib/sanitize.h). */
static const char *shown(char *buf, size_t size, const char *s, size_t len)
{
	const char *cut = "";

	if (len > SHOWN_MAX) {
		len = SHOWN_MAX;
		cut = "...";
	}
	snprintf(buf, size, "%.*s%s", (int)len, s, cut);
	tr_sanitize_text(buf, size, buf);
	return buf;
}

static void provider_free(struct ep_provider *p)
{
	free(p->name);
	free(p->filter);
	free(p->origin);
	memset(p, 0, sizeof(*p));
}

void ep_providers_free(struct ep_providers *p)
{
	for (size_t i = 0; i < p->n; i++)
		provider_free(&p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static int copy_providers(struct ep_providers *dst, const struct ep_providers *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->n == 0)
		return 0;
	dst->v = calloc(src->n, sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		const struct ep_provider *s = &src->v[i];
		struct ep_provider *d = &dst->v[dst->n++];

		d->keywords = s->keywords;
		d->level = s->level;
		d->name = strdup(s->name);
		d->filter = s->filter ? strdup(s->filter) : NULL;
		d->origin = s->origin ? strdup(s->origin) : NULL;
		if (!d->name || (s->filter && !d->filter) || (s->origin && !d->origin)) {
			ep_providers_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Takes `p` into `dst` (moved in, or merged and freed, whatever happens). */
static int merge(struct ep_providers *dst, struct ep_provider *p, const char *item,
		 char *why, size_t why_len)
{
	struct ep_provider *grown;
	char a[SHOWN_MAX + 4], b[SHOWN_MAX + 4], fa[SHOWN_MAX + 4], fb[SHOWN_MAX + 4];

	for (size_t i = 0; i < dst->n; i++) {
		struct ep_provider *e = &dst->v[i];

		if (strcasecmp(e->name, p->name) != 0)
			continue;
		if (e->filter && p->filter && strcmp(e->filter, p->filter) != 0) {
			say(why, why_len, "\"%s\" and \"%s\" give %s different filter data "
			    "(\"%s\" and \"%s\"): keep one of them, or put both filters "
			    "in one item as key=value;key=value",
			    shown(a, sizeof(a), e->origin, strlen(e->origin)),
			    shown(b, sizeof(b), item, strlen(item)), e->name,
			    shown(fa, sizeof(fa), e->filter, strlen(e->filter)),
			    shown(fb, sizeof(fb), p->filter, strlen(p->filter)));
			provider_free(p);
			return -EINVAL;
		}
		e->keywords |= p->keywords;
		if (p->level > e->level)
			e->level = p->level;
		if (!e->filter && p->filter) {
			e->filter = p->filter;
			e->origin = p->origin;
			p->filter = p->origin = NULL;
		}
		provider_free(p);
		return 0;
	}
	if (dst->n >= EP_PROVIDERS_MAX) {
		say(why, why_len, "\"%s\": more than %d providers (a list takes at most "
		    "%d: drop some items or presets)",
		    shown(a, sizeof(a), item, strlen(item)), EP_PROVIDERS_MAX,
		    EP_PROVIDERS_MAX);
		provider_free(p);
		return -EINVAL;
	}
	grown = realloc(dst->v, (dst->n + 1) * sizeof(*grown));
	if (!grown) {
		provider_free(p);
		return -ENOMEM;
	}
	dst->v = grown;
	dst->v[dst->n++] = *p;
	memset(p, 0, sizeof(*p));
	return 0;
}

static int is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Convert.ToInt64(s, 16): an optional 0x, then hex digits, the value in
 * 64 bits (leading zeros do not count).  0, -EINVAL, or -ERANGE. */
static int parse_keywords(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		int d = hex_digit(s[i]);

		if (d < 0)
			return -EINVAL;
		if (v > UINT64_MAX >> 4)
			return -ERANGE;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A number or a name, as dotnet-trace's GetEventLevel.  0, -EINVAL (not a
 * level), or -ERANGE (a number above 5, which dotnet-trace would clamp). */
static int parse_level(const char *s, size_t len, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;

	/* int.TryParse takes blanks around the number. */
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if ((v = v * 10 + (uint32_t)(s[i] - '0')) > EP_LEVEL_MAX)
			v = EP_LEVEL_MAX + 1; /* stays out of range, cannot wrap */
	if (i == len) {
		if (v > EP_LEVEL_MAX)
			return -ERANGE;
		*out = v;
		return 0;
	}
	for (uint32_t l = 0; l <= EP_LEVEL_MAX; l++) {
		if (strlen(level_names[l]) == len && strncasecmp(level_names[l], s, len) == 0) {
			*out = l;
			return 0;
		}
	}
	return -EINVAL;
}

/* Regex.Unescape's escapes of one letter. */
static int letter_escape(char c, uint32_t *out)
{
	static const char pairs[] = "a\ab\be\033f\fn\nr\rt\tv\v";

	for (size_t i = 0; pairs[i]; i += 2) {
		if (pairs[i] == c) {
			*out = (unsigned char)pairs[i + 1];
			return 1;
		}
	}
	return 0;
}

/* Regex.Unescape, as dotnet-trace applies to filter data before reading
 * it: the escapes of ESCAPES, and a backslash before any other character
 * that is not a letter, digit or '_' stands for that character.  The
 * result is in a new string *out (never longer than the input); on an
 * escape it does not know, or one that would make a NUL or a lone
 * surrogate, *bad is the escape and its length *bad_len. */
static int unescape(const char *s, size_t len, char **out, const char **bad, size_t *bad_len)
{
	char *u = malloc(len + 1);
	size_t o = 0;

	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		uint32_t c = 0;
		size_t start = i, digits = 0;

		if (s[i] != '\\') {
			u[o++] = s[i];
			continue;
		}
		if (++i == len)
			goto bad;
		if (s[i] == 'x' || s[i] == 'u') {
			digits = s[i] == 'x' ? 2 : 4;
		} else if (s[i] >= '0' && s[i] <= '7') {
			/* up to three octal digits, truncated to 8 bits */
			for (size_t n = 0; n < 3 && i < len && s[i] >= '0' && s[i] <= '7'; n++, i++)
				c = c * 8 + (uint32_t)(s[i] - '0');
			i--;
			c &= 0xFF;
		} else if (!letter_escape(s[i], &c)) {
			if (isalnum((unsigned char)s[i]) || s[i] == '_')
				goto bad;
			c = (unsigned char)s[i];
		}
		for (size_t n = 0; n < digits; n++) {
			int d = ++i < len ? hex_digit(s[i]) : -1;

			if (d < 0) {
				i = start + 2 + n; /* the character that is not a digit */
				goto bad;
			}
			c = c << 4 | (uint32_t)d;
		}
		if (c == 0 || (c >= 0xD800 && c <= 0xDFFF))
			goto bad; /* i is on the escape's last character */
		o += tr_put_utf8(u + o, c);
		continue;
bad:
		*bad = s + start;
		*bad_len = (i < len ? i + 1 : len) - start;
		free(u);
		return -EINVAL;
	}
	u[o] = '\0';
	*out = u;
	return 0;
}

/* Whether the key=value pairs in norm[0..len) already have key k. */
static int has_key(const char *norm, size_t len, const char *k, size_t k_len)
{
	size_t start = 0;
	int quoted = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && norm[i] == '"')
			quoted = !quoted;
		if (i == len || (norm[i] == ';' && !quoted)) {
			if (i - start > k_len && memcmp(norm + start, k, k_len) == 0 &&
			    norm[start + k_len] == '=')
				return 1;
			start = i + 1;
		}
	}
	return 0;
}

/* Filter data as written, refused where it has what dotnet-trace does not
 * read, then unescaped into a new string *u.  `text` is the item, for
 * messages. */
static int unescape_filter(const char *f, size_t len, char **u, const char *text, size_t text_len,
			   char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4], piece[SHOWN_MAX + 4];
	const char *bad = NULL;
	size_t bad_len = 0;
	int ret;

	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)f[i] < 0x20 || (unsigned char)f[i] > 0x7E) {
			say(why, why_len, "\"%s\": filter data has a control or non-ASCII "
			    "character (write it as an escape: \\t, \\uHHHH)",
			    shown(it, sizeof(it), text, text_len));
			return -EINVAL;
		}
	}
	ret = unescape(f, len, u, &bad, &bad_len);
	if (ret == -EINVAL)
		say(why, why_len, "\"%s\": filter data has an escape \"%s\" that dotnet-trace "
		    "does not read (escapes: " ESCAPES "; no \\0 alone)",
		    shown(it, sizeof(it), text, text_len),
		    shown(piece, sizeof(piece), bad, bad_len));
	return ret;
}

/* One pair of filter data, p[0..p_len), checked and appended to
 * norm[0..*n) as the runtime receives it. */
static int add_filter_pair(char *norm, size_t *n, const char *p, size_t p_len, const char *text,
			   size_t text_len, char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4], piece[SHOWN_MAX + 4];
	const char *eq = memchr(p, '=', p_len), *v;
	size_t k_len = eq ? (size_t)(eq - p) : p_len, v_len;
	int quote_it;

	if (memchr(p, ':', k_len)) {
		say(why, why_len,
		    "\"%s\": more than 4 fields (write " SYNTAX "; "
		    "the filter data after the third ':' is key=value pairs, where "
		    "only a value may hold a ':')",
		    shown(it, sizeof(it), text, text_len));
		return -EINVAL;
	}
	if (!eq || k_len == 0 || memchr(p, '"', k_len)) {
		say(why, why_len,
		    "\"%s\": filter data \"%s\" is not key=value "
		    "(write FilterData as key=value;key=\"value;with;semicolons\")",
		    shown(it, sizeof(it), text, text_len), shown(piece, sizeof(piece), p, p_len));
		return -EINVAL;
	}
	v = eq + 1;
	v_len = p_len - k_len - 1;
	if (v_len >= 2 && v[0] == '"' && v[v_len - 1] == '"') {
		v++;
		v_len -= 2;
	}
	if (memchr(v, '"', v_len) || (memchr(v, '=', v_len) && v == eq + 1)) {
		say(why, why_len,
		    "\"%s\": filter data \"%s\" has a '\"' or '=' in a "
		    "value without quotes around the whole value (write key=\"a=b;c\")",
		    shown(it, sizeof(it), text, text_len), shown(piece, sizeof(piece), p, p_len));
		return -EINVAL;
	}
	if (has_key(norm, *n, p, k_len)) {
		say(why, why_len,
		    "\"%s\": filter data has the key \"%s\" twice "
		    "(dotnet-trace refuses that too: give it once)",
		    shown(it, sizeof(it), text, text_len), shown(piece, sizeof(piece), p, k_len));
		return -EINVAL;
	}
	/* GetArgumentString: quoted when it holds ';' or '='. */
	quote_it = memchr(v, ';', v_len) || memchr(v, '=', v_len);
	*n += (size_t)sprintf(norm + *n, "%s%.*s=%s%.*s%s", *n ? ";" : "", (int)k_len, p,
			      quote_it ? "\"" : "", (int)v_len, v, quote_it ? "\"" : "");
	return 0;
}

/* Filter data as dotnet-trace reads it (see the top of the file), into
 * what it sends the runtime, in a new string *out.  `text` is the item,
 * for messages. */
static int parse_filter(const char *f, size_t len, char **out, const char *text, size_t text_len,
			char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4];
	char *u = NULL, *norm = NULL;
	size_t u_len, n = 0, start = 0;
	int quoted = 0, ret;

	ret = unescape_filter(f, len, &u, text, text_len, why, why_len);
	if (ret < 0)
		return ret;
	u_len = strlen(u);
	/* Never longer than u: quotes go back only around values that had
	 * them (an unquoted ';' ends a pair, an unquoted '=' is refused). */
	norm = malloc(u_len + 1);
	if (!norm) {
		free(u);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= u_len; i++) {
		const char *p = u + start;
		size_t p_len = i - start;

		if (i < u_len && u[i] == '"')
			quoted = !quoted;
		if (i < u_len && (u[i] != ';' || quoted))
			continue;
		if (quoted) {
			say(why, why_len, "\"%s\": filter data has a '\"' that is not closed "
			    "(quote a whole value: key=\"a;b\")",
			    shown(it, sizeof(it), text, text_len));
			goto invalid;
		}
		start = i + 1;
		if (p_len == 0 && i == u_len && n > 0)
			break; /* a ';' at the end, as dotnet-trace allows */
		if (add_filter_pair(norm, &n, p, p_len, text, text_len, why, why_len) < 0)
			goto invalid;
	}
	free(u);
	*out = norm;
	return 0;
invalid:
	free(u);
	free(norm);
	return -EINVAL;
}

/* The provider name, name[0..name_len): as the runtime would find it.
 * `text` is the item, for messages. */
static int check_name(const char *name, size_t name_len, const char *text, size_t len, char *why,
		      size_t why_len)
{
	char it[SHOWN_MAX + 4];

	if (name_len == 0 || is_blank(name, name_len)) {
		say(why, why_len, "\"%s\": no provider name (write " SYNTAX ")",
		    shown(it, sizeof(it), text, len));
		return -EINVAL;
	}
	if (name_len > EP_NAME_MAX) {
		say(why, why_len, "\"%s\": the provider name is longer than %d characters",
		    shown(it, sizeof(it), text, len), EP_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < name_len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c > 0x7E || c == ',') {
			say(why, why_len, "\"%s\": the provider name has a character that is "
			    "not printable ASCII or is a ',' (provider names are ASCII: "
			    "Microsoft-Windows-DotNETRuntime)", shown(it, sizeof(it), text, len));
			return -EINVAL;
		}
	}
	if (name[0] == ' ' || name[name_len - 1] == ' ') {
		say(why, why_len, "\"%s\": blank around the provider name (the runtime "
		    "would look for a provider with the blank in its name: remove it)",
		    shown(it, sizeof(it), text, len));
		return -EINVAL;
	}
	return 0;
}

/* The keywords field, f[0..f_len), not blank. */
static int keywords_field(const char *f, size_t f_len, uint64_t *keywords, const char *text,
			  size_t len, char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4], piece[SHOWN_MAX + 4];
	int ret = parse_keywords(f, f_len, keywords);

	if (ret == -ERANGE) {
		say(why, why_len,
		    "\"%s\": keywords \"%s\" do not fit in 64 bits "
		    "(16 hex digits at most: 0xFFFFFFFFFFFFFFFF)",
		    shown(it, sizeof(it), text, len), shown(piece, sizeof(piece), f, f_len));
		return -EINVAL;
	}
	if (ret < 0) {
		say(why, why_len,
		    "\"%s\": keywords \"%s\" are not hexadecimal "
		    "(write them as dotnet-trace does: 0x1C or 1C)",
		    shown(it, sizeof(it), text, len), shown(piece, sizeof(piece), f, f_len));
		return -EINVAL;
	}
	return 0;
}

/* The level field, f[0..f_len), not blank. */
static int level_field(const char *f, size_t f_len, uint32_t *level, const char *text, size_t len,
		       char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4], piece[SHOWN_MAX + 4];
	int ret = parse_level(f, f_len, level);

	if (ret == -ERANGE) {
		say(why, why_len, "\"%s\": level %s is above %d (levels: " LEVELS ")",
		    shown(it, sizeof(it), text, len), shown(piece, sizeof(piece), f, f_len),
		    EP_LEVEL_MAX);
		return -EINVAL;
	}
	if (ret < 0) {
		say(why, why_len,
		    "\"%s\": level \"%s\" is neither a number nor a "
		    "level's name (levels: " LEVELS ")",
		    shown(it, sizeof(it), text, len), shown(piece, sizeof(piece), f, f_len));
		return -EINVAL;
	}
	return 0;
}

/* One provider, text[0..len), into `dst`.  `origin` is the list item it
 * comes from. */
static int parse_provider(struct ep_providers *dst, const char *text, size_t len,
			  const char *origin, char *why, size_t why_len)
{
	struct ep_provider p = { .keywords = EP_DEFAULT_KEYWORDS, .level = EP_DEFAULT_LEVEL };
	const char *field[4] = { text, NULL, NULL, NULL };
	size_t field_len[4] = { len, 0, 0, 0 }, n = 1;
	int ret;

	/* The first three ':' separate fields; the filter keeps the rest. */
	for (const char *c; n < 4 && (c = memchr(field[n - 1], ':', field_len[n - 1])); n++) {
		field[n] = c + 1;
		field_len[n] = field_len[n - 1] - (size_t)(field[n] - field[n - 1]);
		field_len[n - 1] = (size_t)(c - field[n - 1]);
	}
	ret = check_name(field[0], field_len[0], text, len, why, why_len);
	if (ret < 0)
		return ret;
	if (n > 1 && !is_blank(field[1], field_len[1])) {
		ret = keywords_field(field[1], field_len[1], &p.keywords, text, len, why, why_len);
		if (ret < 0)
			return ret;
	}
	if (n > 2 && !is_blank(field[2], field_len[2])) {
		ret = level_field(field[2], field_len[2], &p.level, text, len, why, why_len);
		if (ret < 0)
			return ret;
	}
	if (n > 3 && !is_blank(field[3], field_len[3])) {
		ret = parse_filter(field[3], field_len[3], &p.filter, text, len, why, why_len);
		if (ret < 0)
			return ret;
		p.origin = strdup(origin);
		if (!p.origin) {
			free(p.filter);
			return -ENOMEM;
		}
	}
	p.name = strndup(field[0], field_len[0]);
	if (!p.name) {
		provider_free(&p);
		return -ENOMEM;
	}
	return merge(dst, &p, origin, why, why_len);
}

static const struct ep_preset *preset_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		if (strcasecmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

/* Written like a preset's name: lower-case letters, digits and '-'. */
static int preset_shaped(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

/* The preset a misspelt name was meant to be, as the core's "did you
 * mean" picks a key. */
static const char *preset_suggest(const char *name)
{
	const char *names[ARRAY_SIZE(presets)];

	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		names[i] = presets[i].name;
	return tr_closest(name, names, ARRAY_SIZE(presets));
}

static int add_item(struct ep_providers *dst, const char *item, char *why, size_t why_len)
{
	char it[SHOWN_MAX + 4];
	const struct ep_preset *preset;
	const char *close;
	size_t len;
	int ret;

	if (strchr(item, ':'))
		return parse_provider(dst, item, strlen(item), item, why, why_len);
	preset = preset_find(item);
	if (preset) {
		const char *cursor = preset->spec, *spec;

		while (tr_list_next(&cursor, &spec, &len))
			if ((ret = parse_provider(dst, spec, len, preset->name, why, why_len)) < 0)
				return ret;
		return 0;
	}
	if (preset_shaped(item)) {
		close = preset_suggest(item);
		say(why, why_len, "unknown preset \"%s\" (%s%s%spresets: %s; a provider is "
		    "written " SYNTAX ", \"%s:\" for one of that name)",
		    shown(it, sizeof(it), item, strlen(item)), close ? "did you mean " : "",
		    close ? close : "", close ? "? " : "", ep_preset_names(), it);
		return -EINVAL;
	}
	return parse_provider(dst, item, strlen(item), item, why, why_len);
}

int ep_providers_add(struct ep_providers *out, const char *item, char *why, size_t why_len)
{
	struct ep_providers next;
	int ret;

	if (!item || !*item) {
		say(why, why_len, "an empty item (write a provider, " SYNTAX ", or a preset: %s)",
		    ep_preset_names());
		return -EINVAL;
	}
	/* On a copy, so that an item failing halfway (the second provider of
	 * a preset) leaves `out` as it was. */
	ret = copy_providers(&next, out);
	if (ret == 0)
		ret = add_item(&next, item, why, why_len);
	if (ret < 0) {
		if (ret == -ENOMEM)
			say(why, why_len, "out of memory");
		ep_providers_free(&next);
		return ret;
	}
	ep_providers_free(out);
	*out = next;
	return 0;
}

int ep_providers_remove(struct ep_providers *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcasecmp(p->v[i].name, name) != 0)
			continue;
		provider_free(&p->v[i]);
		memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(p->v[i]));
		p->n--;
		return 1;
	}
	return 0;
}

const char *ep_preset_names(void)
{
	return preset_names + 2;
}

const char *ep_preset_doc(size_t i)
{
	return i < ARRAY_SIZE(presets) ? presets[i].doc : NULL;
}

/* snprintf at buf + *off, never past len; *off stops at the end. */
__attribute__((format(printf, 4, 5)))
static void put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off + 1 >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*off += (size_t)n < len - *off ? (size_t)n : len - *off - 1;
}

/* The filter as the item would be written: escapes, which Regex.Unescape
 * turns back, for what a log line cannot hold (control and non-ASCII
 * characters) and what the list would change (a ',' splits it, a ' ' at
 * the end of an item is trimmed). */
static void put_filter(char *buf, size_t len, size_t *off, const char *f)
{
	const unsigned char *s = (const unsigned char *)f;

	while (*s) {
		unsigned char c = *s;
		uint32_t cp;

		if (c == '\\')
			put(buf, len, off, "\\\\");
		else if (c == '\n')
			put(buf, len, off, "\\n");
		else if (c == '\r')
			put(buf, len, off, "\\r");
		else if (c == '\t')
			put(buf, len, off, "\\t");
		else if (c < 0x20 || c == 0x7F || c == ',' || (c == ' ' && !s[1]))
			put(buf, len, off, "\\x%02X", (unsigned int)c);
		else if (c < 0x80)
			put(buf, len, off, "%c", c);
		if (c < 0x80) {
			s++;
			continue;
		}
		/* The UTF-8 of a \x or \u escape: 2 or 3 bytes. */
		if ((c & 0xE0) == 0xC0 && (s[1] & 0xC0) == 0x80) {
			cp = (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
			s += 2;
		} else if ((c & 0xF0) == 0xE0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
			cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 |
			     (s[2] & 0x3F);
			s += 3;
		} else {
			cp = 0xFFFD;
			s++;
		}
		put(buf, len, off, "\\u%04" PRIX32, cp);
	}
}

const char *ep_providers_str(const struct ep_providers *p, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < p->n; i++) {
		const struct ep_provider *e = &p->v[i];

		put(buf, len, &off, "%s%s:0x%016" PRIX64 ":%" PRIu32, i ? "," : "", e->name,
		    e->keywords, e->level);
		if (e->filter) {
			put(buf, len, &off, ":");
			put_filter(buf, len, &off, e->filter);
		}
	}
	return buf;
}
