#!/bin/sh
. "$top_srcdir/tests/lib.sh"
skip_all "todo"
