/*
 * storage/cache.h — the backend's caches, built one way.
 *
 * A WcCache maps fixed-size keys to entries, keeps the most recently used
 * first and evicts from the other end when its bytes pass its limit.  It
 * knows nothing of what it holds: the owner says how many bytes an entry
 * uses and releases an entry's memory when the cache drops it.  Every cache
 * lives in one memory context under TopMemoryContext, counts hits, misses
 * and evictions, and shows in widecol.backend_caches().  The buffer pool of
 * run readers (a free list of equal buffers, not keyed) lives here too,
 * and the one way the rest of widecol makes a plain backend-local hash
 * table (no limit, no LRU).
 */
#ifndef WC_STORAGE_CACHE_H
#define WC_STORAGE_CACHE_H

#include "widecol.h"
#include "utils/hsearch.h"

typedef struct WcCache WcCache;

/* Called with an entry the cache drops (evicted, or dropped by its owner). */
typedef void (*WcCacheRelease) (void *entry);

extern WcCache *wc_cache_create(const char *name, Size keysize, Size entrysize,
								const int *limit_kb, Size limit_bytes,
								WcCacheRelease release);
extern void *wc_cache_lookup(WcCache *c, const void *key, bool *found);
extern void wc_cache_account(WcCache *c, void *entry, Size bytes);
extern void wc_cache_drop(WcCache *c, void *entry);
extern void wc_cache_shrink(WcCache *c, void *keep);
extern MemoryContext wc_cache_memory(WcCache *c);

typedef bool (*WcCacheFilter) (void *entry, void *arg);
extern void wc_cache_drop_if(WcCache *c, WcCacheFilter filter, void *arg, void *keep);

typedef struct WcCacheStats
{
	const char *name;
	int64		entries;
	int64		bytes;
	int64		limit_bytes;
	int64		hits;
	int64		misses;
	int64		evictions;
} WcCacheStats;

extern int	wc_cache_stats(WcCacheStats *out, int max);

/* A plain hash table of fixed-size (binary) keys, allocated in cxt. */
extern HTAB *wc_hash_create(const char *name, long nelem, Size keysize,
							Size entrysize, MemoryContext cxt);
/* key's entry in *table, which is made (for 16 entries) on first use. */
extern void *wc_hash_enter(HTAB **table, const char *name, Size keysize, Size entrysize,
						   MemoryContext cxt, const void *key, bool *found);

/* The readers' buffer pool: power-of-two sizes from WC_POOL_MIN_SIZE. */
#define WC_POOL_MIN_SIZE (64 * 1024)
extern char *wc_pool_get(Size *size);
extern void wc_pool_put(char *buf, Size size);

#endif
