/* A FUSE file system of one file that can turn into a tarpit: the test of
 * a traced program whose executable lives on a FUSE mount whose server
 * stops answering (issue 27, item 7).
 *
 *   fusepit MOUNTPOINT FILE
 *
 * mounts a file system (as root: mount(2) on /dev/fuse, no libfuse) whose
 * root holds FILE's bytes as "prog" (mode 0755), answering with zero
 * cache timeouts so that every lookup, open and read reaches it.  Any
 * name perf-PID.map is a small perf map of PID (mode 0644, root's) until
 * it is unlinked: a process whose TMPDIR is the mount has its map there.  SIGUSR1
 * turns it into a tarpit: every request from then on is read and never
 * answered, as a hung server's.  SIGTERM ends it (the caller aborts the
 * connection through /sys/fs/fuse/connections and unmounts). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROG_INO 2
/* perf-PID.map: inode MAP_INO + PID */
#define MAP_INO 1000
#define MAP_TEXT "401000 100 fusepit_mapped_function\n"
#define MAX_REMOVED 64

static unsigned long removed[MAX_REMOVED];
static size_t n_removed;

static volatile sig_atomic_t tarpit;
static char *content;
static size_t content_len;

static void on_usr1(int sig)
{
	(void)sig;
	tarpit = 1;
}

static void reply(int fd, uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header out = { .len = sizeof(out) + (error ? 0 : len),
				       .error = error, .unique = unique };
	struct iovec iov[2] = { { &out, sizeof(out) }, { (void *)data, error ? 0 : len } };

	if (writev(fd, iov, 2) < 0 && errno != ENOENT)
		perror("fusepit: writev");
}

/* The PID of a name perf-PID.map not unlinked yet, else 0. */
static unsigned long map_pid(const char *name)
{
	unsigned long pid;
	char end[8];

	if (sscanf(name, "perf-%lu.ma%1[p]%1s", &pid, end, end + 2) != 2 || pid == 0)
		return 0;
	for (size_t i = 0; i < n_removed; i++)
		if (removed[i] == pid)
			return 0;
	return pid;
}

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino >= MAP_INO) {
		a->mode = S_IFREG | 0644;
		a->size = sizeof(MAP_TEXT) - 1;
		a->blocks = 1;
	} else if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0755;
		a->size = content_len;
		a->blocks = (content_len + 511) / 512;
	}
}

static void serve(int fd, const char *buf)
{
	const struct fuse_in_header *in = (const void *)buf;
	const void *arg = buf + sizeof(*in);

	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = arg;
		struct fuse_init_out io = { .major = FUSE_KERNEL_VERSION,
					    .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
							     ? ii->minor : FUSE_KERNEL_MINOR_VERSION,
					    .max_readahead = ii->max_readahead,
					    .max_write = 4096, .max_background = 16,
					    .congestion_threshold = 12 };

		reply(fd, in->unique, 0, &io, sizeof(io));
		break;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out eo = { .nodeid = PROG_INO, .generation = 1 };
		unsigned long pid = map_pid(arg);

		if (in->nodeid == FUSE_ROOT_ID && pid) {
			eo.nodeid = MAP_INO + pid;
		} else if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "prog") != 0) {
			reply(fd, in->unique, -ENOENT, NULL, 0);
			break;
		}
		fill_attr(&eo.attr, eo.nodeid);
		reply(fd, in->unique, 0, &eo, sizeof(eo));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out ao = { 0 };

		fill_attr(&ao.attr, in->nodeid);
		reply(fd, in->unique, 0, &ao, sizeof(ao));
		break;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out oo = { .fh = 1 };

		reply(fd, in->unique, 0, &oo, sizeof(oo));
		break;
	}
	case FUSE_READ: {
		const struct fuse_read_in *ri = arg;
		size_t off = ri->offset < content_len ? ri->offset : content_len;
		size_t n = content_len - off < ri->size ? content_len - off : ri->size;

		if (in->nodeid >= MAP_INO) {
			const char *text = MAP_TEXT;
			size_t tlen = sizeof(MAP_TEXT) - 1;

			off = ri->offset < tlen ? ri->offset : tlen;
			n = tlen - off < ri->size ? tlen - off : ri->size;
			reply(fd, in->unique, 0, text + off, n);
			break;
		}
		if (in->nodeid != PROG_INO) {
			reply(fd, in->unique, -EISDIR, NULL, 0);
			break;
		}
		reply(fd, in->unique, 0, content + off, n);
		break;
	}
	case FUSE_UNLINK: {
		unsigned long pid = map_pid(arg);

		if (in->nodeid != FUSE_ROOT_ID || !pid) {
			reply(fd, in->unique, -EPERM, NULL, 0);
			break;
		}
		if (n_removed < MAX_REMOVED)
			removed[n_removed++] = pid;
		printf("fusepit: unlinked %s\n", (const char *)arg);
		fflush(stdout);
		reply(fd, in->unique, 0, NULL, 0);
		break;
	}
	case FUSE_READDIR: {
		/* One entry, "prog", then the end. */
		const struct fuse_read_in *ri = arg;
		char out[256];
		struct fuse_dirent *d = (void *)out;
		size_t len = 0;

		if (ri->offset == 0) {
			d->ino = PROG_INO;
			d->off = 1;
			d->namelen = 4;
			d->type = DT_REG;
			memcpy(d->name, "prog", 4);
			len = FUSE_DIRENT_SIZE(d);
		}
		reply(fd, in->unique, 0, out, len);
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		break; /* never answered */
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_ACCESS:
		reply(fd, in->unique, 0, NULL, 0);
		break;
	case FUSE_DESTROY:
		reply(fd, in->unique, 0, NULL, 0);
		exit(0);
	default:
		reply(fd, in->unique, -ENOSYS, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static char buf[(1 << 20) + FUSE_MIN_READ_BUFFER];
	char opts[128];
	struct stat st;
	int fd, src;

	if (argc != 3) {
		fprintf(stderr, "usage: fusepit MOUNTPOINT FILE\n");
		return 2;
	}
	src = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	content_len = (size_t)st.st_size;
	content = malloc(content_len ? content_len : 1);
	if (!content || read(src, content, content_len) != (ssize_t)content_len) {
		perror("fusepit: read");
		return 1;
	}
	close(src);
	signal(SIGUSR1, on_usr1);
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("/dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("fusepit", argv[1], "fuse.fusepit", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("fusepit: mount");
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			if (errno == ENODEV)
				return 0; /* unmounted or aborted */
			perror("fusepit: read /dev/fuse");
			return 1;
		}
		if ((size_t)n < sizeof(struct fuse_in_header))
			continue;
		if (tarpit && ((struct fuse_in_header *)buf)->opcode != FUSE_INIT)
			continue; /* read, never answered */
		serve(fd, buf);
	}
}
