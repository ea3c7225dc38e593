/*
 * stats.c — read-time counters per table, in shared memory.
 *
 * Bloom filter checks, rejections and false positives are only known while
 * reading, in whichever backend reads; Cassandra's `nodetool tablestats`
 * shows them, and so does widecol.table_stats().  They live in a small
 * shared hash keyed by (database, storage id), updated once per merge
 * iterator, and like Cassandra's they start from zero when the server
 * starts.  A full hash (more than WC_STATS_MAX_TABLES tables read since the
 * start) stops counting new tables rather than failing reads.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "widecol.h"
#include "storage/stats.h"

#define WC_STATS_MAX_TABLES 4096

typedef struct WcStatsKey
{
	Oid			dbid;
	uint64		storage_id;
} WcStatsKey;

typedef struct WcStatsEntry
{
	WcStatsKey	key;
	pg_atomic_uint64 bloom_checks;
	pg_atomic_uint64 bloom_negatives;
	pg_atomic_uint64 bloom_false_positives;
} WcStatsEntry;

static HTAB *wc_stats_hash = NULL;
static LWLock *wc_stats_lock = NULL;

void
wc_stats_shmem_request(void)
{
	RequestAddinShmemSpace(hash_estimate_size(WC_STATS_MAX_TABLES, sizeof(WcStatsEntry)));
	RequestNamedLWLockTranche("widecol stats", 1);
}

/* Called with AddinShmemInitLock held. */
void
wc_stats_shmem_startup(void)
{
	HASHCTL		info;

	info.keysize = sizeof(WcStatsKey);
	info.entrysize = sizeof(WcStatsEntry);
	wc_stats_hash = ShmemInitHash("widecol stats", WC_STATS_MAX_TABLES, WC_STATS_MAX_TABLES,
								  &info, HASH_ELEM | HASH_BLOBS);
	wc_stats_lock = &(GetNamedLWLockTranche("widecol stats"))->lock;
}

static WcStatsEntry *
find_entry(uint64 storage_id, bool create)
{
	WcStatsKey	key;
	WcStatsEntry *e;
	bool		found;

	if (wc_stats_hash == NULL)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.storage_id = storage_id;
	LWLockAcquire(wc_stats_lock, LW_SHARED);
	e = hash_search(wc_stats_hash, &key, HASH_FIND, NULL);
	LWLockRelease(wc_stats_lock);
	if (e || !create)
		return e;
	LWLockAcquire(wc_stats_lock, LW_EXCLUSIVE);
	e = hash_search(wc_stats_hash, &key, HASH_ENTER_NULL, &found);
	if (e && !found)
	{
		pg_atomic_init_u64(&e->bloom_checks, 0);
		pg_atomic_init_u64(&e->bloom_negatives, 0);
		pg_atomic_init_u64(&e->bloom_false_positives, 0);
	}
	LWLockRelease(wc_stats_lock);
	return e;
}

/* Add one read's bloom filter outcomes. */
void
wc_stats_count_bloom(uint64 storage_id, int64 checks, int64 negatives, int64 false_positives)
{
	WcStatsEntry *e;

	if (checks == 0)
		return;
	e = find_entry(storage_id, true);
	if (e == NULL)
		return;
	pg_atomic_fetch_add_u64(&e->bloom_checks, checks);
	pg_atomic_fetch_add_u64(&e->bloom_negatives, negatives);
	pg_atomic_fetch_add_u64(&e->bloom_false_positives, false_positives);
}

void
wc_stats_read(uint64 storage_id, int64 *checks, int64 *negatives, int64 *false_positives)
{
	WcStatsEntry *e = find_entry(storage_id, false);

	*checks = e ? (int64) pg_atomic_read_u64(&e->bloom_checks) : 0;
	*negatives = e ? (int64) pg_atomic_read_u64(&e->bloom_negatives) : 0;
	*false_positives = e ? (int64) pg_atomic_read_u64(&e->bloom_false_positives) : 0;
}
