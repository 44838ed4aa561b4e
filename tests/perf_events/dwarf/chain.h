/* libchain.so, the library half of the dwarf test's call chain. */
#ifndef TR_TEST_CHAIN_H
#define TR_TEST_CHAIN_H

unsigned long lib_inner(unsigned long x);

#endif
