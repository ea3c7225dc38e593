/*
 * storage/merge.h — the merging iterator over level 0 and runs, and key lookups.
 */
#ifndef WC_STORAGE_MERGE_H
#define WC_STORAGE_MERGE_H

#include "storage/level0.h"
#include "storage/run.h"

/* ---------- merge (merge.c) ---------- */
typedef struct WcMergeIter WcMergeIter;

/* What a read did, for EXPLAIN ANALYZE. */
typedef struct WcMergeStats
{
	int64		runs_considered;
	int64		runs_skipped_range;
	int64		runs_skipped_bloom;
	int64		runs_skipped_newer; /* one key read: a newer version was found */
	int64		blocks_read;	/* key pages */
	int64		value_pages_read;
	int64		value_prefetches;	/* value pages asked for by leaf hints */
	int64		value_prefetch_hits;	/* ... that the read then loaded */
	int64		l0_versions;
	int64		versions;
	int64		tombstones;
	int64		expired;
	int64		bloom_checks;
	int64		bloom_false_positives;	/* a bloom hit, but no row of the partition */
	int64		extent_read_aheads; /* runs whose index and bloom pages were
									 * asked for (read_ahead_extent) */
	int64		runs_unopened;	/* lazy runs the read ended before reaching */
} WcMergeStats;

extern int	wc_tombstone_warn_threshold;
extern int	wc_tombstone_failure_threshold;

/*
 * What a merge reads: versions with keys in [lo, hi] (prefixes: a key
 * starting with hi is inside; NULL = unbounded), runs skipped by the bloom
 * filter on lo's first bloom_pklen bytes (0 = no bloom test), in key order
 * or backward.
 */
typedef struct WcMergeRange
{
	const char *lo;
	int			lolen;
	const char *hi;
	int			hilen;
	int			bloom_pklen;
	/*
	 * A read over several partitions (a range of buckets): their keys; a
	 * run whose bloom filter rules out every one of them is not read.
	 */
	char	  **bloom_keys;
	int		   *bloom_keylens;
	int			nbloom_keys;
	BufferAccessStrategy strategy;	/* NULL: the default */
	bool		backward;
} WcMergeRange;

extern WcMergeIter *wc_merge_begin(Relation rel, Snapshot snapshot, const WcMergeRange *range);
extern void wc_merge_read_manifest(Relation rel, Snapshot snapshot, WcMetaData *meta,
								   WcManifest **m);
extern WcMergeIter *wc_merge_begin_with(Relation rel, Snapshot snapshot,
										const WcMetaData *meta, WcManifest *m,
										const WcMergeRange *range);
extern void wc_merge_set_stats(WcMergeIter *it, WcMergeStats *stats);
extern void wc_merge_return_dead(WcMergeIter *it);
extern WcMergeIter *wc_merge_begin_runs(Relation rel, WcRunSummary *runs, int nruns);
extern int	wc_gc_grace_seconds;
extern int64 wc_merge_live_blocks(WcMergeIter *it, WcMergeStats *values);
extern WcRowHeader *wc_merge_next(WcMergeIter *it, ItemPointer tid);
extern int64 wc_merge_count(WcMergeIter *it);
extern bool wc_merge_peek_bound(WcMergeIter *it, const char **key, int *keylen);
extern int64 wc_merge_live_unopened(WcMergeIter *it);
extern void wc_merge_end(WcMergeIter *it);
typedef struct WcKeyRef
{
	const char *key;
	uint16		keylen;
	uint16		pklen;
} WcKeyRef;
extern void wc_keys_may_exist(Relation rel, const WcMetaData *meta, WcManifest *m,
							  Snapshot snapshot, int64 n, const WcKeyRef *keys, bool *maybe);
extern WcRowHeader *wc_lookup_key(Relation rel, Snapshot snapshot,
								  const char *key, int keylen, int pklen,
								  bool include_dead, ItemPointer tid);

#endif
