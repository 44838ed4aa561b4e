/* A reader of NetTrace, the EventPipe stream a .NET runtime sends over its
 * diagnostics IPC and dotnet-trace saves as .nettrace (format V4/V5:
 * "Nettrace", "!FastSerialization.1", a Trace object, then MetadataBlock,
 * StackBlock, EventBlock and SPBlock objects, ended by a NullReference tag;
 * microsoft/perfview src/TraceEvent/EventPipe/NetTraceFormat_v5.md).
 *
 * The stream comes from a traced process: every length and offset is
 * checked against what is there, and a malformed stream ends the read with
 * a sentence in nt->why that names the byte offset, never with a crash.
 * Memory is bounded whatever the stream says: a block is at most
 * TR_NETTRACE_MAX_BLOCK bytes, the metadata kept (one record per kind of
 * event) at most TR_NETTRACE_MAX_KINDS records and TR_NETTRACE_MAX_META_BYTES
 * bytes of names, the threads followed for lost events at most
 * TR_NETTRACE_MAX_THREADS.
 *
 * The stream can be fed in pieces (tr_nettrace_feed: a zip entry inflated
 * as it is read), or whole from memory (tr_nettrace_read).  Stack blocks
 * are stepped over, sequence points read for lost events only; events are
 * given in stream order, which is not time order across threads. */
#ifndef TR_LIB_NETTRACE_H
#define TR_LIB_NETTRACE_H

#include <stddef.h>
#include <stdint.h>

/* The runtime writes blocks of about 100 KB; nothing honest comes near. */
#define TR_NETTRACE_MAX_BLOCK (64u << 20)
#define TR_NETTRACE_MAX_KINDS (1u << 20)
#define TR_NETTRACE_MAX_META_BYTES (64u << 20)
/* TraceEvent follows 5000, forgetting the least recent past that; past
 * this many (a table of 2 MiB), the reader forgets all it followed and
 * starts afresh: a gap across that moment is not counted. */
#define TR_NETTRACE_MAX_THREADS (1u << 16)

/* The Trace object: what applies to every event. */
struct tr_nettrace_info {
	/* When the session started (UTC): year, month, day of week, day,
	 * hour, minute, second, millisecond ... */
	uint16_t sync_time[8];
	/* ... which is this QPC timestamp; events' timestamps are QPC ticks,
	 * qpc_freq of them a second (1e9 on Linux). */
	int64_t sync_qpc, qpc_freq;
	uint32_t pointer_size, pid, ncpus, sampling_rate;
	uint32_t version; /* the Trace object's (4: NetTrace V4 and V5) */
};

/* One event, valid during the callback only. */
struct tr_nettrace_event {
	const struct tr_nettrace_info *trace;
	/* From the event's metadata record: provider "" and event_id 0 when
	 * the stream defined no metadata of that id (known is then 0); name
	 * NULL when the record gives none (the runtime's own events). */
	const char *provider, *name;
	int known;
	uint32_t metadata_id, event_id, version, level;
	uint64_t keywords;
	int64_t timestamp; /* QPC ticks */
	uint64_t thread_id, capture_thread_id;
	uint32_t sequence, processor, stack_id;
	int sorted;
	const uint8_t *activity_id, *related_activity_id; /* 16 bytes each */
	const uint8_t *payload;
	size_t payload_len;
	uint64_t offset; /* of the event's header in the stream */
};

/* Returns 0 to go on, or a negative value that stops the read, which
 * returns it. */
typedef int (*tr_nettrace_fn)(void *arg, const struct tr_nettrace_event *ev);

/* One kind of event: a metadata record, and how many events it described. */
struct tr_nettrace_kind {
	char *provider, *name; /* name NULL when the record gives none */
	uint32_t metadata_id, event_id, version, level;
	uint64_t keywords;
	uint64_t count;
};

struct tr_nettrace_stats {
	uint64_t events, unknown_metadata; /* events of no known kind, in events too */
	uint64_t event_blocks, metadata_blocks, stack_blocks, sequence_points;
	/* Events the runtime dropped (its session's buffers were full): the
	 * gaps in each thread's sequence numbers, between its events and at
	 * the sequence points, as TraceEvent's EventsLost counts them
	 * (EventPipeEventSource, EventCache.cs).  A thread whose numbers go
	 * backwards is a new thread with an old id (TraceEvent counts
	 * 2^31 - 1 lost there): nothing is counted. */
	uint64_t lost;
};

/* private: a thread followed for lost events */
struct tr_nettrace_thread {
	uint64_t id;  /* the capture thread's */
	uint32_t seq; /* the last sequence number seen */
	uint32_t used;
};

/* Zero-initialised (or tr_nettrace_init) is ready to be fed. */
struct tr_nettrace {
	struct tr_nettrace_info trace; /* once have_trace */
	int have_trace, ended;
	struct tr_nettrace_stats stats;
	struct tr_nettrace_kind *kinds; /* in the order they were defined */
	size_t n_kinds;
	uint64_t offset; /* stream offset of the next byte to feed */
	size_t need;     /* after a feed: bytes the next feed must hold at least */
	char why[200];   /* why the read failed */
	/* private */
	size_t kinds_cap, meta_bytes, n_slots;
	uint32_t *slots; /* metadata id -> index in kinds + 1 */
	struct tr_nettrace_thread *threads; /* open addressing, at most half full */
	size_t n_threads, threads_cap;
	int failed;
};

void tr_nettrace_init(struct tr_nettrace *nt);
void tr_nettrace_free(struct tr_nettrace *nt);

/* Parses the whole objects `data` holds (the stream from nt->offset on),
 * calling cb for each event, and sets *used to the bytes consumed: the rest
 * (an object not yet complete) must be fed again with more behind it, in a
 * buffer of nt->need bytes at least.  Returns 0 (more wanted), 1 once the
 * stream's end tag is read, the callback's value if it stopped the read,
 * -EBADMSG for a malformed stream or -EPROTONOSUPPORT for a version this
 * reader does not know (nt->why says which and where), -E2BIG past the
 * memory limits above, -ENOMEM.  After an error or a callback's stop every
 * call returns the same again. */
int tr_nettrace_feed(struct tr_nettrace *nt, const void *data, size_t len, size_t *used,
		     tr_nettrace_fn cb, void *arg);

/* At the end of the input: 0 when the stream ended with its end tag, else
 * -ENODATA with nt->why saying where it was cut short (a process that
 * died, a file cut at a size limit: the events before are good). */
int tr_nettrace_finish(struct tr_nettrace *nt);

/* The whole stream in memory: init, feed, finish.  0, or what those return
 * (also -EBADMSG for bytes after the end tag); free nt in every case. */
int tr_nettrace_read(struct tr_nettrace *nt, const void *buf, size_t len, tr_nettrace_fn cb,
		     void *arg);

/* A NUL-terminated UTF-16LE string at p (len bytes there) as UTF-8 in a
 * new buffer (*out, free() it), for payload fields.  *used: the bytes read,
 * the NUL included.  Unpaired surrogates become U+FFFD; control characters
 * are kept (sanitize before printing).  0, -EBADMSG with no NUL in len, or
 * -ENOMEM. */
int tr_nettrace_utf16z(const uint8_t *p, size_t len, char **out, size_t *used);

#endif
