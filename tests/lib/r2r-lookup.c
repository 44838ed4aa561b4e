/* The ReadyToRun reader as a symbolizer would use it, for
 * tests/dotnet/r2r.sh: reads lines "IMAGE MAP_START MAP_OFFSET ADDRESS"
 * (hex, a mapping of IMAGE as /proc/PID/maps shows it and an address in
 * it), prints "ADDRESS NAME<tab>SIGNATURE" per line (tr_r2r_method's name
 * and signature), NAME and SIGNATURE "-" when the image is not read or no
 * method holds the address.  Each image is read once (lines grouped
 * by image); why an image could not be read goes to stderr. */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/r2r.h"

int main(void)
{
	char line[8192], cur[4096] = "";
	struct tr_r2r r = { 0 };
	int have = 0;

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
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				perror(path);
			} else {
				rc = tr_r2r_read(fd, TR_R2R_SIGNATURES, &r, why, sizeof(why));
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
