/* A plugin as tracerig's plugin ABI 1 laid it out, built without today's
 * header: what an installed site plugin, not rebuilt after an upgrade,
 * looks like to the loader.  Only the leading fields matter: every ABI
 * keeps abi_version first, so the loader can read it before trusting the
 * rest of the layout. */
struct abi1_plugin {
	unsigned abi_version;
	const char *name;
	const char *version;
	int kind;
	const char *description;
};

__attribute__((visibility("default"))) const struct abi1_plugin tracerig_plugin = {
	.abi_version = 1,
	.name = "abi1",
	.version = "1.0",
	.kind = 1,
	.description = "an ABI 1 source, never rebuilt",
};
