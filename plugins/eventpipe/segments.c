/* Flight mode's segments: see segments.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/vec.h"
#include "segments.h"

int ep_segments_add(struct ep_segments *l, const char *entry, uint64_t start_ns, uint64_t end_ns,
		    int complete)
{
	struct ep_segment *grown = tr_vec_grow(l->v, &l->cap, l->n + 1, sizeof(*grown), 4);

	if (!grown)
		return -ENOMEM;
	l->v = grown;
	l->v[l->n] = (struct ep_segment){ .start_ns = start_ns, .end_ns = end_ns,
					  .complete = complete };
	snprintf(l->v[l->n].entry, sizeof(l->v[l->n].entry), "%s", entry);
	l->n++;
	return 0;
}

size_t ep_segments_prune(struct ep_segments *l, const char *dir, uint64_t before_ns)
{
	size_t kept = 0, gone = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].end_ns < before_ns) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", dir, l->v[i].entry);
			unlink(path);
			gone++;
			continue;
		}
		l->v[kept++] = l->v[i];
	}
	l->n = kept;
	return gone;
}

static int copy_file(int dirfd, const char *from, int out_dirfd, const char *to)
{
	int in, out, ret;

	in = openat(dirfd, from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -errno;
	out = openat(out_dirfd, to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	ret = tr_copy_fd(in, out);
	close(in);
	if (close(out) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0)
		unlinkat(out_dirfd, to, 0);
	return ret;
}

int ep_segments_snapshot(const struct ep_segments *l, const char *dir, const char *out_dir,
			 uint64_t from_ns, uint64_t to_ns, size_t *n)
{
	int dirfd, out_dirfd, ret = 0;

	*n = 0;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	out_dirfd = open(out_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (out_dirfd < 0) {
		ret = -errno;
		close(dirfd);
		return ret;
	}
	for (size_t i = 0; i < l->n && ret == 0; i++) {
		const struct ep_segment *g = &l->v[i];

		if (g->end_ns < from_ns || g->start_ns > to_ns)
			continue;
		if (linkat(dirfd, g->entry, out_dirfd, g->entry, 0) < 0)
			ret = errno == EXDEV ? copy_file(dirfd, g->entry, out_dirfd, g->entry)
					     : -errno;
		if (ret == 0)
			(*n)++;
	}
	close(out_dirfd);
	close(dirfd);
	return ret;
}

void ep_segments_free(struct ep_segments *l)
{
	free(l->v);
	*l = (struct ep_segments){ 0 };
}
