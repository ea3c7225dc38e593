/*
 * conflict.c — write-write conflicts of UPDATE and DELETE, and tuple_lock.
 *
 * UPDATE and DELETE read the row before writing, so they keep PostgreSQL's
 * guarantees (see "Write conflicts" in src/README.md): before writing, the
 * newest version of the key that is committed or in progress (a dirty read)
 * must be the version the statement read.  If another transaction's write is
 * in progress, wait for it; if a newer committed version exists, report
 * TM_Updated (TM_Deleted for a tombstone) so that the executor re-checks the
 * newest version (EvalPlanQual) in READ COMMITTED or raises a serialization
 * error in REPEATABLE READ.  A short heavyweight lock on (relation, key
 * hash) makes check-and-write atomic among such writers; the version written
 * then marks the key for later writers, as heap's xmax does.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/merge.h"
#include "storage/row.h"

void
wc_key_locktag(Relation rel, const char *key, int keylen, LOCKTAG *tag)
{
	uint32		h = hash_bytes((const unsigned char *) key, keylen);

	/* a tuple lock tag on our relation: collisions only cost a wait */
	SET_LOCKTAG_TUPLE(*tag, MyDatabaseId, RelationGetRelid(rel), h, (h >> 16) | 1);
}

void
wc_key_unlock(LOCKTAG *tag)
{
	LockRelease(tag, ExclusiveLock, false);
}

/*
 * Check that `old` (read at otid) is still the newest version of its key.
 * On TM_Ok the key lock is held (release with wc_key_unlock after writing).
 */
TM_Result
wc_check_write_conflict(Relation rel, WcRowHeader *old, ItemPointer otid,
						CommandId cid, bool wait, TM_FailureData *tmfd,
						bool moved_here, LOCKTAG *tag)
{
	/* a base with derived data: the key stays locked to the end (baselocks.c) */
	wc_base_lock_key(rel, WcRowKey(old), old->keylen);
	wc_key_locktag(rel, WcRowKey(old), old->keylen, tag);
	for (;;)
	{
		SnapshotData dirty;
		ItemPointerData ntid;
		WcRowHeader *newest;

		LockAcquire(tag, ExclusiveLock, false, false);
		InitDirtySnapshot(dirty);
		newest = wc_lookup_key(rel, &dirty, WcRowKey(old), old->keylen, old->pklen,
							   true, &ntid);
		/* same version (a flush may have moved it: compare identity, not TID) */
		if (newest == NULL || wc_same_version(newest, old))
			return TM_Ok;
		if (TransactionIdIsCurrentTransactionId(newest->xid))
		{
			/* the command moved another row onto this key: not this row's version */
			if (moved_here && newest->cid == cid)
				return TM_Ok;
			wc_key_unlock(tag);
			tmfd->ctid = ntid;
			tmfd->xmax = newest->xid;
			tmfd->cmax = newest->cid;
			return TM_SelfModified;
		}
		if (TransactionIdIsInProgress(newest->xid))
		{
			wc_key_unlock(tag);
			if (!wait)
			{
				tmfd->ctid = ntid;
				tmfd->xmax = newest->xid;
				tmfd->cmax = InvalidCommandId;
				return TM_BeingModified;
			}
			XactLockTableWait(newest->xid, rel, otid, XLTW_Update);
			continue;
		}
		/* a newer committed version that this statement did not see */
		wc_key_unlock(tag);
		tmfd->ctid = ntid;
		tmfd->xmax = newest->xid;
		tmfd->cmax = InvalidCommandId;
		tmfd->traversed = false;
		return wc_row_is_dead(newest, wc_now()) ? TM_Deleted : TM_Updated;
	}
}

/*
 * tuple_lock: used by SELECT ... FOR UPDATE/SHARE, by EvalPlanQual (READ
 * COMMITTED re-check after TM_Updated, with TUPLE_LOCK_FLAG_FIND_LAST_VERSION)
 * and by BEFORE ROW triggers.  It returns the newest committed version of the
 * key, waiting for in-progress writers.  Only explicit row locks keep a lock
 * (see below): for the others the following UPDATE re-checks.
 */
TM_Result
wc_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			  LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	WcRowHeader *old = wc_fetch_version(rel, tid);

	tmfd->traversed = false;
	tmfd->cmax = InvalidCommandId;
	if (old == NULL)
	{
		tmfd->ctid = *tid;
		tmfd->xmax = InvalidTransactionId;
		return TM_Deleted;
	}

	/*
	 * SELECT ... FOR UPDATE/SHARE (ExecLockRows is the caller that asks to
	 * lock in-progress updates): hold the key lock until the transaction
	 * ends, in share mode for FOR [KEY] SHARE; UPDATE and DELETE take the
	 * same lock exclusively before they write, so they wait for it.
	 */
	if (flags & TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS)
	{
		LOCKTAG		tag;
		LOCKMODE	lm = (mode == LockTupleExclusive || mode == LockTupleNoKeyExclusive) ?
			ExclusiveLock : ShareLock;

		/* past widecol.row_lock_escalation row locks, a table lock covers them (rowlocks.c) */
		if (!wc_row_lock_covered(rel, lm, wait_policy))
		{
			wc_key_locktag(rel, WcRowKey(old), old->keylen, &tag);
			if (LockAcquire(&tag, lm, false, wait_policy != LockWaitBlock) == LOCKACQUIRE_NOT_AVAIL)
			{
				if (wait_policy == LockWaitSkip)
					return TM_WouldBlock;
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			}
		}
	}
	for (;;)
	{
		SnapshotData dirty;
		ItemPointerData ntid;
		WcRowHeader *newest;

		InitDirtySnapshot(dirty);
		newest = wc_lookup_key(rel, &dirty, WcRowKey(old), old->keylen, old->pklen,
							   true, &ntid);
		if (newest == NULL)
		{
			tmfd->ctid = *tid;
			tmfd->xmax = InvalidTransactionId;
			return TM_Deleted;
		}
		if (TransactionIdIsCurrentTransactionId(newest->xid) &&
			!wc_same_version(newest, old) && newest->cid == cid)
		{
			/* this command moved another row onto the key: lock the one we read */
			if (wc_key_moved_here(rel, WcRowKey(old), old->keylen, cid))
			{
				wc_store_row(slot, rel, old, tid);
				return TM_Ok;
			}
			tmfd->ctid = ntid;
			tmfd->xmax = newest->xid;
			tmfd->cmax = newest->cid;
			return TM_SelfModified;
		}
		if (!TransactionIdIsCurrentTransactionId(newest->xid) &&
			TransactionIdIsInProgress(newest->xid))
		{
			if (wait_policy == LockWaitSkip)
				return TM_WouldBlock;
			if (wait_policy == LockWaitError)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			XactLockTableWait(newest->xid, rel, tid, XLTW_Lock);
			continue;
		}
		if (wc_row_is_dead(newest, wc_now()))
		{
			tmfd->ctid = ntid;
			tmfd->xmax = newest->xid;
			return TM_Deleted;
		}
		if (!wc_same_version(newest, old))
		{
			if (!(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
			{
				tmfd->ctid = ntid;
				tmfd->xmax = newest->xid;
				return TM_Updated;
			}
			*tid = ntid;
			tmfd->traversed = true;
		}
		wc_store_row(slot, rel, newest, tid);
		return TM_Ok;
	}
}
