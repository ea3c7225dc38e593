/*
 * movedkeys.c — keys a key-changing UPDATE moved rows onto, per (relation,
 * command), for the whole transaction (see "MVCC" in src/README.md): the
 * write-conflict checks (conflict.c) must tell a row this command moved onto
 * a key from a concurrent writer's.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "access/access.h"

typedef struct MovedKey
{
	Oid			relid;
	CommandId	cid;
	int			len;
	const char *data;
} MovedKey;

/*
 * Keys moved onto by key-changing UPDATEs, per (relation, command), for the
 * whole transaction: a nested command (a trigger) must not make the outer
 * command forget its moves.
 */
static HTAB *moved_keys = NULL;
static MemoryContext moved_cxt = NULL;

static uint32
moved_hash(const void *key, Size keysize)
{
	const MovedKey *k = key;

	return hash_bytes((const unsigned char *) k->data, k->len) ^ k->relid ^ (k->cid << 7);
}

static int
moved_match(const void *a, const void *b, Size keysize)
{
	const MovedKey *x = a;
	const MovedKey *y = b;

	if (x->relid != y->relid || x->cid != y->cid || x->len != y->len)
		return 1;
	return memcmp(x->data, y->data, x->len);
}

static HTAB *
moved_table(bool create)
{
	if (moved_keys == NULL && create)
	{
		HASHCTL		ctl;

		moved_cxt = AllocSetContextCreate(TopTransactionContext, "widecol moved keys",
										  ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(MovedKey);
		ctl.entrysize = sizeof(MovedKey);
		ctl.hash = moved_hash;
		ctl.match = moved_match;
		ctl.hcxt = moved_cxt;
		moved_keys = hash_create("widecol moved keys", 256, &ctl,
								 HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	}
	return moved_keys;
}

void
wc_remember_moved(Relation rel, const char *key, int len, CommandId cid)
{
	HTAB	   *h = moved_table(true);
	MovedKey	k = {RelationGetRelid(rel), cid, len, key};
	bool		found;
	MovedKey   *e = hash_search(h, &k, HASH_ENTER, &found);

	if (!found)
	{
		char	   *copy = MemoryContextAlloc(moved_cxt, Max(len, 1));

		memcpy(copy, key, len);
		e->data = copy;
	}
}

bool
wc_key_moved_here(Relation rel, const char *key, int len, CommandId cid)
{
	HTAB	   *h = moved_table(false);
	MovedKey	k = {RelationGetRelid(rel), cid, len, key};

	return h != NULL && hash_search(h, &k, HASH_FIND, NULL) != NULL;
}

/* The transaction ended: its memory went with TopTransactionContext. */
void
wc_moved_keys_reset(void)
{
	moved_keys = NULL;
	moved_cxt = NULL;
}
