# widecol — PGXS build.  `make && make install`, then see README.md for tests.
EXTENSION   = widecol
MODULE_big  = widecol
EXTVERSION  = 0.1.0

OBJS = \
	src/widecol.o \
	src/options.o \
	src/keyenc.o \
	src/row.o \
	src/metapage.o \
	src/level0.o \
	src/l0cache.o \
	src/beforestmt.o \
	src/bloom.o \
	src/runwrite.o \
	src/runread.o \
	src/manifest.o \
	src/merge.o \
	src/flush.o \
	src/compact.o \
	src/strategy.o \
	src/maintain.o \
	src/history.o \
	src/throttle.o \
	src/bgworker.o \
	src/reclaim.o \
	src/scan.o \
	src/slot.o \
	src/modify.o \
	src/conflict.o \
	src/handler.o \
	src/planner.o \
	src/customscan.o \
	src/functions.o \
	src/verify.o \
	src/wal.o \
	src/stats.o \
	src/tablestats.o \
	src/damage.o \
	src/querytable.o

DATA = sql/widecol--$(EXTVERSION).sql

# Regression suites run against a throwaway instance with widecol preloaded.
REGRESS      = $(shell cat test/regress_schedule)
REGRESS_OPTS = --inputdir=. --temp-instance=./tmp_regress --temp-config=test/widecol.conf \
               --load-extension=widecol --no-locale --encoding=UTF8
ISOLATION      = $(shell cat test/isolation_schedule 2>/dev/null)
ISOLATION_OPTS = --inputdir=test --outputdir=test/output_iso --temp-instance=./tmp_check_iso \
                 --temp-config=test/widecol.conf --load-extension=widecol --no-locale --encoding=UTF8
TAP_TESTS   = 1
PROVE_TESTS = test/t/*.pl

SHLIB_LINK += -llz4
PG_CPPFLAGS += -I$(srcdir)/src
# gcc only (the LLVM bitcode build does not see these)
PG_CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
               -Wno-missing-field-initializers -Wno-clobbered

EXTRA_CLEAN = tmp_regress tmp_check tmp_check_iso test/output_iso results regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Every source includes the one shared header: rebuild all when it changes.
$(OBJS): src/widecol.h src/damage.h
