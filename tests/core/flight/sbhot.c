/* The dlopened library of tests/core/flight_sideband.sh: its one function
 * is the hot one, so a sample's innermost frame is named only when the
 * mapping of this library is known. */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline, noclone)) void sb_hot_fn(void)
{
	for (;;)
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 2654435761u;
}
