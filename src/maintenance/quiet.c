/*
 * quiet.c — has a table stopped taking writes?  The idle merge's trigger.
 *
 * Size-tiered compaction leaves a table that stops taking writes with the
 * runs its last tiers held (up to min_threshold - 1 per tier), and every
 * point read probes each of them for as long as the table stays as it is.
 * Once a table has been quiet for widecol.idle_compaction_delay, the
 * strategy merges its smaller runs (strategy.c, "idle").
 *
 * "Quiet" is not judged by the rows' write times: a client may give those
 * (widecol.write_time), and an ingest replaying last year's data would look
 * idle.  Each worker pass instead notes, after its flush, what the table
 * has taken in: the bytes flushes and bulk writes put into runs (a
 * metapage counter), the newest range tombstone and the table's storage (a
 * TRUNCATE starts a new one).  When that is what the last pass noted, the
 * table took no write in between; the time of the last change is kept
 * here.  Workers are short-lived, so this lives in shared memory; a
 * restart forgets it, and a table counts as quiet again one delay after
 * the first pass that sees it.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/maintenance.h"
#include "storage/metapage.h"

#define QUIET_SLOTS 1024

/* What a table has taken in; unchanged between two passes: no write. */
typedef struct WcIntake
{
	uint64		storage_id;
	int64		bytes_ingested; /* by flushes and bulk writes */
	uint64		newest_range_tombstone;
} WcIntake;

typedef struct QuietEntry
{
	Oid			db;
	Oid			rel;			/* InvalidOid: free */
	WcIntake	intake;			/* as the last pass saw it */
	TimestampTz changed;		/* when a pass first saw it so */
} QuietEntry;

typedef struct QuietShared
{
	slock_t		mutex;
	QuietEntry	e[QUIET_SLOTS];
} QuietShared;

static QuietShared *quiet = NULL;

/* seconds without writes before the idle merge; 0 = never (widecol.c) */
int			wc_idle_compaction_delay_s = 60;

Size
wc_quiet_shmem_size(void)
{
	return MAXALIGN(sizeof(QuietShared));
}

/* Called with AddinShmemInitLock held. */
void
wc_quiet_shmem_startup(void)
{
	bool		found;

	quiet = ShmemInitStruct("widecol quiet tables", sizeof(QuietShared), &found);
	if (!found)
	{
		SpinLockInit(&quiet->mutex);
		memset(quiet->e, 0, sizeof(quiet->e));
	}
}

/*
 * The entry of a table; when create and it has none, a free one or else
 * the one unchanged longest (a dropped table's, most likely).  Mutex held.
 */
static QuietEntry *
find(Oid relid, bool create)
{
	QuietEntry *spare = NULL;

	for (int i = 0; i < QUIET_SLOTS; i++)
	{
		QuietEntry *e = &quiet->e[i];

		if (e->rel == relid && e->db == MyDatabaseId)
			return e;
		if (spare == NULL || (spare->rel != InvalidOid &&
							  (e->rel == InvalidOid || e->changed < spare->changed)))
			spare = e;
	}
	if (!create)
		return NULL;
	spare->db = MyDatabaseId;
	spare->rel = relid;
	spare->changed = 0;
	memset(&spare->intake, 0, sizeof(spare->intake));
	return spare;
}

static bool
long_enough(TimestampTz changed, TimestampTz now)
{
	return wc_idle_compaction_delay_s > 0 &&
		now - changed >= (int64) wc_idle_compaction_delay_s * USECS_PER_SEC;
}

/* What a table has taken in, from its metapage and manifest. */
static void
intake_of(const WcMetaData *meta, const WcManifest *m, WcIntake *intake)
{
	memset(intake, 0, sizeof(WcIntake));
	intake->storage_id = meta->storage_id;
	intake->bytes_ingested = meta->bytes_ingested;
	for (int i = 0; i < m->nrts; i++)
		intake->newest_range_tombstone = Max(intake->newest_range_tombstone, m->rts[i].id);
}

/*
 * Has the table (its metapage and manifest as read after a flush) taken
 * no write for widecol.idle_compaction_delay?  `note`: a worker's pass,
 * which records what the table has taken in when it changed; others
 * (widecol.compact, the stats) only ask how the workers last saw it.
 */
bool
wc_table_quiet(Oid relid, const WcMetaData *meta, const WcManifest *m, bool note)
{
	TimestampTz now = GetCurrentTimestamp();
	WcIntake	intake;
	QuietEntry *e;
	bool		result = false;

	if (quiet == NULL)
		return false;
	intake_of(meta, m, &intake);
	SpinLockAcquire(&quiet->mutex);
	e = find(relid, note);
	if (e && e->changed != 0 && memcmp(&e->intake, &intake, sizeof(WcIntake)) == 0)
		result = long_enough(e->changed, now);
	else if (note)
	{
		e->intake = intake;
		e->changed = now;
	}
	SpinLockRelease(&quiet->mutex);
	return result;
}
