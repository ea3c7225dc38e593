/*
 * l0cache.c — a backend's sorted copy of each level-0 generation it reads.
 *
 * Level-0 pages are unsorted and only ever grow at their end, so a read
 * that wants a key range would otherwise copy and test every version of
 * level 0 (up to widecol.level0_max_size) on each seek.  This cache keeps,
 * per generation, the versions read so far sorted in storage order, and
 * reads only what was appended since the last time.  See "Level-0 cache"
 * in src/README.md.
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "storage/cache.h"
#include "storage/level0.h"
#include "storage/metapage.h"
#include "storage/row.h"

#define ARENA_CHUNK		(64 * 1024)

int			wc_level0_cache_kb = 65536;

typedef struct L0CacheKey
{
	RelFileNode node;
	uint64		storage_id;
	uint64		gen;
} L0CacheKey;

typedef struct L0CacheEntry
{
	L0CacheKey	key;			/* a copy of the cache's key */
	MemoryContext cxt;
	BlockNumber blk;			/* where the next read resumes */
	OffsetNumber off;
	WcL0Sorted	sorted;
	char	   *arena;			/* version copies are carved from chunks */
	Size		arena_free;
	Size		bytes;
} L0CacheEntry;

/* widecol.level0_cache_size bounds it (storage/cache.h) */
static WcCache *l0_cache = NULL;

typedef struct NewRows
{
	L0CacheEntry *e;
	WcRowHeader **rows;
	ItemPointerData *tids;
	int64		n;
	int64		cap;
} NewRows;

static void *
entry_alloc(L0CacheEntry *e, Size len)
{
	void	   *p;

	len = MAXALIGN(len);
	if (e->arena == NULL || e->arena_free < len)
	{
		Size		chunk = Max(ARENA_CHUNK, len);

		e->arena = MemoryContextAlloc(e->cxt, chunk);
		e->arena_free = chunk;
		e->bytes += chunk;
	}
	p = e->arena;
	e->arena += len;
	e->arena_free -= len;
	return p;
}

static void
collect_new(WcRowHeader *row, ItemPointer tid, void *arg)
{
	NewRows    *nr = arg;

	if (nr->n == nr->cap)
	{
		nr->cap *= 2;
		nr->rows = repalloc_huge(nr->rows, sizeof(WcRowHeader *) * nr->cap);
		nr->tids = repalloc_huge(nr->tids, sizeof(ItemPointerData) * nr->cap);
	}
	nr->rows[nr->n] = wc_row_copy(entry_alloc(nr->e, row->len), row);
	nr->tids[nr->n] = *tid;
	nr->n++;
}

/* Merge the sorted new versions into the entry's sorted arrays. */
static void
merge_new(L0CacheEntry *e, NewRows *nr)
{
	WcL0Sorted *s = &e->sorted;
	int64	   *perm = palloc(sizeof(int64) * nr->n);
	int64		total = s->n + nr->n;
	WcRowHeader **rows = MemoryContextAllocHuge(e->cxt, sizeof(WcRowHeader *) * total);
	ItemPointerData *tids = MemoryContextAllocHuge(e->cxt, sizeof(ItemPointerData) * total);
	int64		i = 0,
				j = 0,
				k = 0;

	wc_sort_rows(nr->rows, nr->n, perm);
	while (i < s->n || j < nr->n)
	{
		if (j == nr->n ||
			(i < s->n && wc_compare_rows(s->rows[i], nr->rows[perm[j]]) <= 0))
		{
			rows[k] = s->rows[i];
			tids[k++] = s->tids[i++];
		}
		else
		{
			rows[k] = nr->rows[perm[j]];
			tids[k++] = nr->tids[perm[j++]];
		}
	}
	if (s->rows)
	{
		pfree(s->rows);
		pfree(s->tids);
	}
	e->bytes += (sizeof(WcRowHeader *) + sizeof(ItemPointerData)) * nr->n;
	s->rows = rows;
	s->tids = tids;
	s->n = total;
	pfree(perm);
}

static void
release_entry(void *entry)
{
	MemoryContextDelete(((L0CacheEntry *) entry)->cxt);
}

/* Generations of the same table older than its oldest live one are gone. */
static bool
gone_gen(void *entry, void *arg)
{
	const L0CacheKey *e = &((L0CacheEntry *) entry)->key;
	const L0CacheKey *live = arg;

	return RelFileNodeEquals(e->node, live->node) &&
		(e->storage_id != live->storage_id || e->gen < live->gen);
}

/*
 * The versions of level-0 generation `gen` of `rel`, sorted in storage
 * order, read up to the generation's current end.  The result stays valid
 * until the next call.  `oldest_gen` is the table's oldest live generation:
 * cached generations before it are gone and are dropped.
 */
const WcL0Sorted *
wc_l0_cache_get(Relation rel, uint64 storage_id, const WcL0Gen *gen, uint64 oldest_gen)
{
	L0CacheKey	key;
	L0CacheEntry *e;
	NewRows		nr;
	bool		found;
	MemoryContext tmp;
	MemoryContext old;

	if (l0_cache == NULL)
		l0_cache = wc_cache_create("level-0 generations", sizeof(L0CacheKey),
								   sizeof(L0CacheEntry), &wc_level0_cache_kb, 0,
								   release_entry);
	memset(&key, 0, sizeof(key));
	key.node = rel->rd_node;
	key.storage_id = storage_id;
	key.gen = gen->gen;
	e = wc_cache_lookup(l0_cache, &key, &found);
	if (!found)
	{
		e->key = key;
		e->cxt = AllocSetContextCreate(wc_cache_memory(l0_cache), "widecol level-0 generation",
									   ALLOCSET_DEFAULT_SIZES);
		e->blk = InvalidBlockNumber;
		e->off = FirstOffsetNumber;
	}
	/* a generation starts without pages: begin once it has its first */
	if (e->blk == InvalidBlockNumber)
		e->blk = gen->head;

	/* read what was appended since last time */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "widecol level-0 read",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	nr.e = e;
	nr.n = 0;
	nr.cap = 64;
	nr.rows = palloc(sizeof(WcRowHeader *) * nr.cap);
	nr.tids = palloc(sizeof(ItemPointerData) * nr.cap);
	PG_TRY();
	{
		wc_l0_read_gen_from(rel, gen, &e->blk, &e->off, collect_new, &nr);
	}
	PG_CATCH();
	{
		/* a half-read entry would miss versions next time: forget it */
		MemoryContextSwitchTo(old);
		wc_cache_drop(l0_cache, e);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (nr.n > 0)
		merge_new(e, &nr);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);

	wc_cache_account(l0_cache, e, e->bytes);
	/*
	 * A new generation appeared: older ones may have left, drop them (not on
	 * every read); then stay within widecol.level0_cache_size, least
	 * recently used first.  A generation that leaves without a new one
	 * appearing stays until the size limit evicts it: reads only ask for
	 * live generations.
	 */
	if (!found)
	{
		key.gen = oldest_gen;
		wc_cache_drop_if(l0_cache, gone_gen, &key, e);
	}
	wc_cache_shrink(l0_cache, e);
	return &e->sorted;
}

/* Index of the first version whose key is >= key (all of them: n). */
int64
wc_l0_sorted_lower_bound(const WcL0Sorted *s, const char *key, int keylen)
{
	int64		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		WcRowHeader *row = s->rows[mid];

		if (wc_compare_keys(WcRowKey(row), row->keylen, key, keylen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
