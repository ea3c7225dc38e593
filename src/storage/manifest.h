/*
 * storage/manifest.h — the versioned set of runs (widecol.segment).
 */
#ifndef WC_STORAGE_MANIFEST_H
#define WC_STORAGE_MANIFEST_H

#include "widecol.h"

/* ---------- manifest (manifest.c) ---------- */
/*
 * What a run holds, as its header page and its manifest row both record it
 * (the header's layout on disk: keep the fields and their order).
 */
typedef struct WcRunStats
{
	int64		nrows;			/* versions */
	int64		ntombstones;
	int64		npartitions;
	int64		raw_bytes;
	int64		compressed_bytes;
	int64		min_write_ts;
	int64		max_write_ts;
	int64		max_expire;		/* when the last version stops being live data:
								 * latest expiry, a tombstone counting from its
								 * write; PG_INT64_MAX when some row never
								 * expires */
	TransactionId min_xid;
	TransactionId max_xid;
} WcRunStats;

typedef struct WcRunSummary
{
	uint64		run_id;
	int32		level;
	BlockNumber header_block;
	uint32		npages;			/* all pages of the run */
	WcRunStats	st;
	bytea	   *min_key;		/* palloc'd, may be NULL in empty runs */
	bytea	   *max_key;
} WcRunSummary;

typedef struct WcManifest
{
	int			nruns;
	WcRunSummary *runs;
	int			nretired;
	uint64	   *retired_gens;
} WcManifest;

extern WcManifest *wc_manifest_read(uint64 storage_id, Snapshot snapshot);
extern void wc_manifest_add_run(uint64 storage_id, const WcRunSummary *run);
extern void wc_manifest_claim_run(uint64 storage_id, uint64 run_id);
extern void wc_manifest_retire_gen(uint64 storage_id, uint64 gen);
extern void wc_manifest_forget_gen(uint64 storage_id, uint64 gen);
extern bool wc_manifest_gen_removable(uint64 storage_id, uint64 gen,
									  TransactionId *retiring_xid);
extern bool wc_manifest_gen_retired(WcManifest *m, uint64 gen);
extern void wc_manifest_drop_storage(uint64 storage_id);
extern void wc_manifest_drop_runs(uint64 storage_id, const uint64 *run_ids, int n);
extern int	wc_manifest_dropped_runs(uint64 storage_id, TransactionId horizon,
									 WcRunSummary **out, TransactionId *latest);
extern void wc_manifest_forget_runs(uint64 storage_id, const uint64 *run_ids, int n);
extern TransactionId wc_manifest_min_xid(uint64 storage_id, TransactionId horizon);

typedef enum WcRunState
{
	WC_RUN_GONE,				/* no manifest row: its pages may be reused */
	WC_RUN_FREEING,				/* its rows are being deleted, not yet committed */
	WC_RUN_LISTED				/* being written, a run, or dropped and not yet
								 * reclaimed */
} WcRunState;
extern WcRunState wc_manifest_run_state(uint64 storage_id, uint64 run_id);

extern void wc_manifest_pages(uint64 storage_id, int64 *live, int64 *dropped);

#endif
