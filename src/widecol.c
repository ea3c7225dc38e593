/*
 * widecol.c — module entry: GUCs, the shared write clock, preload check.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "storage/columns.h"
#include "storage/compression.h"
#include "api/api.h"
#include "access/access.h"
#include "executor/seek.h"
#include "maintenance/maintenance.h"
#include "storage/level0.h"
#include "storage/merge.h"
#include "storage/manifest.h"
#include "storage/run.h"
#include "storage/stats.h"
#include "storage/wal.h"

PG_MODULE_MAGIC;

int			wc_level0_max_size_kb = 4096;
int			wc_bulk_write_mem_kb = 65536;
bool		wc_preloaded = false;
int			wc_debug_clock_offset = 0;
int			wc_write_ttl = -1;
int			wc_partition_warn_size_kb = 100 * 1024;
int			wc_naptime_s = 60;
int			wc_max_workers = 2;
int			wc_worker_nice = 10;
int			wc_compaction_throughput_mb = 64;
double		wc_debug_write_time = 0;	/* test only: seconds since 1970 */
static char *wc_write_time_string = NULL;	/* widecol.write_time */
static bool wc_client_write_time_set = false;
static TimestampTz wc_client_write_time = 0;
static int64 wc_client_write_seq = 0;

/*
 * The hybrid write clock: max(now, last + 1), shared by all backends; and
 * the compaction throttle's clock (throttle.c): the time at which the
 * server-wide compaction budget is next free.
 */
typedef struct WcShared
{
	pg_atomic_uint64 last_write_ts;
	pg_atomic_uint64 throttle_next_us;
} WcShared;

static WcShared *wc_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
wc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(WcShared)));
	wc_stats_shmem_request();
	RequestAddinShmemSpace(wc_backoff_shmem_size());
	RequestAddinShmemSpace(wc_quiet_shmem_size());
	RequestAddinShmemSpace(wc_manifest_shmem_size());
}

static void
wc_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wc_shared = ShmemInitStruct("widecol", sizeof(WcShared), &found);
	if (!found)
	{
		pg_atomic_init_u64(&wc_shared->last_write_ts, 0);
		pg_atomic_init_u64(&wc_shared->throttle_next_us, 0);
	}
	wc_stats_shmem_startup();
	wc_backoff_shmem_startup();
	wc_quiet_shmem_startup();
	wc_manifest_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

void
wc_check_preloaded(void)
{
	if (!wc_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("widecol must be loaded via shared_preload_libraries"),
				 errhint("Add 'widecol' to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* The wall clock as widecol sees it: write times and expiry checks. */
int64
wc_now(void)
{
	return GetCurrentTimestamp() + (int64) wc_debug_clock_offset * USECS_PER_SEC;
}

/*
 * A distinct, increasing timestamp for every version written on this
 * server; n of them at once, 1 us apart (the first is returned): one clock
 * read and one compare-and-swap for a batch of rows a bulk write has
 * already read, and every write that starts after this call gets a later
 * time, as if the batch had been written at once.
 */
int64
wc_next_write_ts_n(int n)
{
	uint64		now;
	uint64		last;

	Assert(n >= 1 && wc_shared != NULL);
	if (wc_client_write_time_set)
	{
		/*
		 * The client's write time (USING TIMESTAMP): versions written under
		 * it are 1 us apart, so that a later statement still beats an
		 * earlier one; the shared clock is left alone.
		 */
		int64		ts = wc_client_write_time + wc_client_write_seq;

		wc_client_write_seq += n;
		return ts;
	}
	if (unlikely(wc_debug_write_time != 0))
	{
		/* test only: a fixed past or future time, distinct per version */
		static int64 debug_seq = 0;
		int64		ts = (int64) ((wc_debug_write_time -
								   ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY)) *
								  USECS_PER_SEC) + debug_seq;

		debug_seq += n;
		return ts;
	}
	now = (uint64) wc_now();	/* not needed by the two cases above */
	last = pg_atomic_read_u64(&wc_shared->last_write_ts);
	for (;;)
	{
		uint64		next = Max(now, last + 1);

		if (pg_atomic_compare_exchange_u64(&wc_shared->last_write_ts, &last, next + n - 1))
			return (int64) next;
	}
}

/* Write times from now on are above `floor` (see wc_meta_write_ts). */
void
wc_clock_advance_to(int64 floor)
{
	uint64		last = pg_atomic_read_u64(&wc_shared->last_write_ts);

	while (last < (uint64) floor &&
		   !pg_atomic_compare_exchange_u64(&wc_shared->last_write_ts, &last, (uint64) floor))
		;
}

/* The compaction throttle's shared clock (throttle.c). */
pg_atomic_uint64 *
wc_throttle_clock(void)
{
	Assert(wc_shared != NULL);
	return &wc_shared->throttle_next_us;
}

/* widecol.write_time: '' (the clock) or a finite timestamptz */
static bool
check_write_time(char **newval, void **extra, GucSource source)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf,
				dtype,
				tz;
	struct pg_tm tt;
	fsec_t		fsec;
	TimestampTz ts;
	TimestampTz *copy;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	/* timestamptz_in's steps, which report failure instead of raising it */
	if (ParseDateTime(*newval, workbuf, sizeof(workbuf), field, ftype, MAXDATEFIELDS, &nf) != 0 ||
		DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0 ||
		dtype != DTK_DATE || tm2timestamp(&tt, fsec, &tz, &ts) != 0)
	{
		GUC_check_errdetail("\"%s\" is not a finite timestamp with time zone.", *newval);
		GUC_check_errhint("Give a time such as '2026-05-01 10:00:00+00', or '' for the clock.");
		return false;
	}
	copy = malloc(sizeof(TimestampTz));
	if (copy == NULL)
		return false;
	*copy = ts;
	*extra = copy;
	return true;
}

static void
assign_write_time(const char *newval, void *extra)
{
	wc_client_write_time_set = extra != NULL;
	wc_client_write_time = extra ? *(TimestampTz *) extra : 0;
	wc_client_write_seq = 0;
}

bool
wc_write_time_from_client(void)
{
	return wc_client_write_time_set;
}

/*
 * The integer settings _PG_init defines, as DefineCustomIntVariable takes
 * them (no hooks); its real and string ones, and those modules define in
 * their own init, are defined one by one.
 */
typedef struct IntSetting
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	int		   *var;
	int			boot,
				min,
				max;
	GucContext	context;
	int			flags;
} IntSetting;

static const IntSetting int_settings[] = {
	{"widecol.level0_max_size",
		"Level 0 of a widecol table is flushed into a sorted run when it grows past this size.",
		NULL,
		&wc_level0_max_size_kb, 4096, 16, INT_MAX / 2, PGC_USERSET, GUC_UNIT_KB},
	{"widecol.level0_cache_size",
		"Memory a backend may use to keep sorted copies of the level-0 versions it has read.",
		"Reads then take only the versions appended since, instead of all of level 0.",
		&wc_level0_cache_kb, 65536, 0, INT_MAX / 2, PGC_USERSET, GUC_UNIT_KB},
	{"widecol.run_page_cache_size",
		"Memory a backend may use to keep the index and bloom filter pages of sorted runs it has checked.",
		"Seeks probe a bloom page per run and descend the run's index; a page kept is not read and checksummed again.",
		&wc_run_page_cache_kb, 65536, 0, INT_MAX / 2, PGC_USERSET, GUC_UNIT_KB},
	{"widecol.bulk_write_mem",
		"Memory a bulk write (COPY) may use to sort rows before writing a sorted run.",
		NULL,
		&wc_bulk_write_mem_kb, 65536, 1024, INT_MAX / 2, PGC_USERSET, GUC_UNIT_KB},
	{"widecol.tombstone_warn_threshold",
		"A read that passes over more tombstones than this in one partition logs a WARNING (0 = never).",
		NULL,
		&wc_tombstone_warn_threshold, 1000, 0, INT_MAX, PGC_USERSET, 0},
	{"widecol.tombstone_failure_threshold",
		"A read that passes over more tombstones than this in one partition fails (0 = never).",
		NULL,
		&wc_tombstone_failure_threshold, 100000, 0, INT_MAX, PGC_USERSET, 0},
	{"widecol.gc_grace",
		"Compaction purges tombstones and expired rows only once they are this old.",
		"Cassandra's gc_grace_seconds.",
		&wc_gc_grace_seconds, 10 * 24 * 3600, 0, INT_MAX, PGC_USERSET, GUC_UNIT_S},
	{"widecol.partition_warn_size",
		"A flush, compaction or bulk write that writes more than this of one partition into a run logs a WARNING (0 = never).",
		NULL,
		&wc_partition_warn_size_kb, 100 * 1024, 0, INT_MAX, PGC_USERSET, GUC_UNIT_KB},
	{"widecol.ttl",
		"Time to live of the rows this session writes; -1 uses the table's widecol.default_ttl, 0 means never expire.",
		"For one transaction: SET LOCAL widecol.ttl = '1h'.",
		&wc_write_ttl, -1, -1, INT_MAX, PGC_USERSET, GUC_UNIT_S},
	{"widecol.debug_clock_offset",
		"Test only: shifts widecol's view of the wall clock by this many seconds.",
		"Lets tests show that write times keep increasing when the clock steps back.",
		&wc_debug_clock_offset, 0, -86400 * 365, 86400 * 365, PGC_SUSET, GUC_UNIT_S | GUC_NOT_IN_SAMPLE},
	{"widecol.naptime",
		"Time between two maintenance rounds of a database by a widecol background worker.",
		NULL,
		&wc_naptime_s, 60, 1, INT_MAX / 1000, PGC_SIGHUP, GUC_UNIT_S},
	{"widecol.idle_compaction_delay",
		"A table that has taken no writes for this long has its smaller runs merged by the background workers (0 = never).",
		"Size-tiered compaction leaves the runs of unfilled tiers; each is one more run a point read probes.",
		&wc_idle_compaction_delay_s, 60, 0, INT_MAX / 1000, PGC_SIGHUP, GUC_UNIT_S},
	{"widecol.max_workers",
		"Widecol background workers running at the same time (one per database; 0 = none).",
		"Each takes a slot of max_worker_processes.",
		&wc_max_workers, 2, 0, WC_MAX_WORKERS_LIMIT, PGC_SIGHUP, 0},
	{"widecol.worker_nice",
		"CPU priority (a nice value, 0-19) of the widecol background workers: compaction yields the CPU to queries.",
		"0 leaves them at the postmaster's priority.  A worker never raises its priority.",
		&wc_worker_nice, 10, 0, 19, PGC_SIGHUP, 0},
	{"widecol.compaction_throughput",
		"Compaction reads at most this many megabytes of row versions per second (0 = unlimited).",
		"Cassandra's compaction_throughput.",
		&wc_compaction_throughput_mb, 64, 0, INT_MAX / 2, PGC_USERSET, 0},
	{"widecol.compaction_history_retention",
		"The background worker deletes rows of widecol.compaction_history older than this (0 = keep them).",
		NULL,
		&wc_history_retention_s, 30 * 24 * 3600, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_S},
	{"widecol.compaction_zstd_level",
		"zstd level of the runs compaction and VACUUM FULL write (0 = lz4, negative = zstd's fast levels).",
		"Higher levels cost compaction time and gain little on 8 kB pages.",
		&wc_compaction_zstd_level, 1, -20, 19, PGC_USERSET, 0},
	{"widecol.ingest_zstd_level",
		"zstd level of the runs flushes and bulk writes (COPY) write (0 = lz4, negative = zstd's fast levels).",
		"Fast levels keep entropy-coded literals, so they compress hex and random bytes almost as well as level 1, at lz4's cost.",
		&wc_ingest_zstd_level, -5, -20, 19, PGC_USERSET, 0},
	{"widecol.debug_run_format",
		"Test only: 4 writes runs in run format 4 (lz4 pages), as builds before format 5 did; 6 in format 6 (bloom pages without block checksums); 8 in format 8 (no dictionary); 9 in format 9 (key blocks not packed); 10 in format 10 (packed key blocks not in steps); 11 in format 11 (no shared tuple headers); 12 in format 12 (no value hints in leaf index pages); 0 = the current format.",
		NULL,
		&wc_debug_run_format, 0, 0, 12, PGC_SUSET, GUC_NOT_IN_SAMPLE},
	{"widecol.debug_fail_run_write",
		"Test only: a run write fails (as if the disk were full) once it has written this many pages (0 = off).",
		NULL,
		&wc_debug_fail_run_write, 0, 0, INT_MAX, PGC_SUSET, GUC_NOT_IN_SAMPLE},
};

/* widecol.ingest_key_codec, compaction_key_codec (storage/compression.h) */
static const struct config_enum_entry ingest_key_codecs[] = {
	{"lz4", WC_CODEC_LZ4, false},
	{"zstd", WC_CODEC_ZSTD, false},
	{NULL, 0, false}
};

/* widecol.compaction_value_layout (storage/columns.h) */
static const struct config_enum_entry value_layouts[] = {
	{"rows", WC_LAYOUT_ROWS, false},
	{"columns", WC_LAYOUT_COLUMNS, false},
	{NULL, 0, false}
};

void		_PG_init(void);

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;					/* CREATE EXTENSION and the AM handler complain */

	for (int i = 0; i < lengthof(int_settings); i++)
	{
		const IntSetting *g = &int_settings[i];

		DefineCustomIntVariable(g->name, g->short_desc, g->long_desc, g->var, g->boot,
								g->min, g->max, g->context, g->flags, NULL, NULL, NULL);
	}
	DefineCustomRealVariable("widecol.debug_write_time",
							 "Test only: write times are taken from this Unix time (seconds) instead of the clock (0 = off).",
							 "Breaks last-write-wins across sessions; for deterministic tests of time windows and expiry.",
							 &wc_debug_write_time, 0, 0, 1e11,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomEnumVariable("widecol.ingest_key_codec",
							 "Codec of the key pages of the runs flushes and bulk writes (COPY) write: lz4 or zstd (at widecol.ingest_zstd_level).",
							 "Their value pages are zstd; lz4 key pages cost about 9% more bytes until compaction and make reads of runs not compacted yet faster.",
							 &wc_ingest_key_codec, WC_CODEC_LZ4, ingest_key_codecs,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("widecol.compaction_key_codec",
							 "Codec of the key pages of the runs compaction and VACUUM FULL write: lz4 or zstd (at widecol.compaction_zstd_level).",
							 "Their value pages are zstd; lz4 key pages cost about 10% more bytes and make every seek into the run cheaper to decode.",
							 &wc_compaction_key_codec, WC_CODEC_LZ4, ingest_key_codecs,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("widecol.compaction_value_layout",
							 "Layout of the value pages of the runs compaction and VACUUM FULL write: columns or rows.",
							 "By column, a read that uses a few non-key columns decodes only theirs; other reads get the rows back as they were.",
							 &wc_compaction_value_layout, WC_LAYOUT_COLUMNS, value_layouts,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("widecol.ingest_value_layout",
							 "Layout of the value pages of the runs flushes and bulk writes (COPY) write: rows or columns.",
							 "By column (the default), a lookup or a report on a run not compacted yet decodes only the columns it reads, as on the runs compaction writes.",
							 &wc_ingest_value_layout, WC_LAYOUT_COLUMNS, value_layouts,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("widecol.compaction_zstd_dictionary",
							 "Compaction and VACUUM FULL train a zstd dictionary per run and compress its text columns in frames of 16 values with it.",
							 "A lookup by key then decodes 16 values of a column, not the page's 100 or more, for about a tenth more bytes in those columns.",
							 &wc_compaction_zstd_dictionary, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("widecol.ingest_zstd_dictionary",
							 "Flushes and bulk writes (COPY) compress text columns in frames of 16 values with the dictionary of the table's newest run that has one, copied into their run.",
							 "A lookup by key in a run not compacted yet then decodes 16 values of a column, not the page's 100 or more; the run is written without one until compaction has trained one.",
							 &wc_ingest_zstd_dictionary, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("widecol.debug_check_columns",
							 "Test only: every value page written by column is rebuilt and compared with its tuples, and a page on which that comparison and the per-tuple check disagree is an ERROR.",
							 "Writers otherwise rebuild the first pages of a run and one in 16 of the rest.",
							 &wc_debug_check_columns, false,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomStringVariable("widecol.write_time",
							   "Write time of the versions this session writes ('' = the clock).",
							   "Cassandra's USING TIMESTAMP: last-write-wins then orders replays by this time (SET LOCAL for one transaction).",
							   &wc_write_time_string, "", PGC_USERSET, 0,
							   check_write_time, assign_write_time, NULL);
	wc_query_tables_init();
	MarkGUCPrefixReserved("widecol");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wc_shmem_startup;

	wc_register_rmgr();
	wc_install_utility_hook();
	wc_install_planner_hooks();
	/* sharded tables (issue 17): the outermost planner hook, the COPY batching setting */
	wc_install_router();
	wc_install_shard_reads();
	wc_install_copy_batching();
	wc_install_row_lock_escalation();
	wc_modify_init();
	wc_beforestmt_init();
	wc_baselocks_init();
	wc_register_launcher();
	wc_preloaded = true;
}

PG_FUNCTION_INFO_V1(widecol_assert_preloaded);
Datum
widecol_assert_preloaded(PG_FUNCTION_ARGS)
{
	wc_check_preloaded();
	PG_RETURN_VOID();
}
