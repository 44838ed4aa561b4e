/* UTF-8 out of code points, for the readers of UTF-16 strings (NetTrace
 * payloads and metadata) and of escapes (dotnet-trace's filter data). */
#ifndef TR_LIB_UTF_H
#define TR_LIB_UTF_H

#include <stddef.h>
#include <stdint.h>

/* Writes code point cp (at most U+10FFFF; a surrogate, which has no
 * UTF-8, is the caller's to replace before) as 1 to 4 bytes at o, which
 * has room for them, and returns how many. */
size_t tr_put_utf8(char *o, uint32_t cp);

#endif
