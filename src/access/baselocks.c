/*
 * baselocks.c — writers of one key of a base table serialise.
 *
 * The triggers that keep query tables and daily counts in step learn what
 * an INSERT replaced by looking its keys up once the statement is done
 * (beforestmt.c).  That is exact only if no other transaction writes those
 * keys between that lookup and commit, and if every earlier writer of them
 * has committed or aborted: otherwise two replays of one image both find
 * "no image yet" and both count it, or two moves of one image to different
 * devices both delete only the old device's rows.  So on a table whose
 * INSERT triggers take a transition table, every write of a key (INSERT,
 * COPY, UPDATE, DELETE) holds until its transaction ends an exclusive lock
 * on (relation, key hash), the tag UPDATE and DELETE already take briefly
 * (conflict.c).  A statement that writes more keys than half of
 * max_locks_per_transaction takes one relation-wide lock instead, so COPY
 * does not fill the lock table: single-key writers hold the relation-wide
 * tag in RowExclusiveLock (no conflict among themselves), a bulk writer in
 * ExclusiveLock (conflicting with both).  See "Concurrent writers of a
 * base" in src/README.md.
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/cache.h"
#include "storage/tableinfo.h"

typedef struct BaseLockState
{
	Oid			relid;			/* hash key */
	int			nkeys;			/* key locks taken in this transaction */
	SubTransactionId bulk_subid;	/* holds the relation-wide lock since; 0: no */
} BaseLockState;

static HTAB *base_locks = NULL; /* this transaction's, TopTransactionContext */

/*
 * Does a write of rel need the key lock?  Its INSERTs have derived data, and
 * it has keys (a keyless table's INSERTs never replace a row).
 */
bool
wc_base_has_derived(Relation rel)
{
	return rel->trigdesc != NULL && rel->trigdesc->trig_insert_new_table &&
		!WcTableIsKeyless(wc_table_info(rel));
}

/* The relation-wide tag: offset 0 is never a key's (key_locktag sets bit 0). */
static void
relation_locktag(Relation rel, LOCKTAG *tag)
{
	SET_LOCKTAG_TUPLE(*tag, MyDatabaseId, RelationGetRelid(rel), InvalidBlockNumber, 0);
}

static BaseLockState *
lock_state(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	bool		found;
	BaseLockState *s = wc_hash_enter(&base_locks, "widecol base key locks",
									 sizeof(Oid), sizeof(BaseLockState),
									 TopTransactionContext, &relid, &found);

	if (!found)
	{
		s->nkeys = 0;
		s->bulk_subid = InvalidSubTransactionId;
	}
	return s;
}

/*
 * Before writing a version of `key` into a base with derived data: lock the
 * key until the transaction ends (waiting for the transaction that holds
 * it), or the whole relation once this transaction has locked many keys.
 */
void
wc_base_lock_key(Relation rel, const char *key, int keylen)
{
	BaseLockState *s;
	LOCKTAG		tag;

	if (!wc_base_has_derived(rel))
		return;
	s = lock_state(rel);
	if (s->bulk_subid != InvalidSubTransactionId)
		return;
	relation_locktag(rel, &tag);
	if (s->nkeys >= Max(max_locks_per_xact / 2, 1))
	{
		LockAcquire(&tag, ExclusiveLock, false, false);
		s->bulk_subid = GetCurrentSubTransactionId();
		return;
	}
	/* every time: one taken in an aborted subtransaction is gone */
	LockAcquire(&tag, RowExclusiveLock, false, false);
	wc_key_locktag(rel, key, keylen, &tag);
	if (LockAcquire(&tag, ExclusiveLock, false, false) != LOCKACQUIRE_ALREADY_HELD)
		s->nkeys++;
}

/*
 * Locks taken in an aborted subtransaction are gone: forget that the
 * relation-wide one is held, and count key locks again from zero (the count
 * only bounds the lock table's use).
 */
static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS seq;
	BaseLockState *s;

	if (base_locks == NULL)
		return;
	hash_seq_init(&seq, base_locks);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		if (s->bulk_subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			s->bulk_subid = InvalidSubTransactionId;
			s->nkeys = 0;
		}
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			s->bulk_subid = parentSubid;
	}
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (wc_xact_ended(event))
		base_locks = NULL;		/* went with TopTransactionContext */
}

void
wc_baselocks_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
