/* Helpers shared by the services table and the session. */
#ifndef TR_SERVICES_H
#define TR_SERVICES_H

#include "session.h"

int tr_ctx_new(struct tr_session *s, struct tr_loaded *loaded, struct tr_section *section,
	       struct tracerig_ctx **out);
void tr_ctx_free(struct tracerig_ctx *ctx);
/* The core's own [tracerig] keys. */
extern const struct tracerig_key tr_session_keys[];
/* Reads a validated value of `key` in `section`, or its default. */
const char *tr_config_value(const struct tr_section *section, const struct tracerig_key *keys,
			    const char *key);
long long tr_config_number(const struct tr_section *section, const struct tracerig_key *keys,
			   const char *key);

#endif
