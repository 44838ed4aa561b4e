/* The ReadyToRun reader as a symbolizer would use it, for
 * tests/dotnet/r2r.sh: reads lines "IMAGE MAP_START MAP_OFFSET ADDRESS"
 * (hex, a mapping of IMAGE as /proc/PID/maps shows it and an address in
 * it), prints "ADDRESS NAME<tab>SIGNATURE" per line (tr_r2r_method's name
 * and signature), NAME and SIGNATURE "-" when the image is not read or no
 * method holds the address.  Each image is read once (lines grouped
 * by image); why an image could not be read goes to stderr.  A composite
 * image's components are opened beside it, as the runtime finds them.
 *
 * r2r-lookup --dump IMAGE prints the whole table instead, a method a line:
 * "START_RVA LENGTH NAME<tab>SIGNATURE" (hex RVA, decimal length), for
 * tests/dotnet/r2r-arm64.sh to compare with crossgen2's map. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/r2r.h"

/* The directory of the image being read, for its components. */
static char image_dir[4096];

static int open_beside(void *arg, const char *file_name)
{
	char p[8192];
	int fd;

	(void)arg;
	snprintf(p, sizeof(p), "%s/%s", image_dir, file_name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int dump(const char *path)
{
	char why[256];
	struct tr_r2r r;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	snprintf(image_dir, sizeof(image_dir), "%s", path);
	if (strrchr(image_dir, '/'))
		*strrchr(image_dir, '/') = 0;
	rc = tr_r2r_read_with(fd, TR_R2R_SIGNATURES, open_beside, NULL, &r, why, sizeof(why));
	close(fd);
	if (rc) {
		fprintf(stderr, "r2r-lookup: %s: %s\n", path, why);
		return 1;
	}
	for (size_t i = 0; i < r.n; i++)
		printf("%x %u %s\t%s\n", r.v[i].start_rva, r.v[i].end_rva - r.v[i].start_rva, r.v[i].name,
		       r.v[i].signature ? r.v[i].signature : "-");
	tr_r2r_free(&r);
	return 0;
}

int main(int argc, char **argv)
{
	char line[8192], cur[4096] = "";
	struct tr_r2r r = { 0 };
	int have = 0;

	if (argc == 3 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2]);
	while (fgets(line, sizeof(line), stdin)) {
		char path[4096];
		uint64_t start, off, addr;
		uint32_t rva;
		const struct tr_r2r_method *m = NULL;

		if (sscanf(line, "%4095s %" SCNx64 " %" SCNx64 " %" SCNx64, path, &start, &off, &addr) != 4) {
			fprintf(stderr, "r2r-lookup: bad line: %s", line);
			return 2;
		}
		if (strcmp(path, cur) != 0) {
			char why[256];
			int fd, rc;

			if (have)
				tr_r2r_free(&r);
			have = 0;
			snprintf(cur, sizeof(cur), "%s", path);
			snprintf(image_dir, sizeof(image_dir), "%s", path);
			if (strrchr(image_dir, '/'))
				*strrchr(image_dir, '/') = 0;
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				perror(path);
			} else {
				rc = tr_r2r_read_with(fd, TR_R2R_SIGNATURES, open_beside, NULL, &r, why, sizeof(why));
				close(fd);
				if (rc)
					fprintf(stderr, "r2r-lookup: %s: %s\n", path, why);
				have = rc == 0;
			}
		}
		if (have && tr_r2r_addr_rva(&r, addr, start, off, &rva) == 0)
			m = tr_r2r_find(&r, rva);
		printf("%" PRIx64 " %s\t%s\n", addr, m ? m->name : "-",
		       m && m->signature ? m->signature : "-");
	}
	if (have)
		tr_r2r_free(&r);
	return 0;
}
