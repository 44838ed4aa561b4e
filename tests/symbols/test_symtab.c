/* Which name one address gets when several symbols claim it, as perf
 * chooses (no root, no processes: the table alone). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../../core/symbols/demangle.h"
#include "../../core/symbols/symtab.h"
#include "../testing.h"

static uint32_t func_prio(const char *name)
{
	return tr_symtab_alias_prio(1, 0, 1, name);
}

static uint32_t label_prio(const char *name)
{
	return tr_symtab_alias_prio(0, 0, 0, name);
}

/* V8's builtins: a sized function with a label without size inside it. */
DEF_TEST(label_inside_function_loses)
{
	struct tr_symtab t = { 0 };
	struct tr_sym *s;

	EXPECT_EQ_INT(0, tr_symtab_add(&t, 0x1000, 0x200, "Builtins_JSConstructStubGeneric",
				       func_prio("Builtins_JSConstructStubGeneric")));
	EXPECT_EQ_INT(0, tr_symtab_add_unsized(&t, 0x103b, 0x10000, "construct_stub_deopt",
					       label_prio("construct_stub_deopt")));
	EXPECT_EQ_INT(0, tr_symtab_add(&t, 0x1400, 0x10, "next_function", func_prio("next")));
	tr_symtab_finish(&t, 1);
	s = tr_symtab_find(&t, 0x1050);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("Builtins_JSConstructStubGeneric", s->name);
	/* Past the function's end the label still names the gap. */
	s = tr_symtab_find(&t, 0x1300);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("construct_stub_deopt", s->name);
	s = tr_symtab_find(&t, 0x1404);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("next_function", s->name);
	tr_symtab_free(&t);
}

/* Symbols that are all unsized (kallsyms): the innermost, as before. */
DEF_TEST(unsized_symbols_innermost)
{
	struct tr_symtab t = { 0 };
	struct tr_sym *s;

	EXPECT_EQ_INT(0, tr_symtab_add_unsized(&t, 0x1000, 0x10000, "a", label_prio("a")));
	EXPECT_EQ_INT(0, tr_symtab_add_unsized(&t, 0x1100, 0x10000, "b", label_prio("b")));
	tr_symtab_finish(&t, 1);
	s = tr_symtab_find(&t, 0x1180);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("b", s->name);
	s = tr_symtab_find(&t, 0x10ff);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("a", s->name);
	tr_symtab_free(&t);
}

/* free, cfree, _ZdlPv and _ZdaPv at one address (a binary with its own
 * allocator): perf compares the names it shows, so "operator delete[]"
 * (no underscore, the longest) wins over "cfree". */
DEF_TEST(aliases_ranked_by_shown_name)
{
	static const char *names[] = { "free", "_ZdlPv", "cfree", "_ZdaPv" };
	struct tr_symtab t = { 0 };
	struct tr_sym *s;
	char *shown;

	shown = tr_demangle("_ZdaPv");
	if (!shown) {
		tr_symtab_free(&t);
		return; /* a build without a demangler shows mangled names */
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		EXPECT_EQ_INT(0, tr_symtab_add(&t, 0x2000, 20, names[i], func_prio(names[i])));
	tr_symtab_rank_aliases(&t, tr_demangle);
	tr_symtab_finish(&t, 1);
	s = tr_symtab_find(&t, 0x2004);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("_ZdaPv", s->name);
	EXPECT_EQ_STR("operator delete[]", shown);
	free(shown);
	tr_symtab_free(&t);
}

/* Without mangled names nothing changes: the longest of equals wins. */
DEF_TEST(aliases_without_mangling)
{
	static const char *names[] = { "free", "cfree" };
	struct tr_symtab t = { 0 };
	struct tr_sym *s;

	for (size_t i = 0; i < 2; i++)
		EXPECT_EQ_INT(0, tr_symtab_add(&t, 0x2000, 20, names[i], func_prio(names[i])));
	tr_symtab_rank_aliases(&t, tr_demangle);
	tr_symtab_finish(&t, 1);
	s = tr_symtab_find(&t, 0x2000);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_STR("cfree", s->name);
	tr_symtab_free(&t);
}

int main(void)
{
	RUN_TEST(label_inside_function_loses);
	RUN_TEST(unsized_symbols_innermost);
	RUN_TEST(aliases_ranked_by_shown_name);
	RUN_TEST(aliases_without_mangling);
	TEST_MAIN_END();
}
