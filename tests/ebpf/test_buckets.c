/* Flight mode's ring of cumulative totals (plugins/ebpf/buckets.c): a
 * window is the totals now minus those at the newest boundary at or
 * before its start. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buckets.h"
#include "testing.h"

static struct oc_entry entry(uint32_t tid, uint64_t kstack, uint64_t ns, uint64_t count)
{
	struct oc_entry e;

	memset(&e, 0, sizeof(e));
	e.key.tgid = 100;
	e.key.pid = tid;
	e.key.kstack = kstack;
	e.key.ustack = 7;
	e.val.weighted_ns = e.val.real_ns = ns;
	e.val.count = count;
	return e;
}

/* A boundary at `t` holding these totals, pushed. */
static void push(struct bk_ring *r, uint64_t t, const struct oc_entry *v, size_t n)
{
	struct bk_totals b;

	memset(&b, 0, sizeof(b));
	EXPECT_EQ_INT(0, bk_totals_from(&b, v, n));
	b.t_ns = t;
	b.counters[OFFCPU_CNT_KEPT] = t; /* anything that grows */
	bk_ring_push(r, &b);
}

DEF_TEST(the_window_is_now_minus_the_newest_boundary_before_it)
{
	struct bk_ring *r = bk_ring_new(4);
	/* Thread 1 blocks in A until t = 20, thread 2 in B from t = 20 on. */
	struct oc_entry at10[] = { entry(1, 2, 100, 10) };
	struct oc_entry at20[] = { entry(1, 2, 200, 20), entry(2, 3, 5, 1) };
	struct oc_entry at30[] = { entry(2, 3, 105, 11), entry(1, 2, 200, 20) };
	struct oc_entry now = entry(2, 3, 205, 21), out;
	const struct bk_totals *b;
	uint64_t short_by;

	CHECK_NOT_NULL(r);
	EXPECT_TRUE(bk_ring_base(r, 5, &short_by) == NULL); /* nothing yet: from zero */
	push(r, 10, at10, 1);
	push(r, 20, at20, 2);
	push(r, 30, at30, 2);
	EXPECT_TRUE(bk_ring_base(r, 5, &short_by) == NULL); /* before the first: from zero */
	b = bk_ring_base(r, 25, &short_by);
	CHECK_NOT_NULL(b);
	EXPECT_TRUE(b->t_ns == 20);
	EXPECT_TRUE(short_by == 0);
	EXPECT_EQ_INT(1, bk_delta_agg(b, &now, &out));
	EXPECT_TRUE(out.val.weighted_ns == 200 && out.val.count == 20);
	/* A at its last value: nothing in the window, left out. */
	EXPECT_EQ_INT(0, bk_delta_agg(b, &at30[1], &out));
	/* At a boundary's own time, that boundary. */
	b = bk_ring_base(r, 30, &short_by);
	EXPECT_TRUE(b && b->t_ns == 30);
	EXPECT_EQ_INT(1, bk_delta_agg(b, &now, &out));
	EXPECT_TRUE(out.val.real_ns == 100 && out.val.count == 10);
	/* An entry the boundary did not have counts from zero. */
	now = entry(3, 9, 50, 2);
	EXPECT_EQ_INT(1, bk_delta_agg(b, &now, &out));
	EXPECT_TRUE(out.val.weighted_ns == 50 && out.val.count == 2);
	/* So does one the map evicted and made again since, even once it
	 * grew past what the boundary saw. */
	now = entry(2, 3, 500, 40);
	now.val.first_ns = 25;
	EXPECT_EQ_INT(1, bk_delta_agg(b, &now, &out));
	EXPECT_TRUE(out.val.weighted_ns == 500 && out.val.count == 40);
	bk_ring_free(r);
}

DEF_TEST(a_full_ring_drops_its_oldest_and_says_how_late_the_oldest_is)
{
	struct bk_ring *r = bk_ring_new(2);
	struct oc_entry v[] = { entry(1, 2, 1, 1) };
	const struct bk_totals *b;
	uint64_t short_by;

	CHECK_NOT_NULL(r);
	push(r, 10, v, 1);
	push(r, 20, v, 1);
	push(r, 30, v, 1); /* 10 goes */
	b = bk_ring_base(r, 15, &short_by);
	EXPECT_TRUE(b && b->t_ns == 20 && short_by == 5);
	b = bk_ring_base(r, 25, &short_by);
	EXPECT_TRUE(b && b->t_ns == 20 && short_by == 0);
	bk_ring_free(r);
}

DEF_TEST(dwarf_entries_are_matched_by_their_index)
{
	struct bk_totals b;
	struct oc_entry us[] = { entry(1, 2, 10, 1), entry(1, 3, 20, 2) };
	struct oc_entry now[] = { entry(1, 2, 10, 1), entry(1, 3, 50, 5), entry(1, 4, 7, 1) }, out;

	memset(&b, 0, sizeof(b));
	EXPECT_EQ_INT(0, bk_totals_set_us(&b, us, 2));
	EXPECT_EQ_INT(0, bk_delta_us(&b, 0, &now[0], &out));
	EXPECT_EQ_INT(1, bk_delta_us(&b, 1, &now[1], &out));
	EXPECT_TRUE(out.val.weighted_ns == 30 && out.val.count == 3);
	EXPECT_EQ_INT(1, bk_delta_us(&b, 2, &now[2], &out)); /* new since */
	EXPECT_TRUE(out.val.weighted_ns == 7);
	bk_totals_free(&b);
}

DEF_TEST(the_ring_reaches_back_a_window_and_two_buckets)
{
	/* 30 s in buckets of 3.75 s: 8 + 3 boundaries, the oldest of them
	 * (cap - 1) x 3.75 s = 37.5 s old. */
	EXPECT_EQ_INT(11, (int)bk_ring_cap_for(30000000000ull, 3750000000ull));
	/* 1 s at the 250 ms floor: 4 + 3. */
	EXPECT_EQ_INT(7, (int)bk_ring_cap_for(1000000000ull, 250000000ull));
}

int main(void)
{
	RUN_TEST(the_window_is_now_minus_the_newest_boundary_before_it);
	RUN_TEST(a_full_ring_drops_its_oldest_and_says_how_late_the_oldest_is);
	RUN_TEST(dwarf_entries_are_matched_by_their_index);
	RUN_TEST(the_ring_reaches_back_a_window_and_two_buckets);
	TEST_MAIN_END();
}
