#!/usr/bin/env bash
# The steady workload of the memory benchmark: a compile loop, every
# iteration new short-lived processes (gcc, cc1, as, collect2, ld) with
# new PIDs, the worst case for state kept per process.  Runs until killed.
#   bash bench/memory/load.sh [JOBS]
set -u
jobs=${1:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/w.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *l, *r; long k; };
static struct node *ins(struct node *n, long k)
{
	if (!n) { n = calloc(1, sizeof *n); n->k = k; return n; }
	if (k < n->k) n->l = ins(n->l, k); else n->r = ins(n->r, k);
	return n;
}
static long sum(const struct node *n) { return n ? n->k + sum(n->l) + sum(n->r) : 0; }
int main(int argc, char **argv)
{
	struct node *t = NULL;
	for (long i = 0; i < 1000 + argc; i++) t = ins(t, (i * 7919) % 1009);
	printf("%ld %s\n", sum(t), argv[0]);
	return 0;
}
C
# ~20 processes per compile and link; stdio.h etc. give cc1 some work.
while :; do
	for j in $(seq "$jobs"); do
		gcc -O2 -o "$dir/w$j" "$dir/w.c" && "$dir/w$j" >/dev/null &
	done
	wait
done
