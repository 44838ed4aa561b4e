/* Text from traced processes, made safe where it is written.
 *
 * Frame names (ELF symbols, perf-PID.map lines, jitdump code names) and
 * thread names (comm) are chosen by the traced program.  Written raw, a
 * newline in one injects fake lines into perf.data.txt, a ';' forges frames
 * in the folded stacks (cpu.folded, offcpu.folded, wall.folded), and an
 * escape sequence drives the terminal of whoever runs `tracerig report`.
 *
 * One rule, for every output:
 * - C0 control characters (0x00-0x1f: newline, CR, tab, ESC, ...) and DEL
 *   become '?';
 * - ';', the frame separator of folded stacks, becomes ':';
 * - bytes that are not valid UTF-8, and the UTF-8 encodings of the C1
 *   controls (U+0080-U+009F, which some terminals obey), become '?' each.
 * The result has as many bytes as the input, so it can be done in place,
 * and is valid UTF-8.  Spaces stay: C++ and .NET names have them, and
 * folded-stack readers take the count after the line's last space, which
 * no name can forge once it has no newline. */
#ifndef TR_LIB_SANITIZE_H
#define TR_LIB_SANITIZE_H

#include <stddef.h>
#include <stdio.h>

/* Copies src into dst (size bytes, NUL-terminated; dst may be src) under
 * the rule, never cutting a character.  Returns the length written. */
size_t tr_sanitize_name(char *dst, size_t size, const char *src);

/* The same rule for a log line that quotes such text (a path, a name):
 * everything but the ';' rule, which is for folded stacks only. */
size_t tr_sanitize_text(char *dst, size_t size, const char *src);

/* 1 when tr_sanitize_name would change s. */
int tr_name_needs_sanitizing(const char *s);

/* Writes s to f under the rule (for FILEs used by one thread:
 * unlocked stdio).  Returns 0 or EOF. */
int tr_sanitize_fputs(const char *s, FILE *f);

#endif
