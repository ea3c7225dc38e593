# widecol — PGXS build.  `make && make install`, then see README.md for tests.
EXTENSION   = widecol
MODULE_big  = widecol
EXTVERSION  = 0.1.0

# Sources by layer (src/README.md, "Map"): the storage engine, the table
# access method, the executor's seek path, maintenance, the SQL API.
LAYERS = storage access executor maintenance api
OBJS = src/widecol.o $(foreach l,$(LAYERS),$(patsubst %.c,%.o,$(sort $(wildcard $(srcdir)/src/$(l)/*.c))))

# The install script is assembled from one part per concern (sql/install/).
INSTALL_PARTS = $(sort $(wildcard $(srcdir)/sql/install/*.sql))
DATA_built = sql/widecol--$(EXTVERSION).sql

# Regression suites run against a throwaway instance with widecol preloaded.
REGRESS      = $(shell cat test/regress_schedule)
REGRESS_OPTS = --inputdir=. --temp-instance=./tmp_regress --temp-config=test/widecol.conf \
               --load-extension=widecol --no-locale --encoding=UTF8
ISOLATION      = $(shell cat test/isolation_schedule 2>/dev/null)
ISOLATION_OPTS = --inputdir=test --outputdir=test/output_iso --temp-instance=./tmp_check_iso \
                 --temp-config=test/widecol.conf --load-extension=widecol --no-locale --encoding=UTF8
TAP_TESTS   = 1
PROVE_TESTS = test/t/*.pl

SHLIB_LINK += -llz4 -lzstd -lisal
# libpq: COPY to the shards over postgres_fdw's connections (access/shardconn.c)
PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL += $(libpq)
PG_CPPFLAGS += -I$(srcdir)/src
# gcc only (the LLVM bitcode build does not see these)
PG_CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
               -Wno-missing-field-initializers -Wno-clobbered

EXTRA_CLEAN = tmp_regress tmp_check tmp_check_iso test/output_iso results regression.diffs regression.out .deps

# Each object depends on the headers it includes (gcc -MMD into .deps/).
override autodepend = yes

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

sql/widecol--$(EXTVERSION).sql: $(INSTALL_PARTS)
	@for f in $^; do cat $$f; echo; done > $@
