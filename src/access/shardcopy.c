/*
 * shardcopy.c — COPY into a table with foreign partitions, in batches.
 *
 * On PostgreSQL 15, COPY FROM routes each row to a foreign partition with
 * one remote INSERT per row (batching COPY into foreign tables came in 16).
 * A COPY into a partitioned table that has foreign partitions (a sharded
 * table) is taken here instead, one of two ways:
 *
 * - streamed (shardstream.c): the rows go to each shard with the COPY
 *   protocol, over postgres_fdw's connections, all shards at once; for
 *   hash-partitioned tables whose partitions are all postgres_fdw foreign
 *   tables without INSERT triggers (what widecol.create_sharded_table
 *   makes), unless widecol.stream_copy = off;
 * - otherwise in batches: COPY into a temporary table of the same columns
 *   (the statement's own options, column list and WHERE), then one INSERT
 *   INTO the table SELECT * FROM it, so that postgres_fdw sends batch_size
 *   rows per remote INSERT.  The INSERT checks the same privileges, fires
 *   the same triggers and routes the rows as the COPY would; the temporary
 *   table is emptied before and after.
 *
 * widecol.batch_copy = off restores PostgreSQL's row-by-row COPY, which
 * also runs where the other two would differ from it: generated or
 * identity columns, row-level security (COPY FROM refuses it), FREEZE, and
 * (batches only) without the right to create temporary tables.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/copy.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "access/access.h"

static bool wc_batch_copy = true;
static bool wc_stream_copy = true;

/* A partitioned table with a foreign partition, that an INSERT can fill alike. */
static bool
should_batch(CopyStmt *stmt, Oid relid)
{
	Relation	rel;
	TupleDesc	desc;
	bool		foreign = false;
	bool		plain = true;
	ListCell   *lc;
	int			i;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	foreach(lc, stmt->options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, "freeze") == 0)
			return false;
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			foreign = true;
	if (!foreign)
		return false;
	rel = table_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	for (i = 0; i < desc->natts; i++)
		if (TupleDescAttr(desc, i)->attgenerated || TupleDescAttr(desc, i)->attidentity)
			plain = false;
	table_close(rel, NoLock);
	return plain;
}

static void
run_sql(const char *sql, int expect)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expect)
		elog(ERROR, "widecol batched COPY: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
}

static void
copy_in_batches(CopyStmt *stmt, Oid relid, PlannedStmt *pstmt, const char *queryString,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, QueryCompletion *qc)
{
	char		staging[NAMEDATALEN];
	const char *target = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													get_rel_name(relid));
	PlannedStmt *copy_pstmt;
	CopyStmt   *copy_stmt;
	uint64		rows;

	snprintf(staging, sizeof(staging), "widecol_copy_%u", relid);
	SPI_connect();
	run_sql(psprintf("CREATE TEMP TABLE IF NOT EXISTS %s (LIKE %s INCLUDING DEFAULTS)",
					 quote_identifier(staging), target), SPI_OK_UTILITY);
	run_sql(psprintf("TRUNCATE pg_temp.%s", quote_identifier(staging)), SPI_OK_UTILITY);
	SPI_finish();

	/* the COPY itself, with its options, columns and WHERE, into the temp table */
	copy_stmt = copyObject(stmt);
	copy_stmt->relation = makeRangeVar("pg_temp", pstrdup(staging), stmt->relation->location);
	copy_pstmt = copyObject(pstmt);
	copy_pstmt->utilityStmt = (Node *) copy_stmt;
	wc_utility_next(copy_pstmt, queryString, false, context, params, queryEnv, None_Receiver, NULL);
	CommandCounterIncrement();

	SPI_connect();
	run_sql(psprintf("INSERT INTO %s SELECT * FROM pg_temp.%s", target, quote_identifier(staging)),
			SPI_OK_INSERT);
	rows = SPI_processed;
	run_sql(psprintf("TRUNCATE pg_temp.%s", quote_identifier(staging)), SPI_OK_UTILITY);
	SPI_finish();
	if (qc)
		SetQueryCompletion(qc, CMDTAG_COPY, rows);
}

/*
 * COPY FROM into a sharded table, from the utility hook (ddl.c): streamed
 * or in batches when either applies (true), else left to the caller.
 */
bool
wc_copy_in_batches(PlannedStmt *pstmt, const char *queryString,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	CopyStmt   *stmt = (CopyStmt *) pstmt->utilityStmt;
	Oid			relid;

	if (!wc_batch_copy || !stmt->is_from || stmt->relation == NULL || stmt->query != NULL)
		return false;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!should_batch(stmt, relid))
		return false;
	if (wc_stream_copy && wc_copy_stream(pstmt, queryString, queryEnv, qc))
		return true;
	if (pg_database_aclcheck(MyDatabaseId, GetUserId(), ACL_CREATE_TEMP) != ACLCHECK_OK)
		return false;
	copy_in_batches(stmt, relid, pstmt, queryString, context, params, queryEnv, qc);
	return true;
}

void
wc_install_copy_batching(void)
{
	DefineCustomBoolVariable("widecol.batch_copy",
							 "COPY into a table with foreign partitions goes through a temporary table and one INSERT ... SELECT.",
							 "postgres_fdw then sends batch_size rows per remote INSERT instead of one (PostgreSQL 15 batches INSERT, not COPY).",
							 &wc_batch_copy, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("widecol.stream_copy",
							 "COPY into a sharded table streams the rows to the shards with the COPY protocol.",
							 "Over postgres_fdw's connections, in its remote transactions; off: through a temporary table and INSERT ... SELECT (widecol.batch_copy).",
							 &wc_stream_copy, true, PGC_USERSET, 0, NULL, NULL, NULL);
}
