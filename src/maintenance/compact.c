/*
 * compact.c — merging a set of runs into new ones, and dropping runs whose
 * rows have all expired without reading them.
 *
 * Which runs are merged is the strategy's business (strategy.c) and when
 * is the maintenance pass's (maintain.c); this file only does the merge,
 * under the table's ShareUpdateExclusiveLock, after level 0 was flushed.
 * Per key, versions are walked newest first: aborted versions go; the
 * newest version every snapshot sees (committed before the horizon) is kept
 * with its xid frozen, and everything older in the inputs goes, since it is
 * shadowed for every snapshot.  If that version is a tombstone or expired
 * and older than widecol.gc_grace it goes too, but only when no run outside
 * the compaction can hold an older version of the key (the tombstone purge
 * rule: key range, bloom filter, write times).  Versions not yet visible to
 * everyone are kept as they are.  The new runs and the dropping of the old
 * ones commit together.  See "Compaction", "Tombstone purge rule" and
 * "Whole-run drop" in src/README.md.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/maintenance.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/compression.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

int			wc_gc_grace_seconds = 10 * 24 * 3600;

/* At most this many output runs are open at once (one per time window). */
#define WC_MAX_OPEN_WINDOWS 8

static bool
all_visible(const WcRowHeader *row, TransactionId horizon)
{
	if (!TransactionIdIsNormal(row->xid))
		return WcRowIsFrozen(row);
	return TransactionIdPrecedes(row->xid, horizon) && TransactionIdDidCommit(row->xid);
}

static bool
key_below(const char *key, int keylen, const bytea *bound)
{
	return bound && wc_compare_keys(key, keylen, VARDATA_ANY(bound),
									VARSIZE_ANY_EXHDR(bound)) < 0;
}

static bool
key_above(const char *key, int keylen, const bytea *bound)
{
	return bound && wc_compare_keys(key, keylen, VARDATA_ANY(bound),
									VARSIZE_ANY_EXHDR(bound)) > 0;
}

/* Do the key ranges of two runs overlap? */
static bool
ranges_overlap(const WcRunSummary *a, const WcRunSummary *b)
{
	if (a->max_key == NULL || b->min_key == NULL || a->min_key == NULL || b->max_key == NULL)
		return true;
	return !key_above(VARDATA_ANY(a->min_key), VARSIZE_ANY_EXHDR(a->min_key), b->max_key) &&
		!key_above(VARDATA_ANY(b->min_key), VARSIZE_ANY_EXHDR(b->min_key), a->max_key);
}

/*
 * Whole-run drop rule: run i may be dropped without being read when
 *  1. every version in it is dead and was so before now - gc_grace: rows
 *     expired, tombstones written, that long ago (max_expire), and
 *  2. every version in it is visible to every snapshot (its newest xid
 *     precedes the horizon), as for a purge in a compaction: a transaction
 *     still running may otherwise write an older version of one of its
 *     keys that the run's version must keep shadowing, and
 *  3. no other run may hold a still-live older version of one of its keys:
 *     every other run either holds only newer versions (its oldest write
 *     time is after our newest), or does not overlap our key range, or is
 *     itself entirely dead (its max_expire is past: whatever it holds is
 *     invisible, a tombstone in it shadows runs that are checked here in
 *     their own right).
 * Level 0 holds only writes made after the flush that precedes this check,
 * all newer.
 */
bool
wc_run_droppable_whole(const WcManifest *m, int i, int64 now, int64 purge_before,
					   TransactionId horizon)
{
	const WcRunSummary *r = &m->runs[i];

	if (r->st.nrows == 0 || r->st.max_expire == PG_INT64_MAX || r->st.max_expire >= purge_before)
		return false;
	if (TransactionIdIsNormal(r->st.max_xid) && !TransactionIdPrecedes(r->st.max_xid, horizon))
		return false;
	for (int j = 0; j < m->nruns; j++)
	{
		const WcRunSummary *o = &m->runs[j];

		if (j == i || o->st.max_expire < now)
			continue;
		if (o->st.min_write_ts > r->st.max_write_ts)
			continue;
		if (!ranges_overlap(r, o))
			continue;
		return false;
	}
	return true;
}

/*
 * A run about to be dropped whole: delete the out-of-line values of its
 * versions.  Only runs that hold any are read (their key pages, and the
 * value pages of the versions flagged), the others are dropped unread.
 */
static void
free_out_of_line_of_run(Relation rel, WcRunSummary *run)
{
	WcMergeIter *it;
	WcRowHeader *row;
	ItemPointerData tid;

	if (run->st.nexternal == 0)
		return;
	it = wc_merge_begin_runs(rel, run, 1);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		wc_row_free_out_of_line(rel, row);
	}
	wc_merge_end(it);
}

/*
 * Drop every run whose versions are all dead (see wc_run_droppable_whole)
 * by turning its manifest row into a dropped one; its pages are reclaimed
 * once no snapshot reads it.  Returns the number of runs dropped.
 */
int
wc_drop_expired_runs(Relation rel, WcManifest *m, TransactionId horizon, WcCompactStats *st)
{
	int64		now = wc_now();
	int64		purge_before = now - wc_gc_grace_us(wc_table_info(rel));
	uint64	   *ids = palloc(sizeof(uint64) * Max(m->nruns, 1));
	int			n = 0;
	WcMetaData	meta;

	for (int i = 0; i < m->nruns; i++)
	{
		if (!wc_run_droppable_whole(m, i, now, purge_before, horizon))
			continue;
		free_out_of_line_of_run(rel, &m->runs[i]);
		ids[n++] = m->runs[i].run_id;
		st->runs_in++;
		st->rows_in += m->runs[i].st.nrows;
		st->bytes_in += m->runs[i].st.compressed_bytes;
		st->runs_dropped_whole++;
	}
	if (n > 0)
	{
		wc_meta_read(rel, &meta);
		wc_manifest_drop_runs(meta.storage_id, ids, n);
		ereport(DEBUG1,
				(errmsg("widecol: dropped %d expired runs of \"%s\" (read only those with out-of-line values)",
						n, RelationGetRelationName(rel))));
	}
	pfree(ids);
	return n;
}

/* ---------- the tombstone purge rule ---------- */

typedef struct Outside
{
	WcRunSummary *run;
	WcRunReader reader;			/* opened for its bloom filter when needed */
	bool		opened;
} Outside;

/*
 * Position an outside run's reader on the row's key: false when the run
 * cannot hold it (key range, bloom filter).  Then wc_run_reader_next
 * returns its versions, newest first, while they have the key.
 */
static bool
seek_outside(Relation rel, Outside *o, const WcRowHeader *row)
{
	const char *key = WcRowKey(row);

	if (key_below(key, row->keylen, o->run->min_key) || key_above(key, row->keylen, o->run->max_key))
		return false;
	if (!o->opened)
	{
		wc_run_reader_open(&o->reader, rel, o->run, NULL);
		o->opened = true;
	}
	if (row->pklen > 0 && !wc_run_may_contain_partition(rel, &o->reader, key, row->pklen))
		return false;
	wc_run_reader_seek(&o->reader, key, row->keylen);
	return true;
}

/* The next version of the row's key in the run seek_outside positioned. */
static WcRowHeader *
next_of_key(Outside *o, const WcRowHeader *row)
{
	ItemPointerData tid;
	WcRowHeader *v = wc_run_reader_next(&o->reader, &tid);

	return v && v->keylen == row->keylen &&
		memcmp(WcRowKey(v), WcRowKey(row), row->keylen) == 0 ? v : NULL;
}

/*
 * Does a run outside the compaction hold a version of this row's key older
 * than the row?  Not if its write times are all newer, the key lies outside
 * its key range, or its bloom filter rules out the key's partition;
 * otherwise a seek looks (the filter is per partition: a run holding other
 * rows of the partition would keep every tombstone of it forever).
 */
static bool
older_version_outside(Relation rel, Outside *out, int nout, const WcRowHeader *row)
{
	for (int i = 0; i < nout; i++)
	{
		WcRowHeader *v;

		if (out[i].run->st.min_write_ts > row->write_ts || !seek_outside(rel, &out[i], row))
			continue;
		while ((v = next_of_key(&out[i], row)) != NULL)
			if (wc_compare_versions(v, row) > 0)
				return true;	/* older than the row */
	}
	return false;
}

/*
 * Does a run outside the compaction hold a version of the row's key newer
 * than the row and visible to every snapshot (so that no snapshot sees the
 * row)?  Garbage collection drops such shadowed versions, so that the
 * tombstone shadowing them can later be purged.  Only runs written after
 * the row can hold one.
 */
static bool
newer_version_outside(Relation rel, Outside *out, int nout, const WcRowHeader *row,
					  TransactionId horizon)
{
	for (int i = 0; i < nout; i++)
	{
		WcRowHeader *v;

		if (out[i].run->st.max_write_ts <= row->write_ts || !seek_outside(rel, &out[i], row))
			continue;
		/* newest first: stop at the first not newer than the row */
		while ((v = next_of_key(&out[i], row)) != NULL && wc_compare_versions(v, row) < 0)
			if (all_visible(v, horizon))
				return true;
	}
	return false;
}

/* ---------- output runs, one per time window ---------- */

typedef struct Outputs
{
	Relation	rel;
	int			level;
	int64		window_us;		/* 0: a single output run */
	int			n;
	int64		window[WC_MAX_OPEN_WINDOWS];
	WcRunWriter *writer[WC_MAX_OPEN_WINDOWS];
	WcCompactStats *st;
} Outputs;

static void
outputs_finish(Outputs *o)
{
	for (int i = 0; i < o->n; i++)
	{
		WcRunSummary summary;

		if (wc_run_writer_finish(o->writer[i], &summary))
		{
			o->st->runs_out++;
			o->st->rows_out += summary.st.nrows;
			o->st->bytes_out += summary.st.compressed_bytes;
			wc_meta_count_written(o->rel, true, summary.st.compressed_bytes);
		}
	}
	o->n = 0;
}

/* The writer for a row: its time window's, so that a run never spans two. */
static WcRunWriter *
output_for(Outputs *o, const WcRowHeader *row)
{
	int64		win = o->window_us > 0 ? wc_time_window(row->write_ts, o->window_us) : 0;

	for (int i = 0; i < o->n; i++)
		if (o->window[i] == win)
			return o->writer[i];
	if (o->n == WC_MAX_OPEN_WINDOWS)
		elog(ERROR, "widecol: more than %d time windows in one compaction pass",
			 WC_MAX_OPEN_WINDOWS);
	o->window[o->n] = win;
	o->writer[o->n] = wc_run_writer_begin(o->rel, o->level);
	wc_run_writer_set_zstd(o->writer[o->n], wc_compaction_zstd_level);
	return o->writer[o->n++];
}

/* ---------- the merge ---------- */

typedef struct Pass
{
	Relation	rel;
	WcRunSummary *in;
	int			nin;
	Outside    *out;
	int			nout;
	TransactionId horizon;
	int64		now;
	int64		purge_before;
	int64		window_us;
	const int64 *windows;		/* this pass writes these windows; NULL: all */
	int			nwindows;
	bool		drop_shadowed;	/* garbage collection: drop versions that a
								 * run outside shadows */
	const WcManifest *manifest; /* its range tombstones */
	WcCompactStats *st;
} Pass;

static bool
pass_takes(const Pass *p, const WcRowHeader *row)
{
	int64		win;

	if (p->windows == NULL)
		return true;
	win = wc_time_window(row->write_ts, p->window_us);
	for (int i = 0; i < p->nwindows; i++)
		if (p->windows[i] == win)
			return true;
	return false;
}

/*
 * Counter tables: write the folded version of a key's deltas (its newest
 * delta with the counters summed; a base when the fold reached a value, a
 * tombstone or the end of the key's history).  Every version folded was
 * visible to all, so it is frozen.
 */
static void
emit_fold(Pass *p, Outputs *outputs, WcCounterFold *fold, int64 *written)
{
	WcRowHeader *acc = wc_counter_fold_end(fold);

	if (pass_takes(p, acc))
	{
		acc->xid = FrozenTransactionId;
		acc->cid = FirstCommandId;
		wc_run_writer_add(output_for(outputs, acc), acc, NULL);
		(*written)++;
	}
	pfree(acc);
}

/*
 * A version shadowed for every snapshot goes: counted, and its out-of-line
 * values deleted (it is their only owner, see storage/outofline.c).
 */
static void
version_goes(Pass *p, const WcRowHeader *row)
{
	p->st->shadowed_dropped++;
	wc_row_free_out_of_line(p->rel, row);
}

/*
 * The newest version of a key that every snapshot sees: does it stay?  (A
 * version that goes has its out-of-line values deleted.)  Not
 * if a newer run outside the pass shadows it, nor if it is dead past the
 * purge time with no older version outside that it would let resurface.
 */
static bool
settled_version_stays(Pass *p, const WcRowHeader *row)
{
	if (p->drop_shadowed && newer_version_outside(p->rel, p->out, p->nout, row, p->horizon))
	{
		version_goes(p, row);
		return false;
	}
	if (wc_row_is_dead(row, p->now) &&
		(WcRowIsTombstone(row) ? row->write_ts : row->expire_at) < p->purge_before &&
		!older_version_outside(p->rel, p->out, p->nout, row))
	{
		if (WcRowIsTombstone(row))
			p->st->tombstones_purged++;
		else
			p->st->expired_purged++;
		wc_row_free_out_of_line(p->rel, row);
		return false;
	}
	return true;
}

/* Write a version to its output run, frozen when every snapshot sees it. */
static void
write_version(Outputs *outputs, const WcRowHeader *row, bool all_see_it)
{
	WcRowHeader *frozen;

	if (!all_see_it || row->xid == FrozenTransactionId)
	{
		wc_run_writer_add(output_for(outputs, row), row, NULL);
		return;
	}
	/* the merge's row lives in a block buffer: freeze a copy */
	frozen = wc_row_copy(NULL, row);
	frozen->xid = FrozenTransactionId;
	frozen->cid = FirstCommandId;
	wc_run_writer_add(output_for(outputs, frozen), frozen, NULL);
	pfree(frozen);
}

/*
 * Does the version go whatever else the key holds?  When a newer version
 * of the key is settled (seen by everyone), when a range tombstone every
 * snapshot sees deletes it (the tombstone stays until purged), or when its
 * transaction aborted.
 */
static bool
shadowed_for_all(Pass *p, const WcRowHeader *row, bool settled, bool mine)
{
	if (!settled &&
		(p->manifest->nrts == 0 ||
		 row->write_ts >= wc_range_covering_ts(p->manifest, WcRowKey(row), row->keylen,
											   row->pklen, p->horizon)) &&
		!wc_xid_known_aborted(row->xid))
		return false;
	if (mine)
		version_goes(p, row);
	return true;
}

/*
 * One merge over all input versions.  Every version takes part in the
 * per-key decisions; only those of the pass's windows are written and
 * counted, so that several passes (one per group of windows) decide alike
 * and count each version once.
 */
static int64
merge_pass(Pass *p, Outputs *outputs)
{
	WcMergeIter *it = wc_merge_begin_runs(p->rel, p->in, p->nin);
	WcRowHeader *row;
	ItemPointerData tid;
	StringInfoData key;
	bool		settled = false;
	int64		written = 0;
	bool		counters = wc_table_info(p->rel)->ncounters > 0;
	WcCounterFold fold;
	bool		folding = false;

	initStringInfo(&key);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		bool		mine;

		CHECK_FOR_INTERRUPTS();
		wc_throttle(row->len);
		if (key.len != row->keylen || memcmp(key.data, WcRowKey(row), row->keylen) != 0)
		{
			if (folding)
			{
				/* no older version in the inputs: a delta if runs outside hold some */
				fold.base = fold.base || p->nout == 0;
				emit_fold(p, outputs, &fold, &written);
				folding = false;
			}
			resetStringInfo(&key);
			appendBinaryStringInfo(&key, WcRowKey(row), row->keylen);
			settled = false;
		}
		mine = pass_takes(p, row);
		if (shadowed_for_all(p, row, settled, mine))
			continue;
		if (folding)
		{
			if (all_visible(row, p->horizon))
			{
				if (mine)
					version_goes(p, row);
				if (WcRowIsTombstone(row) || wc_row_is_dead(row, p->now))
					fold.base = true;	/* a dead version counts as zero */
				else
					wc_counter_fold_add(&fold, row);
				if (fold.base)
				{
					emit_fold(p, outputs, &fold, &written);
					folding = false;
					settled = true;
				}
				continue;
			}
			/* not visible to all: keep it, and what is older, as they are */
			emit_fold(p, outputs, &fold, &written);
			folding = false;
		}
		if (all_visible(row, p->horizon))
		{
			if (counters && WcRowIsDelta(row) && !wc_row_is_dead(row, p->now))
			{
				/* fold this key's older increments into it */
				wc_counter_fold_begin(&fold, p->rel, row);
				folding = true;
				continue;
			}
			settled = true;
			if (mine && settled_version_stays(p, row))
			{
				write_version(outputs, row, true);
				written++;
			}
			continue;
		}
		if (!mine)
			continue;
		write_version(outputs, row, false);
		written++;
	}
	if (folding)
	{
		fold.base = fold.base || p->nout == 0;
		emit_fold(p, outputs, &fold, &written);
	}
	wc_merge_end(it);
	return written;
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * The time windows the input versions fall in, sorted.  From the run
 * summaries when their write-time ranges cover few windows; otherwise from
 * a first read of the versions (a major compaction of months of data).
 */
static int64 *
input_windows(Pass *p, int *nwin)
{
	int64		span = 0;
	int64	   *w;
	int			n = 0,
				cap;

	for (int i = 0; i < p->nin; i++)
		span += wc_time_window(p->in[i].st.max_write_ts, p->window_us) -
			wc_time_window(p->in[i].st.min_write_ts, p->window_us) + 1;
	if (span <= WC_MAX_OPEN_WINDOWS)
	{
		w = palloc(sizeof(int64) * Max(span, 1));
		for (int i = 0; i < p->nin; i++)
			for (int64 x = wc_time_window(p->in[i].st.min_write_ts, p->window_us);
				 x <= wc_time_window(p->in[i].st.max_write_ts, p->window_us); x++)
				w[n++] = x;
	}
	else
	{
		WcMergeIter *it = wc_merge_begin_runs(p->rel, p->in, p->nin);
		WcRowHeader *row;
		ItemPointerData tid;
		int64		last = PG_INT64_MIN;

		cap = 64;
		w = palloc(sizeof(int64) * cap);
		while ((row = wc_merge_next(it, &tid)) != NULL)
		{
			int64		x = wc_time_window(row->write_ts, p->window_us);

			CHECK_FOR_INTERRUPTS();
			wc_throttle(row->len);
			if (x == last)
				continue;
			last = x;
			if (n == cap)
			{
				/* keep the array small: drop duplicates before growing */
				int			m = 0;

				qsort(w, n, sizeof(int64), int64_cmp);
				for (int i = 0; i < n; i++)
					if (m == 0 || w[m - 1] != w[i])
						w[m++] = w[i];
				n = m;
				if (n > cap / 2)
					w = repalloc_huge(w, sizeof(int64) * (cap *= 2));
			}
			w[n++] = x;
		}
		wc_merge_end(it);
	}
	qsort(w, n, sizeof(int64), int64_cmp);
	{
		int			m = 0;

		for (int i = 0; i < n; i++)
			if (m == 0 || w[m - 1] != w[i])
				w[m++] = w[i];
		n = m;
	}
	*nwin = n;
	return w;
}

/*
 * Merge the runs run_ids (all in m, the manifest as this transaction sees
 * it) into new runs of the given level, one per time window when
 * window_us > 0 (in passes of at most WC_MAX_OPEN_WINDOWS windows).  The
 * caller holds ShareUpdateExclusiveLock and flushed level 0 after taking
 * it; horizon was computed after the flush.  Returns the versions written;
 * *st receives the counts.
 */
int64
wc_compact_runs(Relation rel, WcManifest *m, const uint64 *run_ids, int nin,
				int level, int64 window_us, TransactionId horizon,
				WcCompactStats *st)
{
	WcMetaData	meta;
	Pass		p;
	Outputs		outputs;
	int64		written = 0;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol compaction",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	memset(&p, 0, sizeof(p));
	p.rel = rel;
	p.nin = nin;
	p.in = palloc(sizeof(WcRunSummary) * Max(nin, 1));
	p.out = palloc0(sizeof(Outside) * Max(m->nruns, 1));
	p.horizon = horizon;
	p.now = wc_now();
	p.purge_before = p.now - wc_gc_grace_us(wc_table_info(rel));
	p.window_us = window_us;
	p.st = st;
	/* widecol.garbagecollect (maintain.c) rewrites runs one at a time */
	p.drop_shadowed = strcmp(st->kind, "garbagecollect") == 0;
	p.manifest = m;
	for (int i = 0; i < nin; i++)
	{
		bool		found = false;

		for (int j = 0; j < m->nruns && !found; j++)
			if (m->runs[j].run_id == run_ids[i])
			{
				p.in[i] = m->runs[j];
				found = true;
			}
		if (!found)
			elog(ERROR, "widecol: run %llu of \"%s\" is not in the manifest",
				 (unsigned long long) run_ids[i], RelationGetRelationName(rel));
		st->runs_in++;
		st->rows_in += p.in[i].st.nrows;
		st->bytes_in += p.in[i].st.compressed_bytes;
	}
	for (int j = 0; j < m->nruns; j++)
	{
		bool		input = false;

		for (int i = 0; i < nin; i++)
			input |= m->runs[j].run_id == run_ids[i];
		if (!input)
			p.out[p.nout++].run = &m->runs[j];
	}

	memset(&outputs, 0, sizeof(outputs));
	outputs.rel = rel;
	outputs.level = level;
	outputs.window_us = window_us;
	outputs.st = st;

	wc_throttle_begin();
	if (window_us == 0)
	{
		written = merge_pass(&p, &outputs);
		outputs_finish(&outputs);
	}
	else
	{
		int			nwin;
		int64	   *windows = input_windows(&p, &nwin);

		for (int first = 0; first < nwin; first += WC_MAX_OPEN_WINDOWS)
		{
			p.windows = windows + first;
			p.nwindows = Min(WC_MAX_OPEN_WINDOWS, nwin - first);
			written += merge_pass(&p, &outputs);
			outputs_finish(&outputs);
		}
	}
	wc_meta_read(rel, &meta);
	wc_manifest_drop_runs(meta.storage_id, run_ids, nin);

	ereport(DEBUG1,
			(errmsg("widecol: compacted %d runs of \"%s\" into %d: %lld versions kept, %lld shadowed or aborted dropped, %lld tombstones and %lld expired rows purged",
					nin, RelationGetRelationName(rel), st->runs_out, (long long) written,
					(long long) st->shadowed_dropped, (long long) st->tombstones_purged,
					(long long) st->expired_purged)));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return written;
}
