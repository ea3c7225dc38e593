/*
 * shardroute.c — the partition of a hash-partitioned table that holds a row,
 * computed exactly as PostgreSQL's tuple routing does: the partition key's
 * hash support functions and collations (compute_partition_hash_value),
 * then the bound's index for hash % greatest modulus.  Used by
 * widecol.shard_for (api/sharding.c) and by COPY to the shards
 * (shardstream.c), which route without an executor's tuple routing so that
 * postgres_fdw is not asked to prepare a remote INSERT per partition.
 */
#include "postgres.h"

#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/partcache.h"
#include "utils/rel.h"

#include "access/access.h"

/*
 * The index in desc (RelationGetPartitionDesc(rel, true)) of the partition
 * that holds a row whose partition key columns have these values, or -1 if
 * no partition accepts it.
 */
int
wc_hash_partition_index(Relation rel, PartitionDesc desc, Datum *values, bool *isnull)
{
	PartitionKey key = RelationGetPartitionKey(rel);
	PartitionBoundInfo bound = desc->boundinfo;
	uint64		hash;

	Assert(key->strategy == PARTITION_STRATEGY_HASH);
	if (bound == NULL || desc->nparts == 0)
		return -1;
	hash = compute_partition_hash_value(key->partnatts, key->partsupfunc,
										key->partcollation, values, isnull);
	return bound->indexes[hash % bound->nindexes];
}
