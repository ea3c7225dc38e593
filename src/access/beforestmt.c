/*
 * beforestmt.c — reading a table as it was before the statement that last
 * wrote it.
 *
 * An INSERT of an existing key replaces the row without reading it, so the
 * statement triggers that keep query tables and daily counts in step get no
 * OLD rows for it.  They ask for them here.  Every write notes its table's
 * command id; an INSERT into a table with transition-table triggers also
 * records its keys, which _replaced_rows() looks up once per statement
 * with the snapshot stopped at that command id: the statement's own
 * versions are hidden, the ones they replaced visible.  For an UPDATE
 * (whose moved rows may replace others) the triggers read the base itself
 * between _read_before_statement(base) and _read_before_statement_end(),
 * during which the scans and seeks over it use that snapshot (the SQL
 * functions are in api/querytable.c).  See "Upserts"
 * under Query tables in src/README.md.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/cache.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

#define KEY_CHUNK_SIZE (64 * 1024 * 1024)

typedef struct WriteCid
{
	Oid			relid;			/* hash key */
	CommandId	cid;
	/* keys inserted by command keys_cid (tables with INSERT transition tables) */
	CommandId	keys_cid;
	List	   *keys;			/* StringInfos of (uint16 keylen, uint16 pklen, key)... */
	int64		nkeys;
	/* the versions those keys replaced, once looked up */
	CommandId	replaced_cid;
	List	   *replaced;		/* HeapTuples, in TopTransactionContext */
	bool		repeated;		/* some key was inserted twice */
} WriteCid;

typedef struct ReadBefore
{
	Oid			relid;
	CommandId	cid;
	SubTransactionId subid;
} ReadBefore;

static HTAB *write_cids = NULL; /* this transaction's writes */
static Oid	last_relid = InvalidOid;
static CommandId last_cid = InvalidCommandId;
static List *read_before = NIL; /* stack, in TopTransactionContext */

static WriteCid *
write_entry(Oid relid)
{
	bool		found;
	WriteCid   *w = wc_hash_enter(&write_cids, "widecol write command ids",
								  sizeof(Oid), sizeof(WriteCid),
								  TopTransactionContext, &relid, &found);

	if (!found)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		w->keys_cid = InvalidCommandId;
		w->keys = NIL;
		w->nkeys = 0;
		w->replaced_cid = InvalidCommandId;
		w->replaced = NIL;
		MemoryContextSwitchTo(old);
	}
	return w;
}

/* Note that `rel` is written by command `cid` (called for every version). */
void
wc_note_write(Relation rel, CommandId cid)
{
	Oid			relid = RelationGetRelid(rel);

	if (relid == last_relid && cid == last_cid)
		return;
	write_entry(relid)->cid = cid;
	last_relid = relid;
	last_cid = cid;
}

/*
 * Remember the key of a row INSERTed by command `cid` into a table whose
 * AFTER INSERT triggers take a transition table (query tables, counts):
 * _replaced_rows() looks the keys up once the statement is done.
 */
void
wc_note_inserted_key(Relation rel, const char *key, int keylen, int pklen, CommandId cid)
{
	WriteCid   *w;
	uint16		lens[2];

	if (rel->trigdesc == NULL || !rel->trigdesc->trig_insert_new_table)
		return;
	w = write_entry(RelationGetRelid(rel));
	if (w->keys_cid != cid)
	{
		/* an earlier statement's: keep one chunk, reset */
		while (list_length(w->keys) > 1)
		{
			StringInfo	chunk = llast(w->keys);

			pfree(chunk->data);
			pfree(chunk);
			w->keys = list_delete_last(w->keys);
		}
		if (w->keys != NIL)
			resetStringInfo(linitial(w->keys));
		w->nkeys = 0;
		w->keys_cid = cid;
	}
	/* chunks of at most 64MB: a StringInfo stops at 1GB */
	if (w->keys == NIL ||
		((StringInfo) llast(w->keys))->len + sizeof(lens) + keylen > KEY_CHUNK_SIZE)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		w->keys = lappend(w->keys, makeStringInfo());
		MemoryContextSwitchTo(old);
	}
	lens[0] = keylen;
	lens[1] = pklen;
	appendBinaryStringInfo(llast(w->keys), (char *) lens, sizeof(lens));
	appendBinaryStringInfo(llast(w->keys), key, keylen);
	w->nkeys++;
}

static int
keyref_cmp(const void *a, const void *b)
{
	const WcKeyRef *x = a;
	const WcKeyRef *y = b;

	return wc_compare_keys(x->key, x->keylen, y->key, y->keylen);
}

/*
 * Look up, as of before command keys_cid, the versions of the keys it
 * inserted: one merge per distinct key over a manifest read once.
 */
static List *
lookup_replaced(Relation rel, WriteCid *w, bool *repeated)
{
	WcKeyRef	   *refs = palloc_extended(sizeof(WcKeyRef) * Max(w->nkeys, 1), MCXT_ALLOC_HUGE);
	Snapshot	snap = palloc(sizeof(SnapshotData));
	Snapshot	xact_snap = NULL;
	WcMetaData	meta;
	WcManifest *m;
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	List	   *result = NIL;
	int64		n = 0;
	int64		ndistinct;
	bool	   *maybe;
	ListCell   *lc;

	foreach(lc, w->keys)
	{
		StringInfo	chunk = lfirst(lc);
		const char *p = chunk->data;

		while (p < chunk->data + chunk->len && n < w->nkeys)
		{
			uint16		lens[2];

			memcpy(lens, p, sizeof(lens));
			refs[n].keylen = lens[0];
			refs[n].pklen = lens[1];
			refs[n++].key = p + sizeof(lens);
			p += sizeof(lens) + lens[0];
		}
	}
	qsort(refs, w->nkeys, sizeof(WcKeyRef), keyref_cmp);
	*repeated = false;

	/*
	 * The newest committed versions, not those of the statement's snapshot:
	 * the keys are locked (baselocks.c), so every other writer of them has
	 * ended, and what it wrote is what this statement replaced.  Ours are
	 * seen up to the statement.  REPEATABLE READ cannot apply a change to a
	 * version its snapshot does not see (the derived rows to delete are
	 * invisible to it): a serialization failure, as for heap's ON CONFLICT.
	 */
	PushCopiedSnapshot(GetLatestSnapshot());
	memcpy(snap, GetActiveSnapshot(), sizeof(SnapshotData));
	if (snap->curcid > w->keys_cid)
		snap->curcid = w->keys_cid;
	if (IsolationUsesXactSnapshot())
	{
		xact_snap = palloc(sizeof(SnapshotData));
		memcpy(xact_snap, GetTransactionSnapshot(), sizeof(SnapshotData));
		if (xact_snap->curcid > w->keys_cid)
			xact_snap->curcid = w->keys_cid;
	}
	/* the manifest before the statement: the runs it wrote are not in it */
	wc_merge_read_manifest(rel, snap, &meta, &m);

	/* distinct keys; then which of them may exist (most new keys may not) */
	ndistinct = 0;
	for (int64 i = 0; i < w->nkeys; i++)
	{
		if (i > 0 && keyref_cmp(&refs[i - 1], &refs[i]) == 0)
			*repeated = true;
		else
			refs[ndistinct++] = refs[i];
	}
	maybe = palloc_extended(sizeof(bool) * Max(ndistinct, 1), MCXT_ALLOC_HUGE);
	wc_keys_may_exist(rel, &meta, m, snap, ndistinct, refs, maybe);
	for (int64 i = 0; i < ndistinct; i++)
	{
		WcMergeRange range = {.lo = refs[i].key, .lolen = refs[i].keylen,
		.hi = refs[i].key, .hilen = refs[i].keylen, .bloom_pklen = refs[i].pklen};
		WcMergeIter *it;
		WcRowHeader *row;
		ItemPointerData tid;

		if (!maybe[i])
			continue;
		CHECK_FOR_INTERRUPTS();
		it = wc_merge_begin_with(rel, snap, &meta, m, &range);
		wc_merge_return_dead(it);
		row = wc_merge_next(it, &tid);
		if (row && xact_snap && !wc_version_visible(row, xact_snap))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update"),
					 errdetail("A row of \"%s\" that this INSERT replaces was written by a transaction that committed after this one's snapshot.",
							   RelationGetRelationName(rel)),
					 errhint("Retry the transaction.")));
		if (row && !wc_row_is_dead(row, wc_now()))
		{
			MemoryContext old;

			wc_store_row(slot, rel, row, &tid);
			old = MemoryContextSwitchTo(TopTransactionContext);
			result = lappend(result, ExecCopySlotHeapTuple(slot));
			MemoryContextSwitchTo(old);
		}
		wc_merge_end(it);
	}
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	return result;
}

/*
 * The keys the last INSERT into widecol table relid wrote, looked up once
 * per statement (whichever trigger asks first); NULL if none.
 */
static WriteCid *
inserted_keys(Oid relid)
{
	WriteCid   *w;

	if (!wc_relation_is_widecol(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("relation %u is not a widecol table", relid),
				 errhint("These functions serve the triggers of query tables on widecol tables.")));
	w = write_cids ? hash_search(write_cids, &relid, HASH_FIND, NULL) : NULL;
	if (w == NULL || w->keys_cid == InvalidCommandId || w->nkeys == 0)
		return NULL;
	if (w->replaced_cid != w->keys_cid)
	{
		Relation	rel = table_open(relid, AccessShareLock);

		w->replaced = lookup_replaced(rel, w, &w->repeated);
		w->replaced_cid = w->keys_cid;
		table_close(rel, AccessShareLock);
	}
	return w;
}

/*
 * The rows of widecol table relid that the statement which last INSERTed
 * into it replaced (their keys existed), as they were before it: HeapTuples
 * in the transaction's memory.  For the statement triggers of query tables
 * and daily counts, which get no OLD rows for an INSERT; ask only when the
 * statement's NEW TABLE is not empty (else the keys are an older one's).
 */
List *
wc_replaced_rows(Oid relid)
{
	WriteCid   *w = inserted_keys(relid);

	return w ? w->replaced : NIL;
}

/* Did the statement that last INSERTed into relid write some key twice? */
bool
wc_inserted_keys_repeated(Oid relid)
{
	WriteCid   *w = inserted_keys(relid);

	return w != NULL && w->repeated;
}

/*
 * The snapshot a read of `rel` uses: `snapshot`, or inside
 * _read_before_statement(rel) a copy (in `cxt`) that stops before the
 * command that last wrote rel.
 */
Snapshot
wc_snapshot_for_read(Relation rel, Snapshot snapshot, MemoryContext cxt)
{
	ListCell   *lc;

	if (read_before == NIL || !IsMVCCSnapshot(snapshot))
		return snapshot;
	foreach(lc, read_before)
	{
		ReadBefore *rb = lfirst(lc);
		Snapshot	copy;

		if (rb->relid != RelationGetRelid(rel) || rb->cid == InvalidCommandId ||
			snapshot->curcid <= rb->cid)
			continue;
		copy = MemoryContextAlloc(cxt, sizeof(SnapshotData));
		memcpy(copy, snapshot, sizeof(SnapshotData));
		copy->curcid = rb->cid;
		return copy;
	}
	return snapshot;
}

/*
 * Until wc_read_before_end, reads of relid (MVCC) see it as it was before
 * the command of this transaction that last wrote it.
 */
void
wc_read_before_begin(Oid relid)
{
	WriteCid   *w = write_cids ? hash_search(write_cids, &relid, HASH_FIND, NULL) : NULL;
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	ReadBefore *rb = palloc(sizeof(ReadBefore));

	rb->relid = relid;
	/* not written in this transaction: nothing of ours to hide */
	rb->cid = w ? w->cid : InvalidCommandId;
	rb->subid = GetCurrentSubTransactionId();
	read_before = lcons(rb, read_before);
	MemoryContextSwitchTo(old);
}

void
wc_read_before_end(void)
{
	if (read_before != NIL)
		read_before = list_delete_first(read_before);
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (!wc_xact_ended(event))
		return;
	/* the memory went with TopTransactionContext */
	write_cids = NULL;
	last_relid = InvalidOid;
	last_cid = InvalidCommandId;
	read_before = NIL;
}

/* An error caught by a savepoint ends the reads begun inside it. */
static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	foreach(lc, read_before)
	{
		ReadBefore *rb = lfirst(lc);

		if (rb->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
			read_before = foreach_delete_current(read_before, lc);
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			rb->subid = parentSubid;
	}
}

void
wc_beforestmt_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
