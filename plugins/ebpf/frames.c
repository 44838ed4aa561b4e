/* The tracing machinery's frames, found by name. */
#include "config.h"

#include <string.h>

#include "frames.h"

/* Only among the first few: deeper, such a name is the traced code's. */
#define TRACING_FRAMES_MAX 6

int fr_is_tracing_frame(const char *name)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"__traceiter_", "trace_call_bpf" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

size_t fr_tracing_frames(const struct tracerig_services *svc, struct tracerig_ctx *ctx, pid_t pid,
			 const uint64_t *kips, size_t nk)
{
	size_t kstart = 0;

	/* Up to the last such frame among the first few, as the BPF
	 * program's own frame may have no name. */
	for (size_t i = 0; i < nk && i < TRACING_FRAMES_MAX; i++) {
		const char *name;

		/* On any failure the service still names the frame ("[unknown]"). */
		(void)svc->symbols->frame_name(ctx, pid, kips[i], 1, 0, &name, NULL);
		if (fr_is_tracing_frame(name))
			kstart = i + 1;
	}
	return kstart;
}
