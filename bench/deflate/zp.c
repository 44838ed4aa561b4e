/* Deflates a file as tracerig's packaging and streaming thread do
 * (lib/zpiece.c, one piece to the final block) at a level, zlib's or
 * ISA-L's, and prints "microseconds_of_cpu compressed_bytes".
 *   zp FILE LEVEL [fast]      */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/zpiece.h"

int main(int argc, char **argv)
{
	struct tr_zpiece z;
	struct timespec t0, t1;
	struct stat st;
	int in, out, level;
	int64_t n;

	if (argc < 3)
		return 2;
	level = atoi(argv[2]) | (argc > 3 ? TR_ZPIECE_FAST : 0);
	in = open(argv[1], O_RDONLY);
	out = open("/dev/null", O_WRONLY);
	if (in < 0 || out < 0 || fstat(in, &st) < 0 || tr_zpiece_begin(&z, level, out) < 0) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	n = tr_zpiece_feed_fd(&z, in, 0, (uint64_t)st.st_size);
	if (n != st.st_size || tr_zpiece_flush(&z, 1) < 0) {
		fprintf(stderr, "%s: deflate failed\n", argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("%lld %llu\n",
	       (long long)((t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000),
	       (unsigned long long)z.out);
	tr_zpiece_end(&z);
	close(in);
	close(out);
	return 0;
}
