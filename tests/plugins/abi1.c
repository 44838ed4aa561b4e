/* A plugin as an earlier tracerig plugin ABI (OLD_ABI: 1 or 2) laid it
 * out, built without today's header: what an installed site plugin, not
 * rebuilt after an upgrade, looks like to the loader.  Only the leading
 * fields matter: every ABI keeps abi_version first, so the loader can read
 * it before trusting the rest of the layout. */
#ifndef OLD_ABI
#define OLD_ABI 1
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

struct old_plugin {
	unsigned abi_version;
	const char *name;
	const char *version;
	int kind;
	const char *description;
};

__attribute__((visibility("default"))) const struct old_plugin tracerig_plugin = {
	.abi_version = OLD_ABI,
	.name = "abi" STR(OLD_ABI),
	.version = "1.0",
	.kind = 1,
	.description = "a source of an earlier ABI, never rebuilt",
};
