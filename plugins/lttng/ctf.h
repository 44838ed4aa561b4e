/* What the CTF trace LTTng left on disk contains, read back after the
 * session is destroyed. */
#ifndef TR_LTTNG_CTF_H
#define TR_LTTNG_CTF_H

#include <stddef.h>
#include <stdint.h>

struct ctf_summary {
	uint64_t files, bytes;
	size_t n_metadata;          /* metadata files: one per buffer set */
	size_t n_streams;           /* channel stream files */
	int have_clock;
	char clock_name[32];        /* "monotonic" for LTTng */
	int64_t clock_offset_ns;    /* clock value 0 in ns since the Epoch */
	char first_metadata[1024];   /* relative to the trace dir */
};

/* Walks `dir` (the trace root) and parses the first metadata file's clock.
 * Returns 0 (an empty or missing dir gives an all-zero summary) or a
 * negative errno. */
int ctf_summarize(const char *dir, struct ctf_summary *out);

/* Extracts the clock class of CTF metadata, packetized (LTTng's on-disk
 * form, packets with a 37-byte header) or plain text.  Returns 0 or -ENOENT. */
int ctf_metadata_clock(const unsigned char *data, size_t len, char *name, size_t name_len,
		       int64_t *offset_ns);

typedef void (*ctf_name_cb)(void *arg, const char *event_name);

/* Calls `cb` with the name of every event class declared in CTF metadata
 * (packetized or plain text).  Returns how many, or a negative errno. */
int ctf_metadata_events(const unsigned char *data, size_t len, ctf_name_cb cb, void *arg);

/* The same for every metadata file under the trace root `dir`: the events
 * some traced process registered (LTTng declares an event in the metadata
 * when an application with a matching tracepoint registers, whether or not
 * it fires).  Returns how many declarations, or a negative errno. */
int ctf_event_names(const char *dir, ctf_name_cb cb, void *arg);

#endif
