/* The workload's native library, called through P/Invoke.  Built with
 * frame pointers (zlib, say, is not), so that a frame-pointer unwind from
 * native code reaches the managed caller, as it would in a service whose
 * native parts are built that way. */
#include <stddef.h>
#include <stdint.h>

__attribute__((noinline)) uint32_t hot_native_checksum(const uint8_t *buf, size_t len)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < len; i++) {
		a = (a + buf[i]) % 65521;
		b = (b + a) % 65521;
	}
	return (b << 16) | a;
}
