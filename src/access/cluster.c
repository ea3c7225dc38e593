/*
 * cluster.c — VACUUM FULL (and CLUSTER) of a widecol table: its rows are
 * written compactly into the new relfilenode PostgreSQL made for it.
 *
 * PostgreSQL holds AccessExclusiveLock, creates the new storage (our
 * relation_set_new_filenode: a new storage id), calls us to copy, then
 * swaps the relfilenodes and drops the old one (whose manifest rows go with
 * it, see DROP).  We copy every version some snapshot may still need:
 * level 0 (the generations not flushed yet) as one run, and one run merged
 * from all the old runs (in storage order, as compaction reads them), in
 * which versions of aborted transactions are dropped, versions visible to
 * every snapshot are frozen, and the older versions of a key under such a
 * version go (it shadows them for everyone).  Tombstones are kept: level 0
 * may hold older versions of their keys (compaction purges them later).
 * Counter tables keep every committed version (a delta needs what is
 * below it).  Range tombstones are copied into the new storage's manifest
 * (the versions they cover were copied too).  Nothing is read through a
 * snapshot, so this is exact for every transaction that reads the table
 * afterwards.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/compression.h"
#include "storage/run.h"

typedef struct Copy
{
	Relation	from;			/* old storage (its TOAST relation too) */
	Relation	to;
	TransactionId oldest_xmin;
	TransactionId min_xid;		/* oldest xid left in what we wrote */
	double		written;
	double		dropped;
	WcRowHeader **l0;
	int64		nl0;
	int64		l0cap;
} Copy;

/* Is the version visible to every snapshot (and so, to freeze)? */
static bool
settled(const Copy *c, const WcRowHeader *row)
{
	if (WcRowIsFrozen(row))
		return true;
	return TransactionIdIsNormal(row->xid) &&
		TransactionIdPrecedes(row->xid, c->oldest_xmin) &&
		TransactionIdDidCommit(row->xid);
}

/* Add a version to the new run, frozen when everyone sees it. */
static void
add(Copy *c, WcRunWriter *w, const WcRowHeader *row)
{
	/* out-of-line values move to the new TOAST relation, added columns' defaults are stored */
	WcRowHeader *copy = wc_row_copy_for_rewrite(c->from, c->to, row);

	if (settled(c, copy))
	{
		copy->xid = FrozenTransactionId;
		copy->cid = 0;
	}
	else if (TransactionIdIsNormal(copy->xid) &&
			 (!TransactionIdIsValid(c->min_xid) || TransactionIdPrecedes(copy->xid, c->min_xid)))
		c->min_xid = copy->xid;
	wc_run_writer_add(w, copy, NULL);
	pfree(copy);
	c->written++;
}

static void
collect_l0(WcRowHeader *row, ItemPointer tid, void *arg)
{
	Copy	   *c = arg;

	if (wc_xid_known_aborted(row->xid))
	{
		c->dropped++;
		return;
	}
	if (c->nl0 == c->l0cap)
		c->l0 = repalloc_huge(c->l0, sizeof(WcRowHeader *) * (c->l0cap *= 2));
	c->l0[c->nl0++] = wc_row_copy(NULL, row);
}

void
wc_cluster_copy(Relation old, Relation new, TransactionId oldest_xmin,
				TransactionId *xid_cutoff, MultiXactId *multi_cutoff,
				double *num_tuples, double *tups_vacuumed)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol rewrite",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	bool		counters = wc_table_info(old)->ncounters > 0;
	WcMetaData	meta;
	WcManifest *m;
	WcRunSummary summary;
	Copy		c = {0};

	c.oldest_xmin = oldest_xmin;
	c.from = old;
	c.to = new;
	wc_meta_read(old, &meta);
	m = wc_manifest_read(meta.storage_id, SnapshotSelf);

	/* level 0: every generation not flushed into a run yet */
	c.l0cap = 1024;
	c.l0 = palloc(sizeof(WcRowHeader *) * c.l0cap);
	for (uint32 g = 0; g < meta.ngens; g++)
		if (!wc_manifest_gen_retired(m, meta.gens[g].gen))
			wc_l0_read_gen(old, &meta.gens[g], collect_l0, &c);
	if (c.nl0 > 0)
	{
		WcRunWriter *w = wc_run_writer_begin(new, 1);

		wc_run_writer_set_zstd(w, wc_compaction_zstd_level);

		wc_sort_rows(c.l0, c.nl0, NULL);
		for (int64 i = 0; i < c.nl0; i++)
			add(&c, w, c.l0[i]);
		wc_run_writer_finish(w, &summary);
	}

	/* the runs, merged */
	if (m->nruns > 0)
	{
		WcRunWriter *w = wc_run_writer_begin(new, 2);
		WcMergeIter *it = wc_merge_begin_runs(old, m->runs, m->nruns);
		WcRowHeader *row;
		ItemPointerData tid;

		char	   *key = palloc(WC_MAX_KEY_SIZE);
		int			keylen = -1;
		bool		shadowed = false;

		wc_run_writer_set_zstd(w, wc_compaction_zstd_level);

		while ((row = wc_merge_next(it, &tid)) != NULL)
		{
			CHECK_FOR_INTERRUPTS();
			if (keylen != row->keylen || memcmp(key, WcRowKey(row), keylen) != 0)
			{
				keylen = row->keylen;
				memcpy(key, WcRowKey(row), keylen);
				shadowed = false;
			}
			if (shadowed || wc_xid_known_aborted(row->xid))
			{
				c.dropped++;
				continue;
			}
			add(&c, w, row);
			/* everyone sees this version: nobody can see the older ones */
			if (!counters && settled(&c, row))
				shadowed = true;
		}
		wc_merge_end(it);
		wc_run_writer_finish(w, &summary);
	}

	/*
	 * Range tombstones are manifest rows of the old storage, which goes:
	 * the versions they cover were copied, so they come along.
	 */
	if (m->nrts > 0)
	{
		WcMetaData newmeta;

		wc_meta_read(new, &newmeta);
		for (int i = 0; i < m->nrts; i++)
			wc_manifest_add_range_tombstone(newmeta.storage_id, &m->rts[i]);
	}

	*xid_cutoff = TransactionIdIsValid(c.min_xid) && TransactionIdPrecedes(c.min_xid, oldest_xmin) ?
		c.min_xid : oldest_xmin;
	*multi_cutoff = GetOldestMultiXactId();
	*num_tuples = c.written;
	*tups_vacuumed = c.dropped;
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
}
