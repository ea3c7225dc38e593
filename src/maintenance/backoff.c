/*
 * backoff.c — a table whose maintenance keeps failing is tried less often.
 *
 * Each failure of a worker's pass over a table doubles the wait before the
 * next attempt: one naptime, two, four, ... up to an hour (or one naptime
 * if that is longer); a pass that succeeds, by a worker or by
 * widecol.compact, clears it.  Retrying every naptime made a compaction
 * that failed for want of disk space take every page an operator freed
 * within seconds.  The state lives in shared memory (workers are
 * short-lived; a restart forgets it, which is a fresh start anyway).
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "maintenance/maintenance.h"

#define BACKOFF_SLOTS	256
#define BACKOFF_MAX_S	3600

typedef struct BackoffEntry
{
	Oid			db;
	Oid			rel;			/* InvalidOid: free */
	int			failures;
	TimestampTz next_try;
} BackoffEntry;

typedef struct BackoffShared
{
	slock_t		mutex;
	BackoffEntry e[BACKOFF_SLOTS];
} BackoffShared;

static BackoffShared *backoff = NULL;

Size
wc_backoff_shmem_size(void)
{
	return MAXALIGN(sizeof(BackoffShared));
}

/* Called with AddinShmemInitLock held. */
void
wc_backoff_shmem_startup(void)
{
	bool		found;

	backoff = ShmemInitStruct("widecol backoff", sizeof(BackoffShared), &found);
	if (!found)
	{
		SpinLockInit(&backoff->mutex);
		memset(backoff->e, 0, sizeof(backoff->e));
	}
}

/* The entry of a table (or a free one, when create); mutex held. */
static BackoffEntry *
find(Oid relid, bool create)
{
	BackoffEntry *free_e = NULL;

	for (int i = 0; i < BACKOFF_SLOTS; i++)
	{
		BackoffEntry *e = &backoff->e[i];

		if (e->rel == relid && e->db == MyDatabaseId)
			return e;
		if (e->rel == InvalidOid && free_e == NULL)
			free_e = e;
	}
	if (create && free_e)
	{
		free_e->db = MyDatabaseId;
		free_e->rel = relid;
		free_e->failures = 0;
		free_e->next_try = 0;
	}
	return create ? free_e : NULL;
}

/* Should a worker leave the table alone now?  *until and *failures say why. */
bool
wc_backoff_active(Oid relid, TimestampTz *until, int *failures)
{
	BackoffEntry *e;
	bool		wait = false;

	if (backoff == NULL)
		return false;
	SpinLockAcquire(&backoff->mutex);
	e = find(relid, false);
	if (e && e->next_try > GetCurrentTimestamp())
	{
		wait = true;
		*until = e->next_try;
		*failures = e->failures;
	}
	SpinLockRelease(&backoff->mutex);
	return wait;
}

/* A pass over the table failed: when may the next one start?  Returns the wait (s). */
int
wc_backoff_failed(Oid relid, int *failures)
{
	BackoffEntry *e;
	int64		wait_s = wc_naptime_s;
	int			n = 1;

	if (backoff == NULL)
		return wc_naptime_s;
	SpinLockAcquire(&backoff->mutex);
	e = find(relid, true);
	if (e)
	{
		n = ++e->failures;
		for (int i = 1; i < n && wait_s < Max(BACKOFF_MAX_S, wc_naptime_s); i++)
			wait_s *= 2;
		wait_s = Min(wait_s, Max(BACKOFF_MAX_S, wc_naptime_s));
		e->next_try = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_s * 1000);
	}
	SpinLockRelease(&backoff->mutex);
	*failures = n;
	return (int) wait_s;
}

/* A pass over the table succeeded. */
void
wc_backoff_clear(Oid relid)
{
	BackoffEntry *e;

	if (backoff == NULL)
		return;
	SpinLockAcquire(&backoff->mutex);
	e = find(relid, false);
	if (e)
		e->rel = InvalidOid;
	SpinLockRelease(&backoff->mutex);
}

/* widecol.maintenance_backoff(): the tables of this database being backed off. */
PG_FUNCTION_INFO_V1(widecol_maintenance_backoff);
Datum
widecol_maintenance_backoff(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BackoffEntry copy[BACKOFF_SLOTS];

	InitMaterializedSRF(fcinfo, 0);
	if (backoff == NULL)
		return (Datum) 0;
	SpinLockAcquire(&backoff->mutex);
	memcpy(copy, backoff->e, sizeof(copy));
	SpinLockRelease(&backoff->mutex);
	for (int i = 0; i < BACKOFF_SLOTS; i++)
	{
		Datum		v[3];
		bool		n[3] = {0};

		if (copy[i].rel == InvalidOid || copy[i].db != MyDatabaseId)
			continue;
		v[0] = ObjectIdGetDatum(copy[i].rel);
		v[1] = Int32GetDatum(copy[i].failures);
		v[2] = TimestampTzGetDatum(copy[i].next_try);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
	}
	return (Datum) 0;
}
