/*
 * querytable.c — the C side of query tables: parsing key lists and table
 * options for the SQL functions, and writing the query-table catalog.
 *
 * Why C: widecol.query_table is written only here, by a function that runs
 * as its caller and checks ownership itself (nobody has INSERT, UPDATE or
 * DELETE on the catalog, so no role can register a definition of its own
 * under an id that another owner's triggers name, or choose an id at all);
 * key lists are parsed by the one parser that CREATE TABLE uses; options
 * are parsed by PostgreSQL's grammar and handed back as (name, value) pairs
 * that the caller quotes, never pasted into a statement.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/sequence.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "parser/scansup.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "access/access.h"
#include "api/api.h"
#include "storage/tableinfo.h"

/* A name[] of the strings in list. */
static ArrayType *
name_array(List *names)
{
	int			n = list_length(names);
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, names)
		elems[i++] = DirectFunctionCall1(namein, CStringGetDatum((char *) lfirst(lc)));
	return construct_array(elems, n, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR);
}

/*
 * widecol._key_columns(key text, option text DEFAULT 'partition_key'):
 * the column names of a key list, as CREATE TABLE parses them ('{}' for
 * NULL or blank); a malformed list is an error naming the option.
 */
PG_FUNCTION_INFO_V1(widecol_key_columns);
Datum
widecol_key_columns(PG_FUNCTION_ARGS)
{
	char	   *key = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *option = PG_NARGS() > 1 && !PG_ARGISNULL(1) ?
		text_to_cstring(PG_GETARG_TEXT_PP(1)) : "partition_key";
	const char *p = key;

	while (p && scanner_isspace(*p))
		p++;
	if (p == NULL || *p == '\0')
		PG_RETURN_ARRAYTYPE_P(name_array(NIL));
	PG_RETURN_ARRAYTYPE_P(name_array(wc_key_column_names(option, key)));
}

/* The value of reloption widecol.<name> of relid, or NULL. */
static char *
reloption(Oid relid, const char *name)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Datum		opts;
	bool		isnull;
	char	   *result = NULL;
	ListCell   *lc;

	if (!HeapTupleIsValid(tup))
		return NULL;
	opts = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	if (!isnull)
		foreach(lc, untransformRelOptions(opts))
		{
			DefElem    *def = lfirst_node(DefElem, lc);

			if (strncmp(def->defname, WIDECOL_OPTION_NAMESPACE ".", strlen(WIDECOL_OPTION_NAMESPACE) + 1) == 0 &&
				strcmp(def->defname + strlen(WIDECOL_OPTION_NAMESPACE) + 1, name) == 0)
				result = defGetString(def);
		}
	ReleaseSysCache(tup);
	return result;
}

/*
 * widecol._table_key_columns(rel regclass): a table's partition then
 * clustering key columns from its widecol options ('{}' for a keyless or
 * non-widecol table).
 */
PG_FUNCTION_INFO_V1(widecol_table_key_columns);
Datum
widecol_table_key_columns(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *pk = reloption(relid, "partition_key");
	char	   *ck = reloption(relid, "clustering_key");
	List	   *names = NIL;

	if (pk)
		names = wc_key_column_names("partition_key", pk);
	if (ck)
		names = list_concat(names, wc_key_column_names("clustering_key", ck));
	PG_RETURN_ARRAYTYPE_P(name_array(names));
}

/*
 * widecol._parse_table_options(options text): the (name, value) pairs of a
 * WITH (...) option list, parsed by PostgreSQL's grammar: what it accepts
 * after CREATE TABLE t () WITH, and nothing else.  Only widecol.* options
 * are allowed (the table is a widecol table); names come back as
 * "widecol.x", for the caller to quote with %I and %L.
 */
PG_FUNCTION_INFO_V1(widecol_parse_table_options);
Datum
widecol_parse_table_options(PG_FUNCTION_ARGS)
{
	char	   *options = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List	   *stmts = NIL;
	CreateStmt *cs = NULL;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	PG_TRY();
	{
		stmts = raw_parser(psprintf("CREATE TABLE widecol_options () WITH (%s)", options),
						   RAW_PARSE_DEFAULT);
	}
	PG_CATCH();
	{
		FlushErrorState();
		stmts = NIL;
	}
	PG_END_TRY();
	if (list_length(stmts) == 1 && IsA(linitial_node(RawStmt, stmts)->stmt, CreateStmt))
		cs = (CreateStmt *) linitial_node(RawStmt, stmts)->stmt;
	if (cs == NULL || cs->tableElts || cs->inhRelations || cs->partbound || cs->partspec ||
		cs->ofTypename || cs->constraints || cs->oncommit != ONCOMMIT_NOOP ||
		cs->tablespacename || cs->accessMethod || cs->if_not_exists ||
		cs->relation->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid table options: %s", options),
				 errhint("Write options as in WITH (...), for example: widecol.default_ttl = '30 days', widecol.compaction = 'time_window'.")));
	foreach(lc, cs->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const char *name = def->defnamespace ?
			psprintf("%s.%s", def->defnamespace, def->defname) : def->defname;
		Datum		v[2];
		bool		n[2] = {false, def->arg == NULL};

		if (strncmp(name, WIDECOL_OPTION_NAMESPACE ".", strlen(WIDECOL_OPTION_NAMESPACE) + 1) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" is not a widecol option", name),
					 errhint("Query tables are widecol tables: their options are widecol.*.")));
		v[0] = CStringGetTextDatum(name);
		v[1] = def->arg ? CStringGetTextDatum(defGetString(def)) : (Datum) 0;
		wc_srf_put(fcinfo, v, n);
	}
	return (Datum) 0;
}

/* widecol.query_table, its columns in order */
enum
{
	Anum_qt_id = 1,
	Anum_qt_query_table,
	Anum_qt_base,
	Anum_qt_definition,
	Anum_qt_partition_key,
	Anum_qt_clustering_key,
	Anum_qt_key_columns,
	Anum_qt_columns,
	Anum_qt_diff_update,
	Anum_qt_counters,
	Anum_qt_search_path,
	Anum_qt_created_at,
	Natts_qt = Anum_qt_created_at
};

static Oid
widecol_relid(const char *name)
{
	Oid			relid = get_relname_relid(name, get_namespace_oid(WIDECOL_SCHEMA, false));

	if (!OidIsValid(relid))
		elog(ERROR, "widecol: widecol.%s is missing", name);
	return relid;
}

static void
must_own(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE,
					   get_rel_name(relid) ? get_rel_name(relid) : "?");
}

/*
 * widecol._qt_register(query_table, base, definition, partition_key,
 * clustering_key, key_columns, columns, diff_update, counters,
 * search_path): register a query table that its creator has just made;
 * returns its id.  The caller must own both tables, and both must have the
 * same owner (the triggers check that again at every statement).
 */
PG_FUNCTION_INFO_V1(widecol_qt_register);
Datum
widecol_qt_register(PG_FUNCTION_ARGS)
{
	Oid			qt = PG_GETARG_OID(0);
	Oid			base = PG_GETARG_OID(1);
	Relation	catalog;
	Datum		v[Natts_qt];
	bool		n[Natts_qt] = {0};
	int32		id;

	/* every argument but clustering_key (argument 5) */
	for (int i = 0; i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i) && i != Anum_qt_clustering_key - 2)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("widecol._qt_register: argument %d must not be NULL", i + 1)));
	must_own(base);
	must_own(qt);
	if (!wc_relation_is_widecol(qt))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("query table \"%s\" is not a widecol table", get_rel_name(qt))));
	if (get_rel_relkind(base) != RELKIND_RELATION && get_rel_relkind(base) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(base))));

	{
		HeapTuple	bt = SearchSysCache1(RELOID, ObjectIdGetDatum(base));
		HeapTuple	qtt = SearchSysCache1(RELOID, ObjectIdGetDatum(qt));
		Oid			bown,
					qown;

		if (!HeapTupleIsValid(bt) || !HeapTupleIsValid(qtt))
			elog(ERROR, "widecol: cache lookup failed for a query table's relation");
		bown = ((Form_pg_class) GETSTRUCT(bt))->relowner;
		qown = ((Form_pg_class) GETSTRUCT(qtt))->relowner;
		ReleaseSysCache(bt);
		ReleaseSysCache(qtt);
		if (bown != qown)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("query table \"%s\" and its base table \"%s\" must have the same owner",
							get_rel_name(qt), get_rel_name(base))));
	}

	id = (int32) nextval_internal(widecol_relid("query_table_id_seq"), false);
	v[Anum_qt_id - 1] = Int32GetDatum(id);
	v[Anum_qt_query_table - 1] = ObjectIdGetDatum(qt);
	v[Anum_qt_base - 1] = ObjectIdGetDatum(base);
	for (int a = Anum_qt_definition; a <= Anum_qt_search_path; a++)
	{
		v[a - 1] = PG_ARGISNULL(a - 2) ? (Datum) 0 : PG_GETARG_DATUM(a - 2);
		n[a - 1] = PG_ARGISNULL(a - 2);
	}
	v[Anum_qt_created_at - 1] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());

	/* unique indexes on id and query_table refuse a second registration */
	catalog = table_open(widecol_relid("query_table"), RowExclusiveLock);
	CatalogTupleInsert(catalog, heap_form_tuple(RelationGetDescr(catalog), v, n));
	table_close(catalog, RowExclusiveLock);
	PG_RETURN_INT32(id);
}

/* ---------- upserts into bases (access/beforestmt.c) ---------- */

/*
 * widecol._replaced_rows(NULL::t): the rows of widecol table t that the
 * statement which last INSERTed into it replaced, as they were before it
 * (the query-table and daily-count triggers' OLD rows of an upsert).
 */
PG_FUNCTION_INFO_V1(widecol_replaced_rows);
Datum
widecol_replaced_rows(PG_FUNCTION_ARGS)
{
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			relid = OidIsValid(typid) ? get_typ_typrelid(typid) : InvalidOid;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("widecol._replaced_rows() takes a row of a widecol table"),
				 errhint("Call it as widecol._replaced_rows(NULL::table_name).")));
	wc_check_row_access(relid, "widecol._replaced_rows()");
	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, wc_replaced_rows(relid))
		tuplestore_puttuple(rsinfo->setResult, (HeapTuple) lfirst(lc));
	return (Datum) 0;
}

/* Did the statement that last INSERTed into base replace any row? */
PG_FUNCTION_INFO_V1(widecol_inserted_keys_replaced);
Datum
widecol_inserted_keys_replaced(PG_FUNCTION_ARGS)
{
	wc_check_row_access(PG_GETARG_OID(0), "widecol._inserted_keys_replaced()");
	PG_RETURN_BOOL(wc_replaced_rows(PG_GETARG_OID(0)) != NIL);
}

/* Did the statement that last INSERTed into base write some key twice? */
PG_FUNCTION_INFO_V1(widecol_inserted_keys_repeat);
Datum
widecol_inserted_keys_repeat(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(wc_inserted_keys_repeated(PG_GETARG_OID(0)));
}

/* Between these two calls, reads of base see it as it was before the
 * statement that last wrote it (an UPDATE's triggers). */
PG_FUNCTION_INFO_V1(widecol_read_before_statement);
Datum
widecol_read_before_statement(PG_FUNCTION_ARGS)
{
	wc_read_before_begin(PG_GETARG_OID(0));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(widecol_read_before_statement_end);
Datum
widecol_read_before_statement_end(PG_FUNCTION_ARGS)
{
	wc_read_before_end();
	PG_RETURN_VOID();
}
