/*
 * maintenance/maintenance.h — flush, compaction, strategies, the maintenance
 * pass, history, throttle and the background workers.
 */
#ifndef WC_MAINTENANCE_H
#define WC_MAINTENANCE_H

#include "storage/manifest.h"
#include "storage/tableinfo.h"
#include "port/atomics.h"

/* ---------- flush (flush.c) ---------- */
extern int64 wc_flush(Relation rel, bool wait);

/* ---------- compaction (compact.c, strategy.c, maintain.c, history.c) ---------- */

/* What one compaction (or one whole-run drop) did: a compaction_history row. */
typedef struct WcCompactStats
{
	const char *kind;			/* major, minor, idle, freeze, tombstones, expired_runs */
	TimestampTz started;
	int			runs_in;
	int			runs_out;
	int64		rows_in;
	int64		rows_out;
	int64		bytes_in;		/* compressed bytes of the input runs */
	int64		bytes_out;
	int64		tombstones_purged;
	int64		expired_purged;
	int64		shadowed_dropped;	/* older or aborted versions */
	int			runs_dropped_whole;
} WcCompactStats;

/* A set of runs a strategy wants merged, by index into a manifest. */
typedef struct WcBucket
{
	const char *kind;			/* minor, idle, freeze, tombstones */
	int			nruns;
	uint64	   *run_ids;
	int			level;			/* level of the output run(s) */
} WcBucket;

extern int64 wc_compact_runs(Relation rel, WcManifest *m, const uint64 *run_ids,
							 int nin, int level, int64 window_us,
							 TransactionId horizon, WcCompactStats *st);
extern int	wc_drop_expired_runs(Relation rel, WcManifest *m, TransactionId horizon,
								 WcCompactStats *st);
extern bool wc_run_droppable_whole(const WcManifest *m, int i, int64 now,
								   int64 purge_before, TransactionId horizon);
extern List *wc_strategy_pick(Relation rel, WcTableInfo *info, WcManifest *m,
							  TransactionId horizon, bool quiet);
/* What a maintenance pass does after flushing and dropping expired runs. */
typedef enum WcMaintainMode
{
	WC_MAINTAIN_STRATEGY,		/* the table's compaction strategy, once */
	WC_MAINTAIN_MAJOR,			/* all runs into one (per time window) */
	WC_MAINTAIN_GARBAGECOLLECT	/* each run rewritten alone, purging */
} WcMaintainMode;

extern int64 wc_maintain(Relation rel, WcMaintainMode mode, bool in_worker, bool *busy);
extern void wc_history_record(Relation rel, const char *strategy,
							  const WcCompactStats *st, bool by_worker);
extern int64 wc_history_prune(void);
extern int	wc_history_retention_s;
extern void wc_throttle_begin(void);
extern void wc_throttle(int64 bytes);
extern pg_atomic_uint64 *wc_throttle_clock(void);

/* bgworker.c */
extern bool wc_am_worker;
extern void wc_register_launcher(void);
extern void wc_report_activity(const char *fmt,...) pg_attribute_printf(1, 2);

/* ---------- back-off of failing tables (backoff.c) ---------- */
extern Size wc_backoff_shmem_size(void);
extern void wc_backoff_shmem_startup(void);
extern bool wc_backoff_active(Oid relid, TimestampTz *until, int *failures);
extern int	wc_backoff_failed(Oid relid, int *failures);
extern void wc_backoff_clear(Oid relid);

/* ---------- has a table stopped taking writes (quiet.c) ---------- */
struct WcMetaData;
extern int	wc_idle_compaction_delay_s;
extern Size wc_quiet_shmem_size(void);
extern void wc_quiet_shmem_startup(void);
extern bool wc_table_quiet(Oid relid, const struct WcMetaData *meta, const WcManifest *m,
						   bool note);

#endif
