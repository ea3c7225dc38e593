/*
 * merge.c — the merging iterator: level 0 and every visible run, in key
 * order, one result per key (the newest version the snapshot sees, unless
 * that is a tombstone or expired).  See "Reads" in src/README.md.
 */
#include "postgres.h"

#include "lib/binaryheap.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "storage/keyenc.h"
#include "storage/keyrange.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/stats.h"
#include "storage/tableinfo.h"

typedef struct Source
{
	bool		is_run;
	/* level 0: sorted array of copied versions */
	WcRowHeader **rows;
	ItemPointerData *tids;
	int			n;
	int			pos;
	/* run */
	WcRunReader reader;
	bool		bloom_hit;		/* its bloom filter said the partition may be here */
	/*
	 * A run opened only once the merge reaches its bound (key-column
	 * ranges): forward, the first key it may hold; backward, the prefix its
	 * keys are at or below.
	 */
	WcRunSummary *lazy_run;
	char	   *bound;
	int			boundlen;
	/* current version */
	WcRowHeader *cur;
	ItemPointerData curtid;
	bool		started;		/* positioned on its first version already */
} Source;

struct WcMergeIter
{
	Relation	rel;
	Snapshot	snapshot;
	MemoryContext cxt;
	MemoryContextCallback release;	/* gives the block buffers back */
	Source	   *sources;
	int			nsources;
	binaryheap *heap;
	Source	   *pending;		/* popped last time; advance before next pop */
	char	   *lo;
	int			lolen;
	char	   *hi;
	int			hilen;
	char		lastkey[WC_MAX_KEY_SIZE];	/* the key decided last */
	int			lastkeylen;
	bool		have_last;
	bool		return_dead;	/* also return tombstones and expired versions */
	bool		raw;			/* every version: no visibility, no per-key choice */
	bool		backward;		/* keys in descending order */
	bool		counters;		/* a counter table: fold deltas */
	WcRowHeader *folded;		/* the last folded result (freed on the next) */
	WcRowHeader **chain;		/* backward, counters: the key's versions */
	int			nchain;
	int			chaincap;
	WcRowHeader *best;			/* backward: the deciding version so far */
	Size		best_cap;
	ItemPointerData best_tid;
	int64		now;
	uint64		storage_id;
	int			bloom_pklen;	/* the partition read, for false positives */
	WcMergeStats own_stats;
	WcMergeStats *stats;
	int64		l0_count;
	int64		partition_tombstones;	/* for the guard rails */
	bool		warned;
	StringInfoData lastpk;
	const WcManifest *manifest; /* its range tombstones apply to the keys */
	int64		fold_floor;		/* counters: versions older than this are deleted */
	WcRowHeader *rt_dead;		/* a key a range tombstone deletes, as a tombstone */
	/* runs not yet opened, by bound (forward ascending, backward descending) */
	Source	  **lazy;
	int			nlazy;
	/* one partition read: where its columns are in lo (key-column ranges) */
	uint16		pkcols[WC_MAX_KEY_COLUMNS + 1];
	int			npkcols;
	int			next_lazy;
	BufferAccessStrategy strategy;
	bool		value_ring;		/* value pages of point reads in a ring */
};

int			wc_tombstone_warn_threshold = 1000;
int			wc_tombstone_failure_threshold = 100000;

static bool
below_lo(WcMergeIter *it, WcRowHeader *row)
{
	return it->lo && wc_compare_keys(WcRowKey(row), row->keylen, it->lo, it->lolen) < 0;
}

static bool
above_hi(WcMergeIter *it, WcRowHeader *row)
{
	return it->hi && wc_compare_keys(WcRowKey(row), Min(row->keylen, it->hilen),
									 it->hi, it->hilen) > 0;
}

/* Move a source to its next version visible to the snapshot, in bounds. */
static bool
source_advance(WcMergeIter *it, Source *s)
{
	for (;;)
	{
		WcRowHeader *row;
		ItemPointerData tid;

		if (s->is_run)
			row = it->backward ? wc_run_reader_prev(&s->reader, &tid)
				: wc_run_reader_next(&s->reader, &tid);
		else if (s->pos < s->n && s->pos >= 0)
		{
			row = s->rows[s->pos];
			tid = s->tids[s->pos];
			s->pos += it->backward ? -1 : 1;
		}
		else
			row = NULL;
		/* past the far bound: done; before the near one: skip */
		if (row == NULL || (it->backward ? below_lo(it, row) : above_hi(it, row)))
		{
			s->cur = NULL;
			return false;
		}
		if ((it->backward ? above_hi(it, row) : below_lo(it, row)) ||
			(!it->raw && !wc_version_visible(row, it->snapshot)))
			continue;
		s->cur = row;
		s->curtid = tid;
		return true;
	}
}

static int
heap_cmp(Datum a, Datum b, void *arg)
{
	Source	   *sa = (Source *) DatumGetPointer(a);
	Source	   *sb = (Source *) DatumGetPointer(b);
	WcMergeIter *it = (WcMergeIter *) arg;

	/*
	 * binaryheap is a max-heap; forward we want the smallest (key, newest)
	 * first, backward the largest key (its versions come in any order).
	 */
	if (it->backward)
		return wc_compare_keys(WcRowKey(sa->cur), sa->cur->keylen,
							   WcRowKey(sb->cur), sb->cur->keylen);
	return -wc_compare_rows(sa->cur, sb->cur);
}

/*
 * Fill level-0 source `s` with copies of the visible versions in bounds of
 * one generation (the level-0 cache's two sorted parts, merged); false when
 * there are none.
 */
static bool
l0_source(WcMergeIter *it, Source *s, const WcL0Sorted *l0)
{
	const WcL0Part *a = &l0->bulk;
	const WcL0Part *b = &l0->recent;
	int64		i = it->lo ? wc_l0_part_lower_bound(a, it->lo, it->lolen) : 0;
	int64		j = it->lo ? wc_l0_part_lower_bound(b, it->lo, it->lolen) : 0;
	int			cap = 16;

	s->n = 0;
	s->rows = palloc(sizeof(WcRowHeader *) * cap);
	s->tids = palloc(sizeof(ItemPointerData) * cap);
	for (;;)
	{
		bool		in_a = i < a->n && !above_hi(it, a->rows[i]);
		bool		in_b = j < b->n && !above_hi(it, b->rows[j]);
		WcRowHeader *row;
		ItemPointerData tid;

		if (!in_a && !in_b)
			break;
		if (in_a && (!in_b || wc_compare_rows(a->rows[i], b->rows[j]) <= 0))
		{
			row = a->rows[i];
			tid = a->tids[i++];
		}
		else
		{
			row = b->rows[j];
			tid = b->tids[j++];
		}
		if (!wc_version_visible(row, it->snapshot))
			continue;
		if (s->n == cap)
		{
			cap *= 2;
			s->rows = repalloc_huge(s->rows, sizeof(WcRowHeader *) * cap);
			s->tids = repalloc_huge(s->tids, sizeof(ItemPointerData) * cap);
		}
		s->rows[s->n] = wc_row_copy(NULL, row);
		s->tids[s->n++] = tid;
	}
	s->pos = it->backward ? s->n - 1 : 0;
	it->l0_count += s->n;
	return s->n > 0;
}

/* Can the run hold no key in [lo, hi] (hi compared as a prefix)? */
static bool
run_misses_range(const WcRunSummary *run, const char *lo, int lolen,
				 const char *hi, int hilen)
{
	if (run->st.nrows == 0 || run->min_key == NULL || run->max_key == NULL)
		return false;
	if (lo && wc_compare_keys(VARDATA_ANY(run->max_key), VARSIZE_ANY_EXHDR(run->max_key),
							  lo, lolen) < 0)
		return true;
	if (hi && wc_compare_keys(VARDATA_ANY(run->min_key),
							  Min(VARSIZE_ANY_EXHDR(run->min_key), hilen),
							  hi, hilen) > 0)
		return true;
	return false;
}

static bool
run_out_of_range(WcMergeIter *it, WcRunSummary *run)
{
	return run_misses_range(run, it->lo, it->lolen, it->hi, it->hilen);
}

/* May the run hold one of the partitions a read over several names? */
static bool
run_may_contain_any(WcMergeIter *it, WcRunReader *reader, const WcMergeRange *range)
{
	it->own_stats.bloom_checks++;
	for (int k = 0; k < range->nbloom_keys; k++)
		if (wc_run_may_contain_partition(it->rel, reader, range->bloom_keys[k],
										 range->bloom_keylens[k]))
			return true;
	return false;
}

/* Bump a statistic both in the iterator's own figures and the caller's. */
#define BUMP(it, field) \
	do { \
		(it)->own_stats.field++; \
		if ((it)->stats != &(it)->own_stats) \
			(it)->stats->field++; \
	} while (0)

/* Does the read cover one partition (lo's first bloom_pklen bytes)? */
static bool
one_partition(WcMergeIter *it)
{
	return it->lo && it->bloom_pklen > 0 && it->lolen >= it->bloom_pklen;
}

/*
 * Key-column ranges (run format 4): the run holds none of the read's
 * partitions (a column's value outside the run's range), or nothing of the
 * one partition read within its clustering bounds.
 */
static bool
run_outside_ranges(WcMergeIter *it, const WcRunSummary *run, const WcMergeRange *range)
{
	WcTableInfo *info = wc_table_info(it->rel);
	char		bound[2 * WC_MAX_KEY_SIZE];
	int			len;

	if (run->ranges == NULL)
		return false;
	if (!one_partition(it))
	{
		for (int k = 0; k < range->nbloom_keys; k++)
			if (!wc_key_ranges_exclude_partition(run->ranges, info, range->bloom_keys[k],
												 range->bloom_keylens[k]))
				return false;
		return range->nbloom_keys > 0;
	}
	if (wc_key_ranges_exclude_split(run->ranges, it->lo, it->pkcols, it->npkcols))
		return true;
	/* every key of the partition in the run starts at or after pk ‖ min */
	len = wc_key_ranges_bound(run->ranges, info, it->lo, it->bloom_pklen, false, bound);
	if (len > 0 && it->hi && wc_compare_keys(bound, Min(len, it->hilen), it->hi, it->hilen) > 0)
		return true;
	/* ... and at or below pk ‖ max as a prefix */
	len = wc_key_ranges_bound(run->ranges, info, it->lo, it->bloom_pklen, true, bound);
	return len > 0 && wc_compare_keys(bound, len, it->lo, Min(it->lolen, len)) < 0;
}

/*
 * Order of two lazy bounds.  Forward they are lower bounds (plain key
 * order); backward, prefixes a run's keys are at or below, compared as if
 * followed by bytes above any (a prefix of the other is the greater).
 */
static int
bound_cmp(WcMergeIter *it, const char *a, int alen, const char *b, int blen)
{
	int			c;

	if (!it->backward)
		return wc_compare_keys(a, alen, b, blen);
	c = memcmp(a, b, Min(alen, blen));
	if (c != 0)
		return c;
	return (alen < blen) - (alen > blen);
}

/* qsort: lazy sources in the order the merge reaches their bounds. */
static int
lazy_cmp(const void *a, const void *b, void *arg)
{
	WcMergeIter *it = (WcMergeIter *) arg;
	const Source *sa = *(Source *const *) a;
	const Source *sb = *(Source *const *) b;
	int			c = bound_cmp(it, sa->bound, sa->boundlen, sb->bound, sb->boundlen);

	return it->backward ? -c : c;
}

/*
 * A run of one partition read whose key-column ranges bound where its
 * versions of the partition start (forward) or end (backward) is opened
 * only once the merge gets there: an ordered read with a LIMIT over runs
 * that are slices of time opens the newest ones only.
 */
static bool
make_lazy(WcMergeIter *it, Source *s, WcRunSummary *run)
{
	char		bound[2 * WC_MAX_KEY_SIZE];
	int			len;

	if (run->ranges == NULL || !one_partition(it))
		return false;
	len = wc_key_ranges_bound(run->ranges, wc_table_info(it->rel), it->lo, it->bloom_pklen,
							  it->backward, bound);
	if (len < 0)
		return false;
	s->lazy_run = run;
	s->bound = palloc(len);
	memcpy(s->bound, bound, len);
	s->boundlen = len;
	return true;
}

/*
 * Open a run for the read: false when its bloom filter rules out every
 * partition read (then it is not read at all).
 */
static bool
open_run(WcMergeIter *it, Source *s, WcRunSummary *run, const WcMergeRange *range)
{
	bool		may = true;		/* may the run hold a partition read? */

	s->is_run = true;
	wc_run_reader_open(&s->reader, it->rel, run, it->strategy);
	s->reader.block.poolable = true;
	/*
	 * a read bounded on both sides (a seek: a partition, a device's few
	 * days, a clustering range) decodes of a value page in column layout
	 * only the values it asks for (storage/columns.c point_value)
	 */
	s->reader.block.point = one_partition(it) || (it->lo != NULL && it->hi != NULL);
	if (it->value_ring)
		s->reader.block.value_strategy = wc_value_page_ring();
	if (one_partition(it))
	{
		BUMP(it, bloom_checks);
		may = wc_run_may_contain_partition(it->rel, &s->reader, it->lo, it->bloom_pklen);
		s->bloom_hit = may;
	}
	else if (range && range->nbloom_keys > 0)
		may = run_may_contain_any(it, &s->reader, range);
	if (s->reader.extent_read_ahead)
	{
		/* counted here: a run the filter rules out is not kept */
		BUMP(it, extent_read_aheads);
		s->reader.extent_read_ahead = false;
	}
	if (!may)
	{
		BUMP(it, runs_skipped_bloom);
		return false;
	}
	if (!it->backward && it->hi)
	{
		/* the reader stops before a key page that starts past hi */
		s->reader.hi_key = it->hi;
		s->reader.hi_len = it->hilen;
	}
	if (it->backward)
		wc_run_reader_seek_last(&s->reader, it->hi, it->hilen);
	else if (it->lo)
		wc_run_reader_seek(&s->reader, it->lo, it->lolen);
	return true;
}

/* Position a source on its first version; false when it has none. */
static bool
first_version(WcMergeIter *it, Source *s)
{
	bool		have = source_advance(it, s);

	/*
	 * A bloom hit whose run holds no version of the partition in the
	 * read's range: the first version at or after the seek point belongs
	 * to another partition (or there is none).
	 */
	if (s->bloom_hit && !it->backward &&
		(!have || s->cur->pklen != it->bloom_pklen ||
		 memcmp(WcRowKey(s->cur), it->lo, it->bloom_pklen) != 0))
		BUMP(it, bloom_false_positives);
	return have;
}

/*
 * Is the next lazy run due: may it hold a key the merge returns before the
 * key on top of the heap (or is the heap empty)?
 */
static bool
lazy_due(WcMergeIter *it, const Source *l)
{
	Source	   *top;
	WcRowHeader *row;

	if (binaryheap_empty(it->heap))
		return true;
	top = (Source *) DatumGetPointer(binaryheap_first(it->heap));
	row = top->cur;
	if (it->backward)
		return wc_compare_keys(WcRowKey(row), Min(row->keylen, l->boundlen),
							   l->bound, l->boundlen) <= 0;
	return wc_compare_keys(l->bound, l->boundlen, WcRowKey(row), row->keylen) <= 0;
}

/*
 * Open the lazy runs the merge has reached (all of them: every one left),
 * and put them on the heap.
 */
static void
open_lazy(WcMergeIter *it, bool all)
{
	while (it->next_lazy < it->nlazy && (all || lazy_due(it, it->lazy[it->next_lazy])))
	{
		Source	   *s = it->lazy[it->next_lazy++];

		if (open_run(it, s, s->lazy_run, NULL) && first_version(it, s))
			binaryheap_add(it->heap, PointerGetDatum(s));
	}
}

/* A new iterator in its own memory context (the caller switches to it). */
/*
 * The runs' block buffers come from the backend's pool: give them back when
 * the iterator's memory goes, at its end or on an error.
 */
static void
release_blocks(void *arg)
{
	WcMergeIter *it = (WcMergeIter *) arg;

	for (int i = 0; i < it->nsources; i++)
		if (it->sources[i].is_run)
			wc_block_free(&it->sources[i].reader.block);
}

static WcMergeIter *
iter_create(Relation rel, Snapshot snapshot)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol merge",
											  ALLOCSET_DEFAULT_SIZES);
	WcMergeIter *it = MemoryContextAllocZero(cxt, sizeof(WcMergeIter));

	it->rel = rel;
	it->snapshot = snapshot;
	it->cxt = cxt;
	it->counters = wc_table_info(rel)->ncounters > 0;
	it->stats = &it->own_stats;
	it->release.func = release_blocks;
	it->release.arg = it;
	MemoryContextRegisterResetCallback(cxt, &it->release);
	return it;
}

/* Position every source on its first version and heap them up. */
static void
iter_start(WcMergeIter *it)
{
	initStringInfo(&it->lastpk);
	it->heap = binaryheap_allocate(Max(it->nsources, 1), heap_cmp, it);
	for (int i = 0; i < it->nsources; i++)
	{
		Source	   *s = &it->sources[i];

		if (s->bound == NULL && (s->started ? s->cur != NULL : first_version(it, s)))
			binaryheap_add_unordered(it->heap, PointerGetDatum(s));
	}
	binaryheap_build(it->heap);
}

WcMergeIter *
wc_merge_begin(Relation rel, Snapshot snapshot, const WcMergeRange *range)
{
	WcMetaData	meta;
	WcManifest *m;

	wc_merge_read_manifest(rel, snapshot, &meta, &m);
	return wc_merge_begin_with(rel, snapshot, &meta, m, range);
}

/*
 * The metapage and the manifest as a merge with this snapshot sees them.
 *
 * The manifest first, the metapage's list of level-0 generations second: a
 * generation leaves the metapage, and its pages are freed, before the
 * transaction that deletes its 'f' row commits.  Read the other way round,
 * a non-MVCC reader (SnapshotSelf: the write-conflict checks of UPDATE and
 * DELETE) could list a generation, then miss its deleted 'f' row and read
 * pages that had been freed meanwhile.  Read this way, a generation listed
 * later and not retired in the manifest read earlier is protected by the
 * reader's own snapshot (see "Level 0" in src/README.md).
 */
void
wc_merge_read_manifest(Relation rel, Snapshot snapshot, WcMetaData *meta, WcManifest **m)
{
	/* non-MVCC snapshots: what is committed, and our own */
	Snapshot	catsnap = IsMVCCSnapshot(snapshot) ? snapshot : SnapshotSelf;

	uint64		storage_id = wc_storage_id(rel, false);

	for (;;)
	{
		*m = wc_manifest_read(storage_id, catsnap);
		wc_meta_read(rel, meta);
		if (meta->storage_id == storage_id)
			return;
		/* a remembered id of an older relfilenode of the same number */
		storage_id = wc_storage_id(rel, true);
	}
}

/*
 * A read of one key (a partition of a table without clustering columns):
 * the newest version the snapshot sees decides it, and a run whose newest
 * write is older than a version already found cannot hold a newer one.
 * Such a read opens its runs newest first and skips those
 * (open_runs_newest_first), as Cassandra reads one row from its sstables
 * in timestamp order: a lookup of a key written since the last compaction
 * probes no older run's bloom filter.  Not for counter tables (a key's
 * deltas add up over every version) nor backward or raw reads.
 */
static bool
reads_one_key(WcMergeIter *it)
{
	const WcTableInfo *info = wc_table_info(it->rel);

	return one_partition(it) && !it->backward && !it->raw && !it->counters &&
		info->nck == 0 && it->lolen == it->bloom_pklen;
}

/* Is this the version of the one key read (not another key's)? */
static bool
is_the_key(const WcMergeIter *it, const WcRowHeader *row)
{
	return row != NULL && row->keylen == it->lolen &&
		memcmp(WcRowKey(row), it->lo, it->lolen) == 0;
}

static int
newest_first_cmp(const void *a, const void *b)
{
	const WcRunSummary *x = *(WcRunSummary *const *) a;
	const WcRunSummary *y = *(WcRunSummary *const *) b;

	if (x->st.max_write_ts != y->st.max_write_ts)
		return x->st.max_write_ts > y->st.max_write_ts ? -1 : 1;
	return 0;
}

/*
 * Open runs keep[0, nkeep) for a read of one key into sources from *ns on,
 * newest run first, each positioned on its first version; a run whose
 * newest write is older than the newest version found so far (in level 0
 * or an earlier run) is skipped.
 */
static void
open_runs_newest_first(WcMergeIter *it, WcRunSummary **keep, int nkeep, int *ns)
{
	int64		found = PG_INT64_MIN;

	for (int i = 0; i < *ns; i++)
	{
		Source	   *s = &it->sources[i];

		/* level 0: its copies of the key's visible versions */
		for (int j = 0; j < s->n; j++)
			if (is_the_key(it, s->rows[j]))
				found = Max(found, s->rows[j]->write_ts);
	}
	qsort(keep, nkeep, sizeof(WcRunSummary *), newest_first_cmp);
	for (int i = 0; i < nkeep; i++)
	{
		Source	   *s = &it->sources[*ns];

		if (keep[i]->st.max_write_ts < found)
		{
			it->own_stats.runs_skipped_newer++;
			continue;
		}
		if (!open_run(it, s, keep[i], NULL))
		{
			memset(s, 0, sizeof(Source));	/* the slot is taken again */
			continue;
		}
		s->started = true;
		if (first_version(it, s) && is_the_key(it, s->cur))
			found = Max(found, s->cur->write_ts);
		(*ns)++;
	}
}

/*
 * A merge over a metapage and manifest read by wc_merge_read_manifest (a
 * seek over several partitions reads them once); the manifest must outlive
 * the iterator.
 */
WcMergeIter *
wc_merge_begin_with(Relation rel, Snapshot snapshot, const WcMetaData *metap,
					WcManifest *m, const WcMergeRange *range)
{
	WcMergeIter *it = iter_create(rel, snapshot);
	MemoryContext old = MemoryContextSwitchTo(it->cxt);
	WcMetaData	meta = *metap;
	int			ns = 0;
	const char *lo = range->lo;
	int			lolen = range->lolen;
	const char *hi = range->hi;
	int			hilen = range->hilen;
	int			bloom_pklen = range->bloom_pklen;
	BufferAccessStrategy strategy = range->strategy;
	bool		backward = range->backward;
	WcRunSummary **keep;
	int			nkeep = 0;
	int64		partition_deleted_ts = 0;	/* a tombstone of the whole partition read */

	it->now = wc_now();
	it->backward = backward;
	it->bloom_pklen = bloom_pklen;
	it->manifest = m;
	if (lo)
	{
		it->lo = palloc(Max(lolen, 1));
		memcpy(it->lo, lo, lolen);
		it->lolen = lolen;
	}
	if (hi)
	{
		it->hi = palloc(Max(hilen, 1));
		memcpy(it->hi, hi, hilen);
		it->hilen = hilen;
	}

	it->storage_id = meta.storage_id;
	it->strategy = strategy;

	/* the runs that may hold keys of the read: sources only for them */
	keep = palloc(sizeof(WcRunSummary *) * Max(m->nruns, 1));
	if (one_partition(it))
	{
		it->npkcols = wc_key_split(wc_table_info(rel), lo, bloom_pklen, it->pkcols);
		if (m->nrts > 0)
			partition_deleted_ts = wc_partition_deleted_ts(m, lo, bloom_pklen);
	}
	for (int i = 0; i < m->nruns; i++)
	{
		WcRunSummary *run = &m->runs[i];

		it->own_stats.runs_considered++;
		if (run_out_of_range(it, run) || run_outside_ranges(it, run, range))
		{
			it->own_stats.runs_skipped_range++;
			continue;
		}
		/* a run older than a tombstone of the whole partition read */
		if (run->st.max_write_ts < partition_deleted_ts)
		{
			it->own_stats.runs_skipped_range++;
			continue;
		}
		keep[nkeep++] = run;
	}
	it->sources = palloc0(sizeof(Source) * (nkeep + meta.ngens));

	/*
	 * A point read of a table whose runs the buffer pool cannot hold takes
	 * their value pages into a ring (wc_value_page_ring).  The runs
	 * together: after compaction a table is a few runs of different sizes,
	 * and the value pages of the smaller ones would fill the pool as well.
	 */
	it->value_ring = strategy == NULL && wc_manifest_run_pages(m) > (uint64) NBuffers;

	/* level 0: one source per live generation */
	for (uint32 g = 0; g < meta.ngens; g++)
		if (!wc_manifest_gen_retired(m, meta.gens[g].gen) &&
			l0_source(it, &it->sources[ns],
					  wc_l0_cache_get(rel, meta.storage_id, &meta.gens[g], meta.gens[0].gen)))
			ns++;

	/* runs: opened now, or when the merge reaches them */
	it->lazy = palloc(sizeof(Source *) * Max(nkeep, 1));
	if (reads_one_key(it))
	{
		open_runs_newest_first(it, keep, nkeep, &ns);
		nkeep = 0;
	}
	for (int i = 0; i < nkeep; i++)
	{
		Source	   *s = &it->sources[ns];

		if (make_lazy(it, s, keep[i]))
		{
			it->lazy[it->nlazy++] = s;
			ns++;
		}
		else if (open_run(it, s, keep[i], range))
			ns++;
		else
			memset(s, 0, sizeof(Source));	/* the slot is taken again */
	}
	if (it->nlazy > 1)
		qsort_arg(it->lazy, it->nlazy, sizeof(Source *), lazy_cmp, it);
	it->nsources = ns;
	iter_start(it);
	MemoryContextSwitchTo(old);
	return it;
}

/*
 * Tombstone guard rails (Cassandra's tombstone_warn_threshold and
 * tombstone_failure_threshold): count tombstone versions passed over per
 * partition; warn once past the first threshold, fail past the second.
 */
static void
count_tombstone(WcMergeIter *it, WcRowHeader *row)
{
	if (row->pklen != it->lastpk.len ||
		memcmp(WcRowKey(row), it->lastpk.data, row->pklen) != 0)
	{
		resetStringInfo(&it->lastpk);
		appendBinaryStringInfo(&it->lastpk, WcRowKey(row), row->pklen);
		it->partition_tombstones = 0;
		it->warned = false;
	}
	it->partition_tombstones++;
	if (wc_tombstone_failure_threshold > 0 &&
		it->partition_tombstones > wc_tombstone_failure_threshold)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("read of widecol table \"%s\" passed over more than %d tombstones in partition %s",
						RelationGetRelationName(it->rel), wc_tombstone_failure_threshold,
						wc_describe_partition(it->rel, wc_table_info(it->rel), WcRowKey(row), row->pklen)),
				 errdetail("widecol.tombstone_failure_threshold stops reads that would scan this many deleted rows."),
				 errhint("Delete whole partitions or ranges less often, let compaction purge tombstones, or raise widecol.tombstone_failure_threshold.")));
	if (!it->warned && wc_tombstone_warn_threshold > 0 &&
		it->partition_tombstones > wc_tombstone_warn_threshold)
	{
		it->warned = true;
		ereport(WARNING,
				(errmsg("read of widecol table \"%s\" passed over more than %d tombstones in partition %s",
						RelationGetRelationName(it->rel), wc_tombstone_warn_threshold,
						wc_describe_partition(it->rel, wc_table_info(it->rel), WcRowKey(row), row->pklen)),
				 errhint("Many deleted rows in one partition slow reads down until compaction purges them.")));
	}
}

/*
 * The next key's deciding version, or NULL at the end.  The result stays
 * valid until the next call.
 */
/* Move the source of the version returned last to its next version. */
static void
advance_pending(WcMergeIter *it)
{
	if (it->pending)
	{
		if (source_advance(it, it->pending))
			binaryheap_add(it->heap, PointerGetDatum(it->pending));
		it->pending = NULL;
	}
}

/*
 * Take the next version off the heap (its source becomes the pending one),
 * or NULL at the end.  With a key, NULL also when the next version belongs
 * to another key: that one stays on the heap.
 */
static WcRowHeader *
pop_version(WcMergeIter *it, const char *key, int keylen)
{
	Source	   *s = it->pending;
	WcRowHeader *row;

	if (s && binaryheap_empty(it->heap) && it->next_lazy >= it->nlazy)
	{
		/*
		 * The only source left (a scan of one run, the common case after
		 * compaction): it moves on and stays pending, without a trip through
		 * the heap.
		 */
		if (!source_advance(it, s))
		{
			it->pending = NULL;
			return NULL;
		}
	}
	else
	{
		advance_pending(it);
		open_lazy(it, false);
		if (binaryheap_empty(it->heap))
			return NULL;
		s = (Source *) DatumGetPointer(binaryheap_first(it->heap));
	}
	row = s->cur;
	if (key && wc_compare_keys(WcRowKey(row), row->keylen, key, keylen) != 0)
	{
		/* another key's version: it stays on the heap for later */
		if (s == it->pending)
		{
			binaryheap_add(it->heap, PointerGetDatum(s));
			it->pending = NULL;
		}
		return NULL;
	}
	if (s != it->pending)
	{
		(void) binaryheap_remove_first(it->heap);
		it->pending = s;
	}
	it->stats->versions++;
	if (WcRowIsTombstone(row))
		count_tombstone(it, row);
	return row;
}

/*
 * The write time of the newest range tombstone the snapshot sees that
 * covers the row's key (0: none).  Versions of the key older than it are
 * deleted, as if a row tombstone had been written then.
 */
static int64
range_deleted_before(WcMergeIter *it, const WcRowHeader *row)
{
	if (it->manifest == NULL || it->manifest->nrts == 0)
		return 0;
	return wc_range_covering_ts(it->manifest, WcRowKey(row), row->keylen, row->pklen,
								InvalidTransactionId);
}

/*
 * A deciding version a range tombstone deletes: counted and skipped, or,
 * for callers that want dead keys too, returned as a tombstone of the
 * range tombstone's time.
 */
static WcRowHeader *
range_deleted(WcMergeIter *it, const WcRowHeader *row, int64 rt_ts)
{
	Size		len = WcRowTupleOffset(row->keylen);
	WcRowHeader *dead;

	if (!it->return_dead)
	{
		it->stats->tombstones++;
		return NULL;
	}
	if (it->rt_dead)
		pfree(it->rt_dead);
	dead = it->rt_dead = palloc0(len);
	dead->write_ts = rt_ts;
	dead->xid = row->xid;
	dead->cid = row->cid;
	dead->len = len;
	dead->keylen = row->keylen;
	dead->pklen = row->pklen;
	dead->tupoff = len;
	dead->flags = WC_ROW_TOMBSTONE;
	memcpy(WcRowKey(dead), WcRowKey(row), row->keylen);
	return dead;
}

/* A deciding version readers do not see (tombstone, expired): counted. */
static bool
skip_dead(WcMergeIter *it, const WcRowHeader *row)
{
	if (it->return_dead || !wc_row_is_dead(row, it->now))
		return false;
	if (WcRowIsTombstone(row))
		it->stats->tombstones++;
	else
		it->stats->expired++;
	return true;
}

/*
 * Add an older version of the key to a counter fold; false when the fold
 * ends: at a tombstone or expired version (counting zero, not added) or
 * after a non-delta version (a value).
 */
static bool
fold_more(WcMergeIter *it, WcCounterFold *f, const WcRowHeader *row)
{
	if (WcRowIsTombstone(row) || wc_row_is_dead(row, it->now) || row->write_ts < it->fold_floor)
		return false;
	wc_counter_fold_add(f, row);
	return WcRowIsDelta(row);
}

/*
 * Counter tables: the deciding version is a delta, so add the key's older
 * versions the snapshot sees, newest first, down to a non-delta version;
 * a tombstone or an expired version ends the chain (it counts as zero).
 * The versions folded are taken off the heap; the first version of the next
 * key stays on it.
 */
static WcRowHeader *
fold_forward(WcMergeIter *it, WcRowHeader *newest)
{
	WcCounterFold f;
	WcRowHeader *acc;

	WcRowHeader *row;

	wc_counter_fold_begin(&f, it->rel, newest);
	while ((row = pop_version(it, WcRowKey(f.newest), f.newest->keylen)) != NULL &&
		   fold_more(it, &f, row))
		;
	acc = wc_counter_fold_end(&f);
	if (it->folded)
		pfree(it->folded);
	it->folded = acc;
	return acc;
}

/* Backward: fold the versions of one key collected newest first. */
static int
version_cmp(const void *a, const void *b)
{
	return wc_compare_versions(*(WcRowHeader *const *) a, *(WcRowHeader *const *) b);
}

/*
 * Backward: a source meets the versions of a key oldest first, so all of
 * them are taken off the heap and the newest (the deciding one) is kept, in
 * a copy since its source moves on.
 */
/* Keep a copy of the version that decides the key so far (backward). */
static void
keep_best(WcMergeIter *it, const WcRowHeader *row)
{
	if (row->len > it->best_cap)
	{
		it->best_cap = Max(row->len, 2 * it->best_cap);
		it->best = it->best ? repalloc(it->best, it->best_cap) : palloc(it->best_cap);
	}
	wc_row_copy(it->best, row);
}

static WcRowHeader *
merge_next_backward(WcMergeIter *it, ItemPointer tid)
{
	for (;;)
	{
		WcRowHeader *row;
		bool		have = false;

		for (int i = 0; i < it->nchain; i++)
			pfree(it->chain[i]);
		it->nchain = 0;

		while ((row = pop_version(it, have ? WcRowKey(it->best) : NULL,
								  have ? it->best->keylen : 0)) != NULL)
		{
			if (it->counters)
			{
				if (it->nchain == it->chaincap)
				{
					it->chaincap = Max(8, it->chaincap * 2);
					it->chain = it->chain ? repalloc(it->chain, sizeof(WcRowHeader *) * it->chaincap)
						: palloc(sizeof(WcRowHeader *) * it->chaincap);
				}
				it->chain[it->nchain++] = wc_row_copy(NULL, row);
			}
			if (have && wc_compare_versions(row, it->best) >= 0)
				continue;		/* not newer than the one we have (< 0: newer) */
			keep_best(it, row);
			it->best_tid = it->pending->curtid;
			have = true;
		}
		if (!have)
			return NULL;
		it->fold_floor = range_deleted_before(it, it->best);
		if (it->best->write_ts < it->fold_floor)
		{
			WcRowHeader *dead = range_deleted(it, it->best, it->fold_floor);

			if (dead == NULL)
				continue;
			*tid = it->best_tid;
			return dead;
		}
		if (it->counters && WcRowIsDelta(it->best))
		{
			WcCounterFold f;
			WcRowHeader *acc;

			/* fold as forward does: newest first, down to a non-delta */
			qsort(it->chain, it->nchain, sizeof(WcRowHeader *), version_cmp);
			wc_counter_fold_begin(&f, it->rel, it->chain[0]);
			for (int i = 1; i < it->nchain && fold_more(it, &f, it->chain[i]); i++)
				;
			acc = wc_counter_fold_end(&f);
			keep_best(it, acc);
			pfree(acc);
		}
		if (skip_dead(it, it->best))
			continue;
		*tid = it->best_tid;
		return it->best;
	}
}

/*
 * Is the row's key the one decided last?  Keys of one partition share a
 * long prefix and differ at their end (the clustering key): their last
 * eight bytes are compared first, which tells most rows of a scan apart
 * without comparing the prefix (a memcmp a row was 4% of a report).
 */
static inline bool
same_as_last(const WcMergeIter *it, const WcRowHeader *row)
{
	const char *key = WcRowKey(row);
	uint64		a,
				b;

	if (row->keylen != it->lastkeylen)
		return false;
	if (row->keylen >= sizeof(uint64))
	{
		memcpy(&a, key + row->keylen - sizeof(uint64), sizeof(uint64));
		memcpy(&b, it->lastkey + row->keylen - sizeof(uint64), sizeof(uint64));
		if (a != b)
			return false;
	}
	return memcmp(key, it->lastkey, row->keylen) == 0;
}

WcRowHeader *
wc_merge_next(WcMergeIter *it, ItemPointer tid)
{
	MemoryContext old = MemoryContextSwitchTo(it->cxt);
	WcRowHeader *result = NULL;

	if (it->backward)
	{
		result = merge_next_backward(it, tid);
		MemoryContextSwitchTo(old);
		return result;
	}

	for (;;)
	{
		WcRowHeader *row = pop_version(it, NULL, 0);

		if (row == NULL)
			break;
		if (it->raw)
		{
			*tid = it->pending->curtid;
			result = row;
			break;
		}
		/* older versions of a key already decided */
		if (it->have_last && same_as_last(it, row))
			continue;
		memcpy(it->lastkey, WcRowKey(row), row->keylen);
		it->lastkeylen = row->keylen;
		it->have_last = true;
		it->fold_floor = range_deleted_before(it, row);
		if (row->write_ts < it->fold_floor)
		{
			if ((result = range_deleted(it, row, it->fold_floor)) == NULL)
				continue;
			*tid = it->pending->curtid;
			break;
		}
		if (skip_dead(it, row))
			continue;
		*tid = it->pending->curtid;
		result = row;
		if (it->counters && WcRowIsDelta(row))
			result = fold_forward(it, row);
		break;
	}
	MemoryContextSwitchTo(old);
	return result;
}

/*
 * Every version of the given runs in storage order (key, newest first), for
 * compaction: no visibility check, no choice per key, no level 0.
 */
WcMergeIter *
wc_merge_begin_runs(Relation rel, WcRunSummary *runs, int nruns)
{
	WcMergeIter *it = iter_create(rel, SnapshotAny);
	MemoryContext old = MemoryContextSwitchTo(it->cxt);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);

	it->raw = true;
	it->sources = palloc0(sizeof(Source) * Max(nruns, 1));
	for (int i = 0; i < nruns; i++)
	{
		it->sources[i].is_run = true;
		wc_run_reader_open(&it->sources[i].reader, rel, &runs[i], strategy);
		it->sources[i].reader.block.poolable = true;
	}
	it->nsources = nruns;
	iter_start(it);
	MemoryContextSwitchTo(old);
	return it;
}

/*
 * Before the first wc_merge_next: when no run is open yet and the first to
 * open is lazy, its bound on the first key the merge returns (forward: at
 * or above it; backward: at or below it as a prefix), without reading
 * anything.  A caller merging partitions opens this one only once it gets
 * there.  false: no bound known.
 */
bool
wc_merge_peek_bound(WcMergeIter *it, const char **key, int *keylen)
{
	if (it->pending || !binaryheap_empty(it->heap) || it->next_lazy >= it->nlazy)
		return false;
	*key = it->lazy[it->next_lazy]->bound;
	*keylen = it->lazy[it->next_lazy]->boundlen;
	return true;
}

/* Accumulate this iterator's statistics into *stats (from now on). */
void
wc_merge_set_stats(WcMergeIter *it, WcMergeStats *stats)
{
	stats->runs_considered += it->own_stats.runs_considered;
	stats->runs_skipped_range += it->own_stats.runs_skipped_range;
	stats->runs_skipped_bloom += it->own_stats.runs_skipped_bloom;
	stats->runs_skipped_newer += it->own_stats.runs_skipped_newer;
	stats->bloom_checks += it->own_stats.bloom_checks;
	stats->bloom_false_positives += it->own_stats.bloom_false_positives;
	stats->extent_read_aheads += it->own_stats.extent_read_aheads;
	stats->l0_versions += it->l0_count;
	stats->versions += it->own_stats.versions;
	it->stats = stats;
}

/* Also return keys decided by a tombstone or an expired version. */
void
wc_merge_return_dead(WcMergeIter *it)
{
	it->return_dead = true;
}

/*
 * Key pages read so far by the runs of a live iterator; their value pages
 * read and prefetched are added to *values.
 */
int64
wc_merge_live_blocks(WcMergeIter *it, WcMergeStats *values)
{
	int64		n = 0;

	for (int i = 0; i < it->nsources; i++)
		if (it->sources[i].is_run)
		{
			const WcBlock *b = &it->sources[i].reader.block;

			n += it->sources[i].reader.blocks_read;
			values->value_pages_read += b->values_read;
			values->value_prefetches += b->values_prefetched;
			values->value_prefetch_hits += b->hints_used;
			values->extent_read_aheads += it->sources[i].reader.extent_read_ahead;
		}
	return n;
}

/* Might a range tombstone of the manifest cover a key in [lo, hi]? */
static bool
range_tombstone_within(const WcMergeIter *it)
{
	for (int i = 0; i < it->manifest->nrts; i++)
	{
		const WcRangeTombstone *rt = &it->manifest->rts[i];

		/* all of its keys start with rt->pk */
		if (it->lo && wc_compare_keys(it->lo, Min(it->lolen, rt->pklen), rt->pk, rt->pklen) > 0)
			continue;
		if (it->hi && wc_compare_keys(it->hi, Min(it->hilen, rt->pklen), rt->pk, rt->pklen) < 0)
			continue;
		return true;
	}
	return false;
}

/*
 * How many rows wc_merge_next would still return; the iterator is used up.
 * When one run alone holds versions the snapshot sees in the range (the
 * lazy runs opened first: each may hold some) and no
 * range tombstone may apply, its settled key pages are counted unread
 * (wc_run_count_settled); otherwise the rows are merged and counted, keys
 * only.  A range delete counts the rows it deletes this way.
 */
/* The settled count of the only source's run over the range, or -1. */
static int64
count_settled(WcMergeIter *it, Source *only)
{
	MemoryContext old = MemoryContextSwitchTo(it->cxt);
	WcRunReader counter;
	int64		n;

	/* a reader of its own: the merge goes on from here if it cannot */
	wc_run_reader_open(&counter, it->rel, only->reader.summary, only->reader.strategy);
	n = wc_run_count_settled(&counter, it->lo, it->lolen, it->hi, it->hilen);
	only->reader.blocks_read += counter.blocks_read;
	wc_block_free(&counter.block);
	MemoryContextSwitchTo(old);
	return n;
}

int64
wc_merge_count(WcMergeIter *it)
{
	ItemPointerData tid;
	int64		n = 0;

	if (it->pending == NULL && !it->have_last)
	{
		open_lazy(it, true);	/* a count needs every run */
		if (!it->raw && !it->return_dead && !it->counters && !it->backward &&
			it->heap->bh_size == 1 && (it->manifest == NULL || !range_tombstone_within(it)))
		{
			Source	   *only = (Source *) DatumGetPointer(binaryheap_first(it->heap));

			if (only->is_run && (n = count_settled(it, only)) >= 0)
			{
				binaryheap_reset(it->heap);
				return n;
			}
			n = 0;
		}
	}
	while (wc_merge_next(it, &tid))
		n++;
	return n;
}

/* Lazy runs of a live iterator not opened so far. */
int64
wc_merge_live_unopened(WcMergeIter *it)
{
	return it->nlazy - it->next_lazy;
}

void
wc_merge_end(WcMergeIter *it)
{
	wc_stats_count_bloom(it->storage_id, it->own_stats.bloom_checks,
						 it->own_stats.runs_skipped_bloom,
						 it->own_stats.bloom_false_positives);
	it->stats->blocks_read += wc_merge_live_blocks(it, it->stats);
	it->stats->runs_unopened += it->nlazy - it->next_lazy;
	MemoryContextDelete(it->cxt);
}

/*
 * The deciding version of one key for the snapshot (a palloc'd copy): the
 * live row, or NULL when the key is absent.  With include_dead, a tombstone
 * or expired version that decides the key is returned too.
 */
WcRowHeader *
wc_lookup_key(Relation rel, Snapshot snapshot, const char *key, int keylen,
			  int pklen, bool include_dead, ItemPointer tid)
{
	WcMergeRange range = {.lo = key, .lolen = keylen, .hi = key, .hilen = keylen,
	.bloom_pklen = pklen};
	WcMergeIter *it = wc_merge_begin(rel, snapshot, &range);
	WcRowHeader *row;
	WcRowHeader *copy = NULL;

	it->return_dead = include_dead;
	row = wc_merge_next(it, tid);

	if (row)
	{
		copy = wc_row_copy(NULL, row);
	}
	wc_merge_end(it);
	return copy;
}

/*
 * For each of n sorted keys, may some version of it exist (in level 0, or
 * in a run whose key range and bloom filter admit it) that snapshot may
 * see (for level 0: not one of this transaction's own versions from the
 * snapshot's command on; NULL: any)?  false is certain;
 * true is to be checked with a merge.  Level 0 is searched in the level-0
 * cache and, for many keys, each run's bloom filter is read once, so
 * probing them costs little more than hashing them: the lookups of
 * widecol._replaced_rows() for a COPY of new rows.
 */
void
wc_keys_may_exist(Relation rel, const WcMetaData *meta, WcManifest *m, Snapshot snapshot,
				  int64 n, const WcKeyRef *keys, bool *maybe)
{
	memset(maybe, 0, sizeof(bool) * n);
	for (uint32 g = 0; g < meta->ngens; g++)
	{
		const WcL0Sorted *l0;

		if (wc_manifest_gen_retired(m, meta->gens[g].gen))
			continue;
		l0 = wc_l0_cache_get(rel, meta->storage_id, &meta->gens[g], meta->gens[0].gen);
		for (int64 i = 0; i < n; i++)
			if (!maybe[i] && wc_l0_sorted_has_key(l0, keys[i].key, keys[i].keylen, snapshot))
				maybe[i] = true;
	}
	for (int r = 0; r < m->nruns; r++)
	{
		WcRunSummary *run = &m->runs[r];
		WcRunReader reader;

		if (run->st.nrows == 0)
			continue;
		wc_run_reader_open(&reader, rel, run, NULL);
		/*
		 * Read the whole filter once only when the keys outnumber its pages
		 * (a COPY); a few keys (a single-row INSERT) read one page each.
		 */
		if (n >= (int64) reader.hdr.nbloom_pages)
			wc_run_bloom_load(rel, &reader);
		for (int64 i = 0; i < n; i++)
			if (!maybe[i] &&
				!run_misses_range(run, keys[i].key, keys[i].keylen, keys[i].key, keys[i].keylen) &&
				wc_run_may_contain_partition(rel, &reader, keys[i].key, keys[i].pklen))
				maybe[i] = true;
		if (reader.bloom)
			pfree(reader.bloom);
	}
}
