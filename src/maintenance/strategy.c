/*
 * strategy.c — which runs to merge: the compaction strategies.
 *
 * Why a file of its own: choosing runs looks only at run summaries (sizes,
 * write times, xids, key ranges) and reads no page, so it is kept apart
 * from the merge itself (compact.c) and can be reasoned about alone.
 *
 * size_tiered (Cassandra's STCS): runs are sorted by compressed size and
 * put in buckets of similar size (within 0.5x-1.5x of the bucket's average;
 * runs below WC_STCS_SMALL_BYTES all share one bucket); a bucket with at
 * least min_threshold runs is merged, at most max_threshold of its smallest
 * runs at a time.
 *
 * time_window (Cassandra's TWCS): a run belongs to the window of its newest
 * write time.  Runs of the current window are merged size-tiered; a past
 * window with two runs or more, or with a run that reaches into an earlier
 * window, is merged into one run per window (compact.c splits the output by
 * window, so no run ever spans two windows after its first compaction).
 *
 * Both strategies merge the smaller runs of a table that has taken no
 * writes for widecol.idle_compaction_delay (the idle merge), and add
 * single-run compactions: a run with xids older than
 * vacuum_freeze_min_age (to freeze them), and a run of more than 20%
 * tombstones, all past gc_grace, that no other run can hold older versions
 * for (so that they can be purged).  See "Compaction strategies" in
 * src/README.md.
 */
#include "postgres.h"

#include "access/transam.h"
#include "commands/vacuum.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/maintenance.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

#define WC_STCS_SMALL_BYTES (256 * 1024)
#define WC_STCS_BUCKET_LOW	0.5
#define WC_STCS_BUCKET_HIGH 1.5
#define WC_TOMBSTONE_RATIO	0.2

typedef struct Cand
{
	int			idx;			/* into the manifest */
	int64		size;
} Cand;

static int
cand_cmp(const void *a, const void *b)
{
	const Cand *x = a;
	const Cand *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->idx - y->idx;
}

/*
 * The output level is the highest input level, one more when at least two
 * inputs have it: merging four flushed runs (level 1) gives level 2; a
 * level-2 run merged with newer flushes stays at level 2; a single-run
 * rewrite keeps its level.
 */
static WcBucket *
make_bucket(WcManifest *m, const char *kind, const int *idx, int n, bool *taken)
{
	WcBucket   *b = palloc0(sizeof(WcBucket));
	int			top = 0;

	b->kind = kind;
	b->nruns = n;
	b->run_ids = palloc(sizeof(uint64) * Max(n, 1));

	b->level = 1;
	for (int i = 0; i < n; i++)
	{
		b->run_ids[i] = m->runs[idx[i]].run_id;
		b->level = Max(b->level, m->runs[idx[i]].level);
		taken[idx[i]] = true;
	}
	/* a tier up only when two runs of the top level merge */
	for (int i = 0; i < n; i++)
		top += m->runs[idx[i]].level == b->level;
	if (top >= 2)
		b->level++;
	return b;
}

/* Size-tiered buckets among the runs idx[0..n-1]; eligible ones are added. */
static List *
size_tiered(WcManifest *m, const int *idx, int n, WcTableInfo *info,
			bool *taken, List *result)
{
	Cand	   *c = palloc(sizeof(Cand) * Max(n, 1));
	int		   *bucket_of = palloc(sizeof(int) * Max(n, 1));
	double	   *avg = palloc(sizeof(double) * Max(n, 1));
	int		   *count = palloc0(sizeof(int) * Max(n, 1));
	int			nbuckets = 0;
	int		   *members = palloc(sizeof(int) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		c[i].idx = idx[i];
		c[i].size = Max(m->runs[idx[i]].st.compressed_bytes, 1);
	}
	qsort(c, n, sizeof(Cand), cand_cmp);
	for (int i = 0; i < n; i++)
	{
		int			b;

		for (b = 0; b < nbuckets; b++)
		{
			if ((c[i].size > avg[b] * WC_STCS_BUCKET_LOW &&
				 c[i].size < avg[b] * WC_STCS_BUCKET_HIGH) ||
				(c[i].size < WC_STCS_SMALL_BYTES && avg[b] < WC_STCS_SMALL_BYTES))
				break;
		}
		if (b == nbuckets)
		{
			avg[b] = 0;
			nbuckets++;
		}
		avg[b] = (avg[b] * count[b] + c[i].size) / (count[b] + 1);
		count[b]++;
		bucket_of[i] = b;
	}
	for (int b = 0; b < nbuckets; b++)
	{
		int			k = 0;

		if (count[b] < info->min_threshold)
			continue;
		/* the smallest max_threshold runs (c is sorted by size) */
		for (int i = 0; i < n && k < info->max_threshold; i++)
			if (bucket_of[i] == b)
				members[k++] = c[i].idx;
		result = lappend(result, make_bucket(m, "minor", members, k, taken));
	}
	return result;
}

static List *
time_window(WcManifest *m, WcTableInfo *info, bool *taken, List *result)
{
	int64		now_window = wc_time_window(wc_now(), info->window_us);
	int64	   *win = palloc(sizeof(int64) * Max(m->nruns, 1));
	bool	   *done = palloc0(sizeof(bool) * Max(m->nruns, 1));
	int		   *idx = palloc(sizeof(int) * Max(m->nruns, 1));

	for (int i = 0; i < m->nruns; i++)
		win[i] = wc_time_window(m->runs[i].st.max_write_ts, info->window_us);
	for (int i = 0; i < m->nruns; i++)
	{
		int			n = 0;
		bool		straddles = false;

		if (done[i])
			continue;
		for (int j = i; j < m->nruns; j++)
			if (!done[j] && win[j] == win[i])
			{
				done[j] = true;
				idx[n++] = j;
				straddles |= wc_time_window(m->runs[j].st.min_write_ts, info->window_us) != win[i];
			}
		if (win[i] >= now_window)
			result = size_tiered(m, idx, n, info, taken, result);
		else if (n >= 2 || straddles)
			result = lappend(result, make_bucket(m, "minor", idx, Min(n, info->max_threshold),
												 taken));
	}
	return result;
}

/*
 * The idle merge of a quiet table (quiet.c): its smaller runs into one,
 * the largest with them only when it is not larger than all the others
 * together or is small itself (below WC_STCS_SMALL_BYTES).  A table that
 * stopped taking writes so ends at one run or two without its bulk
 * rewritten for a few small runs, and no pass after finds anything more to
 * do: of two runs of different sizes the larger is left alone.  Of a
 * time_window table, only the current window's runs: the strategy merges
 * each past window into one.
 */
static List *
idle_merge(WcManifest *m, WcTableInfo *info, bool *taken, List *result)
{
	int64		now_window = wc_time_window(wc_now(), info->window_us);
	Cand	   *c = palloc(sizeof(Cand) * Max(m->nruns, 1));
	int		   *members = palloc(sizeof(int) * Max(m->nruns, 1));
	int64		rest = 0;
	int			n = 0;

	for (int i = 0; i < m->nruns; i++)
	{
		if (taken[i] || (info->compaction == WC_COMPACTION_TIME_WINDOW &&
						 wc_time_window(m->runs[i].st.max_write_ts, info->window_us) < now_window))
			continue;
		c[n].idx = i;
		c[n].size = Max(m->runs[i].st.compressed_bytes, 1);
		n++;
	}
	if (n < 2)
		return result;
	qsort(c, n, sizeof(Cand), cand_cmp);
	for (int i = 0; i < n - 1; i++)
		rest += c[i].size;
	if (c[n - 1].size > rest && c[n - 1].size >= WC_STCS_SMALL_BYTES)
		n--;
	n = Min(n, info->max_threshold);
	if (n < 2)
		return result;
	for (int i = 0; i < n; i++)
		members[i] = c[i].idx;
	return lappend(result, make_bucket(m, "idle", members, n, taken));
}

/* Could another run hold an older version of a key of run i? */
static bool
older_overlap(WcManifest *m, int i)
{
	const WcRunSummary *r = &m->runs[i];

	for (int j = 0; j < m->nruns; j++)
	{
		const WcRunSummary *o = &m->runs[j];

		if (j == i || o->st.min_write_ts > r->st.max_write_ts)
			continue;
		if (r->min_key && o->max_key &&
			wc_compare_keys(VARDATA_ANY(r->min_key), VARSIZE_ANY_EXHDR(r->min_key),
							VARDATA_ANY(o->max_key), VARSIZE_ANY_EXHDR(o->max_key)) > 0)
			continue;
		if (r->max_key && o->min_key &&
			wc_compare_keys(VARDATA_ANY(r->max_key), VARSIZE_ANY_EXHDR(r->max_key),
							VARDATA_ANY(o->min_key), VARSIZE_ANY_EXHDR(o->min_key)) < 0)
			continue;
		return true;
	}
	return false;
}

/*
 * The buckets of runs the table's strategy merges now (a List of WcBucket);
 * when it merges none and the table is quiet (no writes for
 * widecol.idle_compaction_delay), the idle merge; then single-run
 * compactions for freezing and for tombstone purging.
 */
List *
wc_strategy_pick(Relation rel, WcTableInfo *info, WcManifest *m, TransactionId horizon,
				 bool quiet)
{
	bool	   *taken = palloc0(sizeof(bool) * Max(m->nruns, 1));
	List	   *result = NIL;
	TransactionId next = ReadNextTransactionId();
	int64		purge_before = wc_now() - wc_gc_grace_us(info);

	if (info->compaction == WC_COMPACTION_TIME_WINDOW)
		result = time_window(m, info, taken, result);
	else
	{
		int		   *idx = palloc(sizeof(int) * Max(m->nruns, 1));

		for (int i = 0; i < m->nruns; i++)
			idx[i] = i;
		result = size_tiered(m, idx, m->nruns, info, taken, result);
	}
	if (quiet && result == NIL)
		result = idle_merge(m, info, taken, result);

	for (int i = 0; i < m->nruns; i++)
	{
		WcRunSummary *r = &m->runs[i];

		if (taken[i])
			continue;
		if (TransactionIdIsNormal(r->st.min_xid) && TransactionIdPrecedes(r->st.min_xid, horizon) &&
			(int32) (next - r->st.min_xid) > vacuum_freeze_min_age)
			result = lappend(result, make_bucket(m, "freeze", &i, 1, taken));
		else if (r->st.ntombstones > 0 &&
				 r->st.ntombstones >= WC_TOMBSTONE_RATIO * r->st.nrows &&
				 r->st.max_write_ts < purge_before &&
				 (!TransactionIdIsNormal(r->st.max_xid) ||
				  TransactionIdPrecedes(r->st.max_xid, horizon)) &&
				 !older_overlap(m, i))
			result = lappend(result, make_bucket(m, "tombstones", &i, 1, taken));
	}
	return result;
}
