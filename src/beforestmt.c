/*
 * beforestmt.c — reading a table as it was before the statement that last
 * wrote it.
 *
 * An INSERT of an existing key replaces the row without reading it, so the
 * statement triggers that keep query tables and daily counts in step get no
 * OLD rows for it.  They ask for them here: every write notes its table's
 * command id, and between _read_before_statement(base) and
 * _read_before_statement_end() reads of `base` use the snapshot with that
 * command id, which hides the statement's own versions and shows the ones
 * they replaced.  See "Upserts" under Query tables in src/README.md.
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "widecol.h"

typedef struct WriteCid
{
	Oid			relid;			/* hash key */
	CommandId	cid;
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

/* Note that `rel` is written by command `cid` (called for every version). */
void
wc_note_write(Relation rel, CommandId cid)
{
	Oid			relid = RelationGetRelid(rel);
	WriteCid   *w;

	if (relid == last_relid && cid == last_cid)
		return;
	if (write_cids == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(WriteCid);
		ctl.hcxt = TopTransactionContext;
		write_cids = hash_create("widecol write command ids", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	w = hash_search(write_cids, &relid, HASH_ENTER, NULL);
	w->cid = cid;
	last_relid = relid;
	last_cid = cid;
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

PG_FUNCTION_INFO_V1(widecol_read_before_statement);
Datum
widecol_read_before_statement(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	WriteCid   *w = write_cids ? hash_search(write_cids, &relid, HASH_FIND, NULL) : NULL;
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	ReadBefore *rb = palloc(sizeof(ReadBefore));

	rb->relid = relid;
	/* not written in this transaction: nothing of ours to hide */
	rb->cid = w ? w->cid : InvalidCommandId;
	rb->subid = GetCurrentSubTransactionId();
	read_before = lcons(rb, read_before);
	MemoryContextSwitchTo(old);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(widecol_read_before_statement_end);
Datum
widecol_read_before_statement_end(PG_FUNCTION_ARGS)
{
	if (read_before != NIL)
		read_before = list_delete_first(read_before);
	PG_RETURN_VOID();
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			/* the memory went with TopTransactionContext */
			write_cids = NULL;
			last_relid = InvalidOid;
			last_cid = InvalidCommandId;
			read_before = NIL;
			break;
		default:
			break;
	}
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
