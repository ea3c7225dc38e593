/*
 * rowlocks.c — explicit row locks escalate to a table lock.
 *
 * heap keeps a row lock in the row (xmax), so a transaction may lock any
 * number of rows.  widecol versions are immutable, so SELECT ... FOR
 * UPDATE/SHARE holds a heavyweight lock per row (conflict.c), and the
 * shared lock table (max_locks_per_transaction x max_connections) runs out
 * after some thousands: "out of shared memory".  postgres_fdw hits this on
 * every UPDATE or DELETE it cannot send whole (a WHERE with now(), say): it
 * reads the candidate rows on the shard with SELECT ... FOR UPDATE.
 *
 * So, like SQL Server's lock escalation, once a transaction has taken
 * widecol.row_lock_escalation explicit row locks on one table, the next
 * one locks the table instead: ExclusiveLock for FOR [NO KEY] UPDATE,
 * ShareLock for FOR [KEY] SHARE.  Both conflict with RowExclusiveLock, so
 * no other transaction can write the table (or lock its rows for update)
 * until this one ends, which is what every row lock promised and more;
 * readers are not blocked.  From then on the table lock covers the rows and
 * no more row locks are taken.  With NOWAIT or SKIP LOCKED the table lock
 * is only tried, and rows go on being locked one by one if it is busy.
 * Whether the table lock is held is asked of the lock manager each time,
 * so a rolled-back savepoint that released it is noticed.
 */
#include "postgres.h"

#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "access/access.h"

static int	wc_row_lock_escalation = 1000;

/* row locks taken per table in the current transaction (a few tables) */
#define WC_COUNTED_TABLES 8
static LocalTransactionId counted_lxid = InvalidLocalTransactionId;
static Oid	counted_rel[WC_COUNTED_TABLES];
static int	counted[WC_COUNTED_TABLES];

static int *
counter_for(Oid relid)
{
	int			i;

	if (counted_lxid != MyProc->lxid)
	{
		counted_lxid = MyProc->lxid;
		memset(counted_rel, 0, sizeof(counted_rel));
	}
	for (i = 0; i < WC_COUNTED_TABLES && OidIsValid(counted_rel[i]); i++)
		if (counted_rel[i] == relid)
			return &counted[i];
	if (i == WC_COUNTED_TABLES)
		i = relid % WC_COUNTED_TABLES;	/* full: share a slot (escalates earlier) */
	else
		counted[i] = 0;
	counted_rel[i] = relid;
	return &counted[i];
}

/*
 * Before an explicit row lock in mode rowmode (ExclusiveLock or ShareLock):
 * true if the table is, or now gets, locked in a mode that covers it.
 */
bool
wc_row_lock_covered(Relation rel, LOCKMODE rowmode, LockWaitPolicy wait_policy)
{
	int		   *n;

	if (CheckRelationLockedByMe(rel, rowmode, true))
		return true;
	if (wc_row_lock_escalation <= 0)
		return false;
	n = counter_for(RelationGetRelid(rel));
	if (++*n <= wc_row_lock_escalation)
		return false;
	if (wait_policy == LockWaitBlock)
	{
		LockRelation(rel, rowmode);
		return true;
	}
	return ConditionalLockRelation(rel, rowmode);
}

void
wc_install_row_lock_escalation(void)
{
	DefineCustomIntVariable("widecol.row_lock_escalation",
							"A transaction that has locked this many rows of a widecol table with FOR UPDATE/SHARE locks the table instead (0 = never).",
							"Each row lock takes an entry of the shared lock table; the table lock blocks other writers of the table until the transaction ends.",
							&wc_row_lock_escalation, 1000, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
}
