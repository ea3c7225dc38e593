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
	int64		nexternal;		/* versions with values out of line */
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
	bytea	   *key_ranges;		/* serialized key-column ranges (run format
								 * 4), NULL when the run has none */
	struct WcKeyRanges *ranges; /* parsed, when read from the manifest */
} WcRunSummary;

/*
 * A range tombstone: one DELETE of a partition, or of a clustering range in
 * it, deletes every version of those keys written before it (see "Range
 * tombstones" in src/README.md).  Bounds are encoded clustering-key
 * prefixes in storage order (a DESC column's bounds already swapped); a key
 * is compared on the bound's length.
 */
typedef struct WcRangeTombstone
{
	uint64		id;
	char	   *pk;				/* the encoded partition key */
	int			pklen;
	char	   *lo;				/* NULL: from the partition's start */
	int			lolen;
	bool		lo_incl;
	char	   *hi;				/* NULL: to the partition's end */
	int			hilen;
	bool		hi_incl;
	int64		write_ts;
	int64		nrows;			/* rows it deleted when written */
	TransactionId xmin;			/* of its manifest row */
} WcRangeTombstone;

typedef struct WcManifest
{
	int			nruns;
	WcRunSummary *runs;
	int			nretired;
	uint64	   *retired_gens;
	int			nrts;			/* range tombstones, by partition key */
	WcRangeTombstone *rts;
} WcManifest;

extern WcManifest *wc_manifest_read(uint64 storage_id, Snapshot snapshot);
extern double wc_manifest_most_partitions(const WcManifest *m);
extern Size wc_manifest_shmem_size(void);
extern void wc_manifest_shmem_startup(void);
extern void wc_manifest_add_range_tombstone(uint64 storage_id, const WcRangeTombstone *rt);
extern void wc_manifest_forget_range_tombstones(uint64 storage_id, const uint64 *ids, int n);
extern bool wc_manifest_row_settled(TransactionId xmin, TransactionId horizon);
extern int64 wc_partition_deleted_ts(const WcManifest *m, const char *pk, int pklen);
extern bool wc_range_covers(const WcRangeTombstone *rt, const char *key, int keylen, int pklen);
extern int64 wc_range_covering_ts(const WcManifest *m, const char *key, int keylen, int pklen,
								  TransactionId horizon);
extern void wc_manifest_add_run(uint64 storage_id, const WcRunSummary *run);
extern void wc_manifest_claim_run(uint64 storage_id, uint64 run_id);
extern void wc_manifest_retire_gen(uint64 storage_id, uint64 gen);
extern void wc_manifest_forget_gen(uint64 storage_id, uint64 gen);
extern bool wc_manifest_gen_removable(uint64 storage_id, uint64 gen,
									  TransactionId *retiring_xid);
extern bool wc_manifest_gen_retired(WcManifest *m, uint64 gen);
extern uint64 wc_manifest_run_pages(const WcManifest *m);
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
