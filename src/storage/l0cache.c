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

#include "access/xact.h"

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
	int64		recent_cap;		/* room in sorted.recent's arrays */
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

/* Merge part a and sorted rows b (perm: their order) into a new part. */
static WcL0Part
merge_parts(MemoryContext cxt, const WcL0Part *a, WcRowHeader **brows,
			ItemPointerData *btids, const int64 *perm, int64 bn)
{
	WcL0Part	out;
	int64		i = 0,
				j = 0,
				k = 0;

	out.n = a->n + bn;
	out.rows = MemoryContextAllocHuge(cxt, sizeof(WcRowHeader *) * Max(out.n, 1));
	out.tids = MemoryContextAllocHuge(cxt, sizeof(ItemPointerData) * Max(out.n, 1));
	while (i < a->n || j < bn)
	{
		int64		bj = j < bn ? (perm ? perm[j] : j) : 0;

		if (j == bn || (i < a->n && wc_compare_rows(a->rows[i], brows[bj]) <= 0))
		{
			out.rows[k] = a->rows[i];
			out.tids[k++] = a->tids[i++];
		}
		else
		{
			out.rows[k] = brows[bj];
			out.tids[k++] = btids[bj];
			j++;
		}
	}
	return out;
}

static void
free_part(WcL0Part *p)
{
	if (p->rows)
	{
		pfree(p->rows);
		pfree(p->tids);
	}
	memset(p, 0, sizeof(WcL0Part));
}

/*
 * A few new versions (a single-row INSERT's, read back by the next write's
 * lookup) go into the recent part in place: a binary search and a move
 * each, where a merge compared every version of the part.  Versions that
 * compare equal keep their storage order, as in a merge.
 */
static void
insert_few(L0CacheEntry *e, NewRows *nr)
{
	WcL0Part   *r = &e->sorted.recent;

	if (e->recent_cap < WC_L0_RECENT_MAX)
	{
		WcRowHeader **rows = MemoryContextAlloc(e->cxt, sizeof(WcRowHeader *) * WC_L0_RECENT_MAX);
		ItemPointerData *tids = MemoryContextAlloc(e->cxt, sizeof(ItemPointerData) * WC_L0_RECENT_MAX);
		int64		n = r->n;

		if (n > 0)
		{
			memcpy(rows, r->rows, sizeof(WcRowHeader *) * r->n);
			memcpy(tids, r->tids, sizeof(ItemPointerData) * r->n);
		}
		free_part(r);
		r->rows = rows;
		r->tids = tids;
		r->n = n;
		e->recent_cap = WC_L0_RECENT_MAX;
	}
	for (int64 j = 0; j < nr->n; j++)
	{
		int64		lo = 0,
					hi = r->n;

		while (lo < hi)
		{
			int64		mid = lo + (hi - lo) / 2;

			if (wc_compare_rows(r->rows[mid], nr->rows[j]) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&r->rows[lo + 1], &r->rows[lo], sizeof(WcRowHeader *) * (r->n - lo));
		memmove(&r->tids[lo + 1], &r->tids[lo], sizeof(ItemPointerData) * (r->n - lo));
		r->rows[lo] = nr->rows[j];
		r->tids[lo] = nr->tids[j];
		r->n++;
	}
}

/*
 * Merge the new versions into the entry: into the recent part while it
 * stays small, else recent and new into the bulk.  Merging every append
 * into the bulk made a row-by-row DELETE of n rows cost O(n^2) (each
 * tombstone, read back by the next row's conflict check, moved all of
 * level 0: 91 s for 60,000 rows).
 */
static void
merge_new(L0CacheEntry *e, NewRows *nr)
{
	WcL0Sorted *s = &e->sorted;
	int64	   *perm;
	WcL0Part	merged;

	e->bytes += (sizeof(WcRowHeader *) + sizeof(ItemPointerData)) * nr->n;
	if (nr->n <= 8 && s->recent.n + nr->n <= WC_L0_RECENT_MAX)
	{
		insert_few(e, nr);
		return;
	}
	perm = palloc(sizeof(int64) * nr->n);
	wc_sort_rows(nr->rows, nr->n, perm);
	merged = merge_parts(e->cxt, &s->recent, nr->rows, nr->tids, perm, nr->n);
	free_part(&s->recent);
	if (merged.n <= WC_L0_RECENT_MAX)
		s->recent = merged;
	else
	{
		WcL0Part	bulk = merge_parts(e->cxt, &s->bulk, merged.rows, merged.tids, NULL, merged.n);

		free_part(&merged);
		free_part(&s->bulk);
		s->bulk = bulk;
	}
	e->recent_cap = s->recent.n;
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

/* Index of the first version of a part whose key is >= key (all of them: n). */
int64
wc_l0_part_lower_bound(const WcL0Part *p, const char *key, int keylen)
{
	int64		lo = 0,
				hi = p->n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		WcRowHeader *row = p->rows[mid];

		if (wc_compare_keys(WcRowKey(row), row->keylen, key, keylen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Does the generation hold a version of the key that snapshot (if not
 * NULL) may see?  Only the snapshot's rule for this transaction's own
 * versions is applied (those of its command or later are invisible): the
 * lookups of what an INSERT replaced would otherwise find, for every new
 * key, the version the INSERT itself just wrote, and merge for nothing.
 */
bool
wc_l0_sorted_has_key(const WcL0Sorted *s, const char *key, int keylen, Snapshot snapshot)
{
	const WcL0Part *parts[2] = {&s->bulk, &s->recent};

	for (int i = 0; i < 2; i++)
	{
		for (int64 at = wc_l0_part_lower_bound(parts[i], key, keylen); at < parts[i]->n; at++)
		{
			WcRowHeader *row = parts[i]->rows[at];

			if (wc_compare_keys(WcRowKey(row), row->keylen, key, keylen) != 0)
				break;
			if (snapshot == NULL || row->cid < snapshot->curcid ||
				!TransactionIdIsCurrentTransactionId(row->xid))
				return true;
		}
	}
	return false;
}
