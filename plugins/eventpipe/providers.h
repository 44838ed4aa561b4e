/* The EventPipe providers a profile asks for: the items of `[eventpipe]
 * providers = ...`, each a provider in dotnet-trace's --providers syntax,
 * Name[:Keywords[:Level[:FilterData]]], or the name of a preset.
 *
 * Everything here is pure (no I/O, no logging): functions fill `why` with
 * what is wrong and what to write instead, and the caller logs it with
 * its context. */
#ifndef TR_EVENTPIPE_PROVIDERS_H
#define TR_EVENTPIPE_PROVIDERS_H

#include <stddef.h>
#include <stdint.h>

/* The runtime's CPU sampler: the plugin drops it when perf_events samples. */
#define EP_SAMPLE_PROFILER "Microsoft-DotNETCore-SampleProfiler"

/* What dotnet-trace uses for an omitted or empty field. */
#define EP_DEFAULT_KEYWORDS 0
#define EP_DEFAULT_LEVEL 4 /* Informational */

#define EP_LEVEL_MAX 5       /* Verbose */
#define EP_NAME_MAX 256      /* characters of a provider name */
#define EP_PROVIDERS_MAX 64  /* providers in one list, presets included */

struct ep_provider {
	char *name;        /* "Microsoft-Windows-DotNETRuntime" */
	uint64_t keywords;
	uint32_t level;    /* 0 (LogAlways) .. 5 (Verbose) */
	char *filter;      /* FilterData "key=value;key=value" as the runtime takes it, or NULL */
	char *origin;      /* the list item `filter` came from (NULL with no filter), to
	                    * name both items when another one brings a different filter */
};

/* Zero-initialised is empty and ready. */
struct ep_providers {
	struct ep_provider *v;
	size_t n;
};

/* Adds one list item (a provider or a preset name) to `out`, merging: the
 * same provider named twice (names compare case-insensitively, as
 * dotnet-trace's do) is one provider with the keywords OR-ed, the higher level
 * and the filter data of whichever item has some; two different non-empty
 * filters are an error that names both items.
 * Returns 0; -EINVAL with `why` saying what is wrong and what to write
 * instead, `out` unchanged; -ENOMEM, `out` unchanged.  An item with a ':'
 * is a provider; one without is a preset when it is a preset's name (in
 * any case), an unknown preset when it is written like one (lower-case
 * letters, digits and '-'), and a provider with the default keywords and
 * level otherwise ("System.Runtime"). */
int ep_providers_add(struct ep_providers *out, const char *item, char *why, size_t why_len);

/* Removes provider `name` if present.  1 removed, 0 not there. */
int ep_providers_remove(struct ep_providers *p, const char *name);

void ep_providers_free(struct ep_providers *p);

/* The preset names, comma-separated, for docs and messages. */
const char *ep_preset_names(void);

/* One line per preset, "name: what it enables. Providers: ...", for the
 * profile reference; NULL after the last (index from 0). */
const char *ep_preset_doc(size_t i);

/* Writes the providers in dotnet-trace syntax ("Name:0xKEYWORDS:LEVEL[:filter]",
 * keywords as 16 hex digits, joined by ","), cut to fit `len`, into buf;
 * returns buf.  Characters the list syntax or a log line cannot hold
 * (',', '\\', control and non-ASCII characters) are written as the escapes
 * dotnet-trace reads (\x2C, \\, \n, \u00E9), so each item of the string
 * parses back to the same provider. */
const char *ep_providers_str(const struct ep_providers *p, char *buf, size_t len);

#endif
