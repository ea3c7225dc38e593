/*
 * pending.c — runs being written, listed in the metapage.
 *
 * A run writer lists its run id and (sub)transaction here before its first
 * page is written (with its 'w' manifest row, see "Page reuse").  If the
 * writer commits, the run is published and the entry only has to go; if
 * it aborts or crashes, the 'w' row dies with it and nothing else knows
 * where the run's pages are: the next maintenance pass finds the entry,
 * looks for pages carrying that run id (wc_reclaim_aborted_runs) and puts
 * them into the free space map.  The list is page content under generic
 * WAL, so it survives crashes and reaches standbys and base backups.  See
 * "Leaked pages" in src/README.md.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"

#include "widecol.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/pending.h"
#include "storage/row.h"

#define WcPageGetMeta(page) ((WcMetaData *) PageGetContents(page))

/* What became of a listed writer. */
WcPendingFate
wc_pending_fate(const WcPendingRun *p)
{
	if (TransactionIdIsCurrentTransactionId(p->xid) || TransactionIdIsInProgress(p->xid))
		return WC_PENDING_WRITING;
	return TransactionIdDidCommit(p->xid) ? WC_PENDING_COMMITTED : WC_PENDING_ABORTED;
}

/*
 * Rewrite the list without the entries `drop` says go.  Called with the
 * metapage locked exclusively; the metapage's pd_lower is raised over the
 * list (metapages written before it existed end earlier, and generic WAL
 * leaves out what lies between pd_lower and pd_upper).
 */
static bool
rewrite_list(Relation rel, Buffer metabuf, bool (*drop) (const WcPendingRun *, void *),
			 void *arg, const WcPendingRun *add)
{
	GenericXLogState *xs = GenericXLogStart(rel);
	Page		page = GenericXLogRegisterBuffer(xs, metabuf, 0);
	WcMetaData *meta = WcPageGetMeta(page);
	uint32		n = 0;
	LocationIndex end = (char *) (meta + 1) - (char *) page;

	for (uint32 i = 0; i < Min(meta->npending, WC_MAX_PENDING_RUNS); i++)
		if (!drop(&meta->pending[i], arg))
			meta->pending[n++] = meta->pending[i];
	if (add && n < WC_MAX_PENDING_RUNS)
		meta->pending[n++] = *add;
	else
		add = NULL;
	meta->npending = n;
	if (((PageHeader) page)->pd_lower < end)
		((PageHeader) page)->pd_lower = end;
	GenericXLogFinish(xs);
	return add != NULL;
}

static bool
drop_committed(const WcPendingRun *p, void *arg)
{
	return wc_pending_fate(p) == WC_PENDING_COMMITTED;
}

/*
 * List a run about to be written by the current (sub)transaction; entries
 * of writers that committed go on the way.  False when the list is full
 * of writers in progress or aborted (the run is then found by VACUUM).
 */
bool
wc_pending_add(Relation rel, uint64 run_id)
{
	Buffer		metabuf = ReadBuffer(rel, WC_META_BLOCK);
	WcPendingRun add = {run_id, GetCurrentTransactionId(), 0};
	bool		listed;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	listed = rewrite_list(rel, metabuf, drop_committed, NULL, &add);
	UnlockReleaseBuffer(metabuf);
	/*
	 * Durable before any page of the run is: data pages go straight to the
	 * file, and after a crash the entry is all that tells where they are.
	 */
	if (listed && RelationNeedsWAL(rel))
		XLogFlush(XactLastRecEnd);
	if (!listed)
		elog(DEBUG1, "widecol: %d runs of \"%s\" being written or lost already; run %llu is not listed",
			 WC_MAX_PENDING_RUNS, RelationGetRelationName(rel), (unsigned long long) run_id);
	return listed;
}

typedef struct DropDone
{
	const uint64 *run_ids;
	int			n;
} DropDone;

static bool
drop_done(const WcPendingRun *p, void *arg)
{
	DropDone   *d = arg;

	for (int i = 0; i < d->n; i++)
		if (d->run_ids[i] == p->run_id)
			return true;
	return wc_pending_fate(p) == WC_PENDING_COMMITTED;
}

/*
 * Forget the listed runs whose pages were found again (and those whose
 * writers committed).
 */
void
wc_pending_forget(Relation rel, const uint64 *run_ids, int n)
{
	Buffer		metabuf = ReadBuffer(rel, WC_META_BLOCK);
	DropDone	d = {run_ids, n};

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	(void) rewrite_list(rel, metabuf, drop_done, &d, NULL);
	UnlockReleaseBuffer(metabuf);
}
