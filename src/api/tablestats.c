/*
 * tablestats.c — what widecol.table_stats() and widecol.large_partitions()
 * report beyond the run summaries: the rows as the caller's snapshot decides
 * them (live, deleted, expired), per-partition sizes, and the read-time
 * bloom filter counters of stats.c.  Row counts and partitions need a full
 * merge of the table, as `nodetool tablestats` estimates would not be exact.
 */
#include "postgres.h"

#include "access/table.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/numeric.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "api/api.h"
#include "maintenance/maintenance.h"
#include "storage/keyenc.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/stats.h"
#include "storage/tableinfo.h"

/*
 * One row: keys decided by a live version, by a tombstone and by an expired
 * version, and the bloom filter counters since the server started.
 */
PG_FUNCTION_INFO_V1(widecol_row_stats);
Datum
widecol_row_stats(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	WcMergeRange range = {.strategy = GetAccessStrategy(BAS_BULKREAD)};
	WcMergeIter *it = wc_merge_begin(rel, GetActiveSnapshot(), &range);
	int64		now = wc_now();
	int64		live = 0,
				deleted = 0,
				expired = 0,
				checks,
				negatives,
				fps;
	WcRowHeader *row;
	ItemPointerData tid;
	WcMetaData	meta;
	Datum		v[6];
	bool		n[6] = {0};

	wc_merge_return_dead(it);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (WcRowIsTombstone(row))
			deleted++;
		else if (wc_row_is_dead(row, now))
			expired++;
		else
			live++;
	}
	wc_merge_end(it);
	wc_meta_read(rel, &meta);
	wc_stats_read(meta.storage_id, &checks, &negatives, &fps);
	table_close(rel, AccessShareLock);
	v[0] = Int64GetDatum(live);
	v[1] = Int64GetDatum(deleted);
	v[2] = Int64GetDatum(expired);
	v[3] = Int64GetDatum(checks);
	v[4] = Int64GetDatum(negatives);
	v[5] = Int64GetDatum(fps);
	PG_RETURN_DATUM(wc_result_row(fcinfo, v, n));
}

typedef struct PartSize
{
	char	   *pk;				/* encoded partition key */
	int			pklen;
	int64		rows;
	int64		bytes;
} PartSize;

static int
partsize_cmp(const void *a, const void *b)
{
	const PartSize *x = a;
	const PartSize *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->rows > y->rows ? -1 : (x->rows < y->rows);
}

/* Keep the n biggest partitions (by bytes) in top[], sorted. */
static void
offer(PartSize *top, int *ntop, int n, const PartSize *p)
{
	if (*ntop == n && partsize_cmp(p, &top[n - 1]) >= 0)
		return;
	if (*ntop < n)
		(*ntop)++;
	else
		pfree(top[n - 1].pk);
	top[*ntop - 1] = *p;
	top[*ntop - 1].pk = palloc(p->pklen);
	memcpy(top[*ntop - 1].pk, p->pk, p->pklen);
	qsort(top, *ntop, sizeof(PartSize), partsize_cmp);
}

/*
 * The n biggest partitions by the bytes of their live rows (stored size of
 * the deciding versions, before compression).  Keys come in key order, so a
 * partition's rows are consecutive.
 */
PG_FUNCTION_INFO_V1(widecol_large_partitions);
Datum
widecol_large_partitions(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(1);
	Relation	rel;
	WcMergeIter *it;
	WcMergeRange all = {0};
	PartSize   *top;
	PartSize	cur = {0};
	StringInfoData curpk;
	int			ntop = 0;
	WcRowHeader *row;
	ItemPointerData tid;

	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the number of partitions must be at least 1")));
	rel = wc_srf_open_widecol(fcinfo);
	if (wc_table_info(rel)->npk == 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("widecol table \"%s\" has no partition key", RelationGetRelationName(rel))));
	top = palloc(sizeof(PartSize) * Min(n, 10000));
	n = Min(n, 10000);
	initStringInfo(&curpk);
	all.strategy = GetAccessStrategy(BAS_BULKREAD);
	it = wc_merge_begin(rel, GetActiveSnapshot(), &all);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (cur.rows > 0 && (row->pklen != curpk.len ||
							 memcmp(WcRowKey(row), curpk.data, row->pklen) != 0))
		{
			cur.pk = curpk.data;
			cur.pklen = curpk.len;
			offer(top, &ntop, n, &cur);
			cur.rows = cur.bytes = 0;
		}
		if (cur.rows == 0)
		{
			resetStringInfo(&curpk);
			appendBinaryStringInfo(&curpk, WcRowKey(row), row->pklen);
		}
		cur.rows++;
		cur.bytes += row->len;
	}
	if (cur.rows > 0)
	{
		cur.pk = curpk.data;
		cur.pklen = curpk.len;
		offer(top, &ntop, n, &cur);
	}
	wc_merge_end(it);
	for (int i = 0; i < ntop; i++)
	{
		Datum		v[3];
		bool		nulls[3] = {0};

		v[0] = CStringGetTextDatum(wc_describe_partition(rel, wc_table_info(rel), top[i].pk, top[i].pklen));
		v[1] = Int64GetDatum(top[i].rows);
		v[2] = Int64GetDatum(top[i].bytes);
		wc_srf_put(fcinfo, v, nulls);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * What compaction has left to do and has done: the runs and compressed
 * bytes the table's strategy would merge now (every bucket it picks), and
 * the bytes written into runs by flushes and bulk writes (data entering
 * the runs) and by compactions (data written again), whose ratio
 * (all / entering) is the write amplification so far.
 */
PG_FUNCTION_INFO_V1(widecol_compaction_stats);
Datum
widecol_compaction_stats(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	WcTableInfo *info = wc_table_info(rel);
	WcMetaData	meta;
	WcManifest *m = wc_visible_manifest(rel, &meta);
	List	   *buckets;
	ListCell   *lc;
	int64		runs = 0,
				bytes = 0;
	Datum		v[5];
	bool		n[5] = {0};

	buckets = wc_strategy_pick(rel, info, m, GetOldestNonRemovableTransactionId(rel),
							   wc_table_quiet(RelationGetRelid(rel), &meta, m, false));
	foreach(lc, buckets)
	{
		WcBucket   *b = lfirst(lc);

		for (int i = 0; i < b->nruns; i++)
			for (int j = 0; j < m->nruns; j++)
				if (m->runs[j].run_id == b->run_ids[i])
				{
					runs++;
					bytes += m->runs[j].st.compressed_bytes;
				}
	}
	table_close(rel, AccessShareLock);
	v[0] = Int64GetDatum(runs);
	v[1] = Int64GetDatum(bytes);
	v[2] = Int64GetDatum(meta.bytes_ingested);
	v[3] = Int64GetDatum(meta.bytes_compacted);
	if (meta.bytes_ingested > 0)
		v[4] = DirectFunctionCall2(numeric_round,
								   DirectFunctionCall1(float8_numeric,
													   Float8GetDatum((double) (meta.bytes_ingested + meta.bytes_compacted) /
																	  meta.bytes_ingested)),
								   Int32GetDatum(2));
	else
		n[4] = true;
	PG_RETURN_DATUM(wc_result_row(fcinfo, v, n));
}
