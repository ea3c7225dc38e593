/*
 * sharding.c — token-aware routing for sharded tables: which partition, and
 * so which shard (foreign server), holds a partition key.
 *
 * A sharded table (widecol.create_sharded_table, sql/install/70_sharding.sql)
 * is a hash-partitioned table on the coordinator whose partitions are
 * postgres_fdw foreign tables, one per shard.  widecol.shard_for(table, key
 * values...) hashes the values exactly as PostgreSQL's tuple routing does
 * (compute_partition_hash_value over the partition key's hash support
 * functions, then the bound's index for hash % greatest modulus, in
 * access/shardroute.c), so an
 * application can send single-partition queries straight to the shard that
 * holds them, as Cassandra's token-aware drivers do.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "access/access.h"
#include "api/api.h"

/* Libpq connection options of a foreign server worth passing to a client. */
static const char *const conn_options[] = {
	"host", "hostaddr", "port", "dbname", "sslmode", "target_session_attrs", NULL
};

static void
append_conninfo(StringInfo buf, const char *name, const char *value)
{
	const char *p;

	if (buf->len > 0)
		appendStringInfoChar(buf, ' ');
	appendStringInfo(buf, "%s='", name);
	for (p = value; *p; p++)
	{
		if (*p == '\'' || *p == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *p);
	}
	appendStringInfoChar(buf, '\'');
}

static const char *
option_value(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

/* The value of argument argno as the type of partition column col. */
static Datum
key_value(FunctionCallInfo fcinfo, int argno, PartitionKey key, int col)
{
	Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
	Oid			target = key->parttypid[col];
	Oid			infunc,
				ioparam,
				outfunc;
	bool		isvarlena;
	char	   *text;

	if (argtype == target || IsBinaryCoercible(argtype, target))
		return PG_GETARG_DATUM(argno);
	/* an untyped literal ('cam-1') arrives as a cstring; others via text */
	if (argtype == UNKNOWNOID)
		text = PG_GETARG_CSTRING(argno);
	else
	{
		getTypeOutputInfo(argtype, &outfunc, &isvarlena);
		text = OidOutputFunctionCall(outfunc, PG_GETARG_DATUM(argno));
	}
	getTypeInputInfo(target, &infunc, &ioparam);
	return OidInputFunctionCall(infunc, text, ioparam, key->parttypmod[col]);
}

/*
 * The partition of hash-partitioned table rel that holds a row whose
 * partition key columns have these values (InvalidOid if no partition
 * accepts it).
 */
static Oid
partition_for(Relation rel, Datum *values, bool *isnull)
{
	PartitionDesc desc = RelationGetPartitionDesc(rel, true);
	int			idx = wc_hash_partition_index(rel, desc, values, isnull);

	return idx < 0 ? InvalidOid : desc->oids[idx];
}

/*
 * widecol.shard_for(rel regclass, VARIADIC keys "any")
 *   -> (partition regclass, server name, conninfo text, remote_table text)
 */
PG_FUNCTION_INFO_V1(widecol_shard_for);
Datum
widecol_shard_for(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	PartitionKey key;
	Datum		values[PARTITION_MAX_KEYS];
	bool		isnull[PARTITION_MAX_KEYS];
	Oid			part;
	Datum		out[4];
	bool		outnull[4] = {false, true, true, true};
	int			nkeys = PG_NARGS() - 1;
	int			i;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("widecol.shard_for() takes the key values as separate arguments"),
				 errhint("Call it as widecol.shard_for('t', 'cam-1', '2025-01-02'), not with VARIADIC ARRAY[...].")));

	relid = PG_GETARG_OID(0);
	rel = table_open(relid, AccessShareLock);
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE ||
		RelationGetPartitionKey(rel)->strategy != PARTITION_STRATEGY_HASH)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hash-partitioned table", RelationGetRelationName(rel)),
				 errhint("widecol.shard_for() routes keys of tables made by widecol.create_sharded_table().")));
	key = RelationGetPartitionKey(rel);
	if (nkeys != key->partnatts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table \"%s\" is sharded by %d column(s), got %d key value(s)",
						RelationGetRelationName(rel), key->partnatts, nkeys),
				 errhint("Pass one value per shard key column, in the order of PARTITION BY HASH (...): %s.",
						 pg_get_partkeydef_columns(relid, true))));
	for (i = 0; i < nkeys; i++)
	{
		isnull[i] = PG_ARGISNULL(i + 1);
		values[i] = isnull[i] ? (Datum) 0 : key_value(fcinfo, i + 1, key, i);
	}
	part = partition_for(rel, values, isnull);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(part))
		PG_RETURN_NULL();

	out[0] = ObjectIdGetDatum(part);
	if (get_rel_relkind(part) == RELKIND_FOREIGN_TABLE)
	{
		ForeignTable *ft = GetForeignTable(part);
		ForeignServer *server = GetForeignServer(ft->serverid);
		const char *schema = option_value(ft->options, "schema_name");
		const char *table = option_value(ft->options, "table_name");
		StringInfoData conninfo;
		const char *const *opt;

		initStringInfo(&conninfo);
		for (opt = conn_options; *opt; opt++)
		{
			const char *v = option_value(server->options, *opt);

			if (v)
				append_conninfo(&conninfo, *opt, v);
		}
		out[1] = CStringGetDatum(server->servername);
		out[1] = DirectFunctionCall1(namein, out[1]);
		out[2] = CStringGetTextDatum(conninfo.data);
		out[3] = CStringGetTextDatum(quote_qualified_identifier(
							  schema ? schema : get_namespace_name(get_rel_namespace(part)),
							  table ? table : get_rel_name(part)));
		outnull[1] = outnull[2] = outnull[3] = false;
	}
	PG_RETURN_DATUM(wc_result_row(fcinfo, out, outnull));
}

/* one row of widecol.shard_connections() */
static void
connection_row(const char *server, bool busy, bool valid, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = CStringGetDatum(server);
	values[1] = BoolGetDatum(busy);
	values[2] = BoolGetDatum(valid);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * widecol.shard_connections() -> (server_name name, busy boolean, valid boolean):
 * this backend's own connections to shards (direct reads, access/shardsession.c),
 * as postgres_fdw_get_connections() lists postgres_fdw's.
 */
PG_FUNCTION_INFO_V1(widecol_shard_connections);
Datum
widecol_shard_connections(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	wc_shard_sessions_list(connection_row, rsinfo);
	return (Datum) 0;
}

/*
 * widecol.shard_disconnect(server_name name DEFAULT NULL) -> integer: closes
 * this backend's direct-read connections to that shard server (NULL: to
 * all), returns how many; the next read connects again.
 */
PG_FUNCTION_INFO_V1(widecol_shard_disconnect);
Datum
widecol_shard_disconnect(PG_FUNCTION_ARGS)
{
	const char *server = NULL;

	if (!PG_ARGISNULL(0))
	{
		/* an unknown name is an error, as for postgres_fdw_disconnect() */
		ForeignServer *fs = GetForeignServerByName(NameStr(*PG_GETARG_NAME(0)), false);

		server = fs->servername;
	}
	PG_RETURN_INT32(wc_shard_sessions_disconnect(server));
}
