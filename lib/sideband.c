/* Record layouts are perf_event_open(2)'s; fields are copied out with
 * memcpy because a record handed over from a ring may be unaligned. */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "sideband.h"

/* MMAP2: header; u32 pid, tid; u64 addr, len, pgoff; then either u32 maj,
 * min; u64 ino, ino_generation, or (PERF_RECORD_MISC_MMAP_BUILD_ID) u8
 * build_id_size, 3 bytes reserved, u8 build_id[20]; u32 prot, flags; char
 * filename[]; the sample_id trailer. */
static enum tr_sideband_kind decode_mmap2(const struct perf_event_header *h, size_t trailer_len,
					  struct tr_sideband_event *ev)
{
	const size_t body = sizeof(*h), name_off = body + 8 + 24 + 24 + 8;
	const unsigned char *b = (const unsigned char *)h;
	struct tracerig_mapping *m = &ev->map;
	uint32_t u32[2], prot;
	size_t name_max;

	if (h->size < name_off + trailer_len + 8)
		return TR_SIDEBAND_OTHER;
	name_max = h->size - name_off - trailer_len;
	if (strnlen((const char *)b + name_off, name_max) == name_max)
		return TR_SIDEBAND_OTHER;
	memcpy(&prot, b + body + 8 + 24 + 24, sizeof(prot));
	if (!(prot & PROT_EXEC))
		return TR_SIDEBAND_OTHER;
	memcpy(u32, b + body, sizeof(u32));
	m->pid = (pid_t)u32[0];
	if (m->pid <= 0)
		return TR_SIDEBAND_OTHER;
	memcpy(&m->start, b + body + 8, 8);
	memcpy(&m->len, b + body + 16, 8);
	memcpy(&m->pgoff, b + body + 24, 8);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m->build_id_len = b[body + 32];
		if (m->build_id_len > 20)
			m->build_id_len = 20;
		m->build_id = b + body + 36;
	} else {
		memcpy(u32, b + body + 32, sizeof(u32));
		m->dev = makedev(u32[0], u32[1]);
		memcpy(&m->ino, b + body + 40, 8);
	}
	m->path = (const char *)b + name_off;
	ev->pid = m->pid;
	return TR_SIDEBAND_MMAP;
}

enum tr_sideband_kind tr_sideband_decode(const struct perf_event_header *h, size_t trailer_len,
					 struct tr_sideband_event *ev)
{
	uint32_t u[4];

	memset(ev, 0, sizeof(*ev));
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		ev->kind = decode_mmap2(h, trailer_len, ev);
		break;
	case PERF_RECORD_COMM:
		/* { header; u32 pid, tid; char comm[] }: an exec replaces the image. */
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || h->size < sizeof(*h) + 8)
			break;
		memcpy(u, h + 1, 8);
		if (u[0] == u[1] && (pid_t)u[0] > 0) {
			ev->pid = (pid_t)u[0];
			ev->kind = TR_SIDEBAND_EXEC;
		}
		break;
	case PERF_RECORD_FORK:
		/* { header; u32 pid, ppid, tid, ptid; u64 time }: a new process,
		 * not a new thread of one. */
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(u, h + 1, 16);
		if (u[0] != u[1] && u[0] == u[2] && (pid_t)u[0] > 0 && (pid_t)u[1] > 0) {
			ev->pid = (pid_t)u[0];
			ev->parent = (pid_t)u[1];
			ev->kind = TR_SIDEBAND_FORK;
		}
		break;
	default:
		break;
	}
	return ev->kind;
}
