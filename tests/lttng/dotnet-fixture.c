/* Stands in for a .NET process in tests of `tracerig --check -p PID`:
 * dlopen()s the libraries named on the command line (empty shared objects
 * named libcoreclr.so, libcoreclrtraceptprovider.so, liblttng-ust.so.0 the
 * test builds), optionally chroot()s into a directory so that its root --
 * what /proc/PID/root shows, as for a container -- is another filesystem,
 * prints "ready" and waits to be killed.
 *
 *   dotnet-fixture [--chroot DIR] LIB...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *root = NULL;
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "--chroot") == 0) {
		root = argv[2];
		i = 3;
	}
	for (; i < argc; i++) {
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "dotnet-fixture: %s\n", dlerror());
			return 1;
		}
	}
	if (root && (chroot(root) < 0 || chdir("/") < 0)) {
		perror("dotnet-fixture: chroot");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
