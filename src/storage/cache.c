/*
 * cache.c — the backend's caches (storage/cache.h): a hash table of
 * entries on an LRU list, with a byte limit, and the readers' buffer pool.
 *
 * Entries are dynahash entries laid out as [key][header][owner's entry];
 * dynahash never moves an entry, so the owner may keep pointers to its
 * entry until the cache drops it.
 */
#include "postgres.h"

#include "lib/ilist.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "storage/cache.h"

typedef struct CacheHdr
{
	dlist_node	lru;			/* most recently used at the head */
	Size		bytes;
} CacheHdr;

struct WcCache
{
	const char *name;
	HTAB	   *table;
	MemoryContext cxt;
	Size		keysize;		/* MAXALIGNed */
	Size		entrysize;		/* the owner's part */
	const int  *limit_kb;		/* a setting, or NULL */
	Size		limit_bytes;	/* when limit_kb is NULL */
	WcCacheRelease release;
	dlist_head	lru;
	Size		bytes;
	int64		entries;
	int64		hits;
	int64		misses;
	int64		evictions;
};

#define MAX_CACHES 8
static WcCache *caches[MAX_CACHES];
static int	ncaches = 0;
static MemoryContext caches_cxt = NULL;

#define HdrOf(c, entry) ((CacheHdr *) ((char *) (entry) - MAXALIGN(sizeof(CacheHdr))))
#define EntryOf(c, hashentry) ((char *) (hashentry) + (c)->keysize + MAXALIGN(sizeof(CacheHdr)))
#define HashEntryOf(c, entry) ((char *) HdrOf(c, entry) - (c)->keysize)

static MemoryContext
caches_memory(void)
{
	if (caches_cxt == NULL)
		caches_cxt = AllocSetContextCreate(TopMemoryContext, "widecol backend caches",
										   ALLOCSET_DEFAULT_SIZES);
	return caches_cxt;
}

/* A plain dynahash table keyed by bytes (HASH_BLOBS), living in cxt. */
HTAB *
wc_hash_create(const char *name, long nelem, Size keysize, Size entrysize,
			   MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, nelem, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * The entry for key in *table (HASH_ENTER; *found says whether it was
 * there), making the table in cxt if *table is NULL: the tables a backend
 * keeps for a transaction or for good, reset by their owner's callbacks.
 */
void *
wc_hash_enter(HTAB **table, const char *name, Size keysize, Size entrysize,
			  MemoryContext cxt, const void *key, bool *found)
{
	if (*table == NULL)
		*table = wc_hash_create(name, 16, keysize, entrysize, cxt);
	return hash_search(*table, key, HASH_ENTER, found);
}

WcCache *
wc_cache_create(const char *name, Size keysize, Size entrysize,
				const int *limit_kb, Size limit_bytes, WcCacheRelease release)
{
	WcCache    *c = MemoryContextAllocZero(caches_memory(), sizeof(WcCache));

	if (ncaches == MAX_CACHES)
		elog(ERROR, "widecol: too many backend caches");
	c->name = name;
	c->cxt = AllocSetContextCreate(caches_memory(), "widecol cache", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSetIdentifier(c->cxt, name);
	c->keysize = MAXALIGN(keysize);
	c->entrysize = entrysize;
	c->limit_kb = limit_kb;
	c->limit_bytes = limit_bytes;
	c->release = release;
	dlist_init(&c->lru);
	c->table = wc_hash_create(name, 64, keysize,
							  c->keysize + MAXALIGN(sizeof(CacheHdr)) + entrysize, c->cxt);
	caches[ncaches++] = c;
	return c;
}

/* Memory for what the entries hold (freed by the owner's release). */
MemoryContext
wc_cache_memory(WcCache *c)
{
	return c->cxt;
}

/*
 * The entry of `key`, now the most recently used; a new one (zeroed, 0
 * bytes) when *found comes back false.
 */
void *
wc_cache_lookup(WcCache *c, const void *key, bool *found)
{
	char	   *h = hash_search(c->table, key, HASH_ENTER, found);
	char	   *entry = EntryOf(c, h);
	CacheHdr   *hdr = HdrOf(c, entry);

	if (*found)
	{
		c->hits++;
		dlist_move_head(&c->lru, &hdr->lru);
	}
	else
	{
		c->misses++;
		c->entries++;
		memset(hdr, 0, MAXALIGN(sizeof(CacheHdr)) + c->entrysize);
		dlist_push_head(&c->lru, &hdr->lru);
	}
	return entry;
}

/* The entry now holds `bytes` (what counts against the limit). */
void
wc_cache_account(WcCache *c, void *entry, Size bytes)
{
	CacheHdr   *hdr = HdrOf(c, entry);

	c->bytes = c->bytes - hdr->bytes + bytes;
	hdr->bytes = bytes;
}

void
wc_cache_drop(WcCache *c, void *entry)
{
	CacheHdr   *hdr = HdrOf(c, entry);

	if (c->release)
		c->release(entry);
	c->bytes -= hdr->bytes;
	c->entries--;
	dlist_delete(&hdr->lru);
	hash_search(c->table, HashEntryOf(c, entry), HASH_REMOVE, NULL);
}

static Size
limit_of(WcCache *c)
{
	return c->limit_kb ? (Size) *c->limit_kb * 1024 : c->limit_bytes;
}

/* Drop least recently used entries (never `keep`) until within the limit. */
void
wc_cache_shrink(WcCache *c, void *keep)
{
	CacheHdr   *keephdr = keep ? HdrOf(c, keep) : NULL;

	while (c->bytes > limit_of(c) && !dlist_is_empty(&c->lru))
	{
		CacheHdr   *victim = dlist_tail_element(CacheHdr, lru, &c->lru);

		if (victim == keephdr)
		{
			/* the one to keep is the only one left over the limit */
			if (dlist_head_node(&c->lru) == &keephdr->lru)
				break;
			dlist_move_head(&c->lru, &victim->lru);
			continue;
		}
		c->evictions++;
		wc_cache_drop(c, (char *) victim + MAXALIGN(sizeof(CacheHdr)));
	}
}

/* Drop every entry (but `keep`) that `filter` selects. */
void
wc_cache_drop_if(WcCache *c, WcCacheFilter filter, void *arg, void *keep)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &c->lru)
	{
		char	   *entry = (char *) it.cur + MAXALIGN(sizeof(CacheHdr));

		if (entry != keep && filter(entry, arg))
			wc_cache_drop(c, entry);
	}
}

/* ---------- the run readers' buffer pool ---------- */

/*
 * A seek opens a reader per partition and run, each decompressing a block
 * (up to 64 kB of keys plus its value pages), and allocating those buffers
 * anew each time (malloc mapping fresh memory, every page of it faulted in
 * while lz4 writes it) showed in seek profiles: with a pool of 16 buffers
 * of one size, a 10-partition seek over 10 runs spent 60% of its time in
 * page faults.  A backend keeps freed buffers, in power-of-two sizes, up to
 * POOL_MAX_BYTES.
 */
#define POOL_MAX 256
#define POOL_MAX_BYTES ((Size) 32 * 1024 * 1024)

typedef struct PoolBuffer
{
	char	   *buf;
	Size		size;
} PoolBuffer;

static PoolBuffer pool[POOL_MAX];
static int	npool = 0;
static Size pool_bytes = 0;
static int64 pool_gets = 0;
static int64 pool_allocs = 0;

/* A buffer of at least *size bytes; *size becomes its size. */
char *
wc_pool_get(Size *size)
{
	Size		want = WC_POOL_MIN_SIZE;

	while (want < *size)
		want *= 2;
	pool_gets++;
	for (int i = npool - 1; i >= 0; i--)
		if (pool[i].size == want)
		{
			char	   *buf = pool[i].buf;

			pool_bytes -= want;
			pool[i] = pool[--npool];
			*size = want;
			return buf;
		}
	pool_allocs++;
	*size = want;
	return MemoryContextAllocHuge(caches_memory(), want);
}

void
wc_pool_put(char *buf, Size size)
{
	/* make room by dropping the oldest buffers */
	while (npool > 0 && (npool == POOL_MAX || pool_bytes + size > POOL_MAX_BYTES))
	{
		pfree(pool[0].buf);
		pool_bytes -= pool[0].size;
		memmove(&pool[0], &pool[1], sizeof(PoolBuffer) * --npool);
	}
	if (size > POOL_MAX_BYTES)
	{
		pfree(buf);
		return;
	}
	pool[npool].buf = buf;
	pool[npool++].size = size;
	pool_bytes += size;
}

/* What each cache (and the buffer pool) holds and did; returns how many. */
int
wc_cache_stats(WcCacheStats *out, int max)
{
	int			n = 0;

	for (int i = 0; i < ncaches && n < max; i++, n++)
	{
		WcCache    *c = caches[i];

		out[n].name = c->name;
		out[n].entries = c->entries;
		out[n].bytes = c->bytes;
		out[n].limit_bytes = limit_of(c);
		out[n].hits = c->hits;
		out[n].misses = c->misses;
		out[n].evictions = c->evictions;
	}
	if (n < max)
	{
		out[n].name = "run reader buffers";
		out[n].entries = npool;
		out[n].bytes = (int64) pool_bytes;
		out[n].limit_bytes = (int64) POOL_MAX_BYTES;
		out[n].hits = pool_gets - pool_allocs;
		out[n].misses = pool_allocs;
		out[n].evictions = 0;
		n++;
	}
	return n;
}
