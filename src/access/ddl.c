/*
 * ddl.c — the widecol.* table options in DDL, and the DDL widecol refuses.
 *
 * PostgreSQL 15 gives extensions no way to add table reloptions, so a
 * ProcessUtility hook takes widecol.* options out of CREATE TABLE and ALTER
 * TABLE, validates them against the table (storage/tableinfo.c), and stores
 * them in pg_class.reloptions itself (where \d+ shows them and pg_dump emits
 * them as WITH ("widecol.x" = '...')).  PostgreSQL reads stored options back
 * with validate = false, so unknown names are tolerated there; only a
 * re-validating ALTER TABLE SET of other options needs our help (see
 * run_stripped).
 *
 * The hook also refuses DDL that would break a widecol table: CREATE INDEX,
 * dropping, retyping or renaming key columns.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/heapam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_inherits.h"
#include "access/relation.h"
#include "storage/bufmgr.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "catalog/pg_collation.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "parser/scansup.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "commands/tablecmds.h"
#include "access/tableam.h"

#include "widecol.h"
#include "access/access.h"
#include "maintenance/damage.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/tableinfo.h"

static ProcessUtility_hook_type prev_utility_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/* ---------- pg_class.reloptions ---------- */

static void
write_options(Oid relid, List *defs)
{
	Relation	classrel = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	Datum		values[Natts_pg_class] = {0};
	bool		nulls[Natts_pg_class] = {0};
	bool		repl[Natts_pg_class] = {0};
	ListCell   *lc;
	ArrayBuildState *astate = NULL;
	HeapTuple	newtup;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	foreach(lc, defs)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		char	   *s = psprintf("%s=%s", def->defname, defGetString(def));

		astate = accumArrayResult(astate, CStringGetTextDatum(s), false,
								  TEXTOID, CurrentMemoryContext);
	}
	repl[Anum_pg_class_reloptions - 1] = true;
	if (astate)
		values[Anum_pg_class_reloptions - 1] = makeArrayResult(astate, CurrentMemoryContext);
	else
		nulls[Anum_pg_class_reloptions - 1] = true;
	newtup = heap_modify_tuple(tup, RelationGetDescr(classrel), values, nulls, repl);
	CatalogTupleUpdate(classrel, &newtup->t_self, newtup);
	table_close(classrel, RowExclusiveLock);
	CommandCounterIncrement();
}

static bool
table_has_storage(Relation rel)
{
	WcMetaData	meta;
	WcManifest *m;

	wc_meta_read(rel, &meta);
	for (uint32 i = 0; i < meta.ngens; i++)
		if (meta.gens[i].npages > 0)
			return true;
	m = wc_manifest_read(meta.storage_id, GetLatestSnapshot());
	return m->nruns > 0;
}

static bool
is_key_column(Relation rel, const char *colname)
{
	WcTableInfo *info = wc_table_info(rel);
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), colname);

	for (int i = 0; i < info->npk + info->nck; i++)
		if (info->cols[i].attnum == attnum)
			return true;
	return false;
}

static bool
is_counter_column(Relation rel, AttrNumber attnum)
{
	WcTableInfo *info = wc_table_info(rel);

	for (int i = 0; i < info->ncounters; i++)
		if (info->counters[i] == attnum)
			return true;
	return false;
}

static void
refuse_counter_column_change(Relation rel, AttrNumber attnum, const char *colname,
							 const char *what)
{
	if (attnum != InvalidAttrNumber && is_counter_column(rel, attnum))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s counter column \"%s\" of widecol table \"%s\"",
						what, colname, RelationGetRelationName(rel)),
				 errhint("RESET (widecol.counter_columns) on an empty table first, or create a new table.")));
}

static void
refuse_key_column_change(Relation rel, const char *colname, const char *what)
{
	if (colname && is_key_column(rel, colname))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s key column \"%s\" of widecol table \"%s\"",
						what, colname, RelationGetRelationName(rel)),
				 errhint("Create a new table with the key you want and copy the rows with INSERT ... SELECT.")));
	if (colname)
		refuse_counter_column_change(rel, get_attnum(RelationGetRelid(rel), colname),
									 colname, what);
}

/*
 * Foreign-key triggers need system columns (xmin) of the referencing rows
 * and lock them with FOR KEY SHARE; widecol versions have neither.
 */
static void
refuse_foreign_key(const char *relname, Node *def)
{
	if (def && IsA(def, Constraint) && ((Constraint *) def)->contype == CONSTR_FOREIGN)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("FOREIGN KEY constraints are not supported on widecol table \"%s\"",
						relname),
				 errhint("Check references in the application, or keep the referencing data in a heap table.")));
}

/*
 * A column change on a table recurses into the tables that inherit from it:
 * refuse it when it would reach a key column of a widecol child.
 */
static void
refuse_in_inheritors(Oid relid, const char *colname, const char *what)
{
	List	   *children;
	ListCell   *lc;

	if (!OidIsValid(relid) || colname == NULL)
		return;
	children = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, children)
	{
		Oid			child = lfirst_oid(lc);

		if (child != relid && wc_relation_is_widecol(child))
		{
			Relation	rel = table_open(child, AccessShareLock);

			refuse_key_column_change(rel, colname, what);
			table_close(rel, AccessShareLock);
		}
	}
}

/* ---------- the hook ---------- */

/* The next utility hook, or PostgreSQL's own (also for shardcopy.c). */
void
wc_utility_next(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_utility_hook)
		prev_utility_hook(pstmt, queryString, readOnlyTree, context, params,
						  queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static bool
am_is_widecol(const char *am)
{
	if (am == NULL)
		am = default_table_access_method;
	return am && strcmp(am, WIDECOL_AM_NAME) == 0;
}

static void
handle_create(CreateStmt *stmt, PlannedStmt *pstmt, const char *queryString,
			  ProcessUtilityContext context, ParamListInfo params,
			  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	List	   *wc,
			   *rest;
	Oid			relid;
	Relation	rel;
	WcTableInfo info;

	wc_split_options(stmt->options, &wc, &rest);
	if (!am_is_widecol(stmt->accessMethod) || stmt->partspec != NULL)
	{
		if (wc != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("widecol.* options are only valid for tables created USING widecol")));
		wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
		return;
	}
	wc_check_preloaded();
	if (stmt->relation->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("widecol does not support %s tables",
						stmt->relation->relpersistence == RELPERSISTENCE_TEMP ? "temporary" : "unlogged"),
				 errhint("Create a permanent table, or use USING heap for this one.")));
	if (stmt->if_not_exists &&
		OidIsValid(RangeVarGetRelid(stmt->relation, NoLock, true)))
	{
		wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
		return;
	}
	{
		ListCell   *lc;

		foreach(lc, stmt->tableElts)
		{
			Node	   *elt = lfirst(lc);
			ListCell   *lc2;

			if (IsA(elt, ColumnDef))
				foreach(lc2, ((ColumnDef *) elt)->constraints)
					refuse_foreign_key(stmt->relation->relname, lfirst(lc2));
			else
				refuse_foreign_key(stmt->relation->relname, elt);
		}
	}
	stmt->options = rest;
	wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);

	relid = RangeVarGetRelid(stmt->relation, NoLock, false);
	rel = table_open(relid, AccessExclusiveLock);
	wc_build_table_info(rel, wc, &info);	/* validates */
	if (wc != NIL)
		write_options(relid, list_concat(wc_stored_options(relid), wc));
	table_close(rel, NoLock);
}


/*
 * Run an ALTER TABLE that sets other reloptions with the widecol.* ones taken
 * out of pg_class for its duration, because PostgreSQL re-validates every
 * stored option against heap's list.
 */
static void
run_stripped(Oid relid, PlannedStmt *pstmt, const char *queryString,
			 ProcessUtilityContext context, ParamListInfo params,
			 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	List	   *wc,
			   *rest;

	wc_split_options(wc_stored_options(relid), &wc, &rest);
	if (wc != NIL)
		write_options(relid, rest);
	wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
	if (wc != NIL)
	{
		List	   *none;

		wc_split_options(wc_stored_options(relid), &none, &rest);
		write_options(relid, list_concat(rest, wc));
	}
}

static List *
merge_options(List *old, List *changes, bool reset)
{
	ListCell   *lc;

	foreach(lc, changes)
	{
		DefElem    *chg = lfirst_node(DefElem, lc);
		List	   *kept = NIL;
		ListCell   *lc2;

		foreach(lc2, old)
		{
			DefElem    *def = lfirst_node(DefElem, lc2);

			if (strcmp(def->defname, chg->defname) != 0)
				kept = lappend(kept, def);
		}
		if (!reset)
		{
			if (chg->arg == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"%s\" needs a value", chg->defname)));
			kept = lappend(kept, chg);
		}
		old = kept;
	}
	return old;
}

/*
 * ALTER TABLE ... SET/RESET (widecol.*): the new options are stored once
 * the key and counter columns are known unchanged, or the table is empty.
 */
static void
apply_widecol_options(Oid relid, List *wc_set, List *wc_reset)
{
	Relation	rel;
	List	   *wc,
			   *rest,
			   *newwc;
	WcTableInfo oldinfo,
				newinfo;

	rel = table_open(relid, AccessExclusiveLock);
	wc_split_options(wc_stored_options(relid), &wc, &rest);
	wc_build_table_info(rel, wc, &oldinfo);
	newwc = merge_options(merge_options(wc, wc_set, false), wc_reset, true);
	wc_build_table_info(rel, newwc, &newinfo);
	if ((oldinfo.npk != newinfo.npk || oldinfo.nck != newinfo.nck ||
		 memcmp(oldinfo.cols, newinfo.cols, sizeof(oldinfo.cols)) != 0) &&
		table_has_storage(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot change the key of widecol table \"%s\" because it contains data",
						RelationGetRelationName(rel)),
				 errhint("TRUNCATE the table first, or create a new table with the new key and copy the rows with INSERT ... SELECT.")));
	/* stored increments would change meaning */
	if ((oldinfo.ncounters != newinfo.ncounters ||
		 memcmp(oldinfo.counters, newinfo.counters, sizeof(oldinfo.counters)) != 0) &&
		table_has_storage(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot change the counter columns of widecol table \"%s\" because it contains data",
						RelationGetRelationName(rel)),
				 errhint("TRUNCATE the table first, or create a new table and copy the rows.")));
	write_options(relid, list_concat(rest, newwc));
	table_close(rel, NoLock);
}

static void
handle_alter(AlterTableStmt *stmt, PlannedStmt *pstmt, const char *queryString,
			 ProcessUtilityContext context, ParamListInfo params,
			 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	List	   *wc_set = NIL,
			   *wc_reset = NIL,
			   *cmds = NIL;
	List	   *relopt_cmds = NIL;
	ListCell   *lc;
	Relation	rel;

	if (stmt->objtype != OBJECT_TABLE || !wc_relation_is_widecol(relid))
	{
		if (stmt->relation && stmt->relation->inh)
		{
			foreach(lc, stmt->cmds)
			{
				AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

				if (cmd->subtype == AT_DropColumn)
					refuse_in_inheritors(relid, cmd->name, "drop");
				else if (cmd->subtype == AT_AlterColumnType)
					refuse_in_inheritors(relid, cmd->name, "change the type of");
			}
		}
		wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
		return;
	}
	rel = table_open(relid, AccessShareLock);
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		switch (cmd->subtype)
		{
			case AT_SetRelOptions:
			case AT_ResetRelOptions:
				{
					List	   *wc,
							   *rest;

					wc_split_options((List *) cmd->def, &wc, &rest);
					if (cmd->subtype == AT_SetRelOptions)
						wc_set = list_concat(wc_set, wc);
					else
						wc_reset = list_concat(wc_reset, wc);
					if (rest != NIL)
					{
						cmd->def = (Node *) rest;
						relopt_cmds = lappend(relopt_cmds, cmd);
					}
					break;
				}
			case AT_AddConstraint:
				refuse_foreign_key(RelationGetRelationName(rel), cmd->def);
				cmds = lappend(cmds, cmd);
				break;
			case AT_DropColumn:
				refuse_key_column_change(rel, cmd->name, "drop");
				cmds = lappend(cmds, cmd);
				break;
			case AT_AlterColumnType:
				refuse_key_column_change(rel, cmd->name, "change the type of");
				cmds = lappend(cmds, cmd);
				break;
			default:
				cmds = lappend(cmds, cmd);
				break;
		}
	}
	table_close(rel, AccessShareLock);

	/*
	 * Other reloptions run as their own ALTER TABLE with the widecol options
	 * taken out (see run_stripped); everything else runs with them in place,
	 * since a rewrite must keep the key.
	 */
	if (relopt_cmds != NIL)
	{
		stmt->cmds = relopt_cmds;
		run_stripped(relid, pstmt, queryString, context, params, queryEnv, dest, qc);
		CommandCounterIncrement();
	}
	if (cmds != NIL)
	{
		stmt->cmds = cmds;
		wc_utility_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
	}

	if (wc_set != NIL || wc_reset != NIL)
		apply_widecol_options(relid, wc_set, wc_reset);
}

/*
 * Logical decoding reads heap WAL records only; widecol's are generic WAL, so
 * a publication would silently send nothing for a widecol table.  Naming one
 * is an error; a publication of all tables (or of a schema) that includes
 * some gets a WARNING.  Streaming replication is unaffected.
 */
static int
count_widecol_tables(Oid nsp)
{
	Oid			amoid = wc_am_oid();
	Relation	pg_class_rel;
	TableScanDesc scan;
	HeapTuple	tup;
	int			n = 0;

	if (!OidIsValid(amoid))
		return 0;
	pg_class_rel = table_open(RelationRelationId, AccessShareLock);
	scan = table_beginscan_catalog(pg_class_rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		if (form->relam == amoid && form->relkind == RELKIND_RELATION &&
			(!OidIsValid(nsp) || form->relnamespace == nsp))
			n++;
	}
	table_endscan(scan);
	table_close(pg_class_rel, AccessShareLock);
	return n;
}

static void
warn_unpublished(int n, const char *where)
{
	if (n > 0)
		ereport(WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("changes to the %d widecol table(s) %s are not published", n, where),
				 errdetail("Logical decoding does not see writes to widecol tables."),
				 errhint("Use streaming replication, or copy widecol tables with pg_dump.")));
}

static void
check_publication(List *pubobjects, bool for_all_tables)
{
	ListCell   *lc;

	if (for_all_tables)
		warn_unpublished(count_widecol_tables(InvalidOid), "of this database");
	foreach(lc, pubobjects)
	{
		PublicationObjSpec *obj = lfirst_node(PublicationObjSpec, lc);

		if (obj->pubobjtype == PUBLICATIONOBJ_TABLE && obj->pubtable)
		{
			Oid			relid = RangeVarGetRelid(obj->pubtable->relation, NoLock, true);

			if (wc_relation_is_widecol(relid))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("widecol table \"%s\" cannot be published",
								obj->pubtable->relation->relname),
						 errdetail("Logical decoding does not see writes to widecol tables."),
						 errhint("Use streaming replication, or copy the table with pg_dump.")));
		}
		else if (obj->pubobjtype == PUBLICATIONOBJ_TABLES_IN_SCHEMA ||
				 obj->pubobjtype == PUBLICATIONOBJ_TABLES_IN_CUR_SCHEMA)
		{
			List	   *path = obj->name ? NIL : fetch_search_path(false);
			Oid			nsp = obj->name ? get_namespace_oid(obj->name, true)
				: (path ? linitial_oid(path) : InvalidOid);

			if (OidIsValid(nsp))
				warn_unpublished(count_widecol_tables(nsp), "in this schema");
		}
	}
}

static void
wc_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	/* We may modify the statement, so work on a copy of a read-only tree. */
	if (IsA(parsetree, CreateStmt) || IsA(parsetree, AlterTableStmt) ||
		IsA(parsetree, CreateTableAsStmt))
	{
		if (readOnlyTree)
			pstmt = copyObject(pstmt);
		parsetree = pstmt->utilityStmt;
	}

	switch (nodeTag(parsetree))
	{
		case T_CreateStmt:
			handle_create((CreateStmt *) parsetree, pstmt, queryString, context,
						  params, queryEnv, dest, qc);
			return;
		case T_AlterTableStmt:
			handle_alter((AlterTableStmt *) parsetree, pstmt, queryString,
						 context, params, queryEnv, dest, qc);
			return;
		case T_CreateTableAsStmt:
			{
				IntoClause *into = ((CreateTableAsStmt *) parsetree)->into;
				List	   *wc,
						   *rest;

				wc_split_options(into->options, &wc, &rest);
				if (wc != NIL)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("CREATE TABLE AS does not accept widecol.* options"),
							 errhint("Create the table with its key first, then fill it with INSERT ... SELECT.")));
				if (am_is_widecol(into->accessMethod) &&
					into->rel->relpersistence != RELPERSISTENCE_PERMANENT)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("widecol does not support temporary or unlogged tables")));
				break;
			}
		case T_CopyStmt:
			if (wc_copy_in_batches(pstmt, queryString, context, params, queryEnv, dest, qc))
				return;
			break;
		case T_CreatePublicationStmt:
			{
				CreatePublicationStmt *stmt = (CreatePublicationStmt *) parsetree;

				check_publication(stmt->pubobjects, stmt->for_all_tables);
				break;
			}
		case T_AlterPublicationStmt:
			{
				AlterPublicationStmt *stmt = (AlterPublicationStmt *) parsetree;

				if (stmt->action != AP_DropObjects)
					check_publication(stmt->pubobjects, false);
				break;
			}
		case T_IndexStmt:
			{
				IndexStmt  *stmt = (IndexStmt *) parsetree;
				Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);

				if (wc_relation_is_widecol(relid))
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("widecol tables do not support indexes"),
							 errhint("widecol tables are read by their partition and clustering key; for other access paths create a second widecol table keyed for that query.")));
				break;
			}
		case T_RenameStmt:
			{
				RenameStmt *stmt = (RenameStmt *) parsetree;

				if (stmt->renameType == OBJECT_COLUMN && stmt->relation)
				{
					Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);

					if (wc_relation_is_widecol(relid))
					{
						Relation	rel = table_open(relid, AccessShareLock);

						refuse_key_column_change(rel, stmt->subname, "rename");
						table_close(rel, AccessShareLock);
					}
					else if (stmt->relation->inh)
						refuse_in_inheritors(relid, stmt->subname, "rename");
				}
				break;
			}
		default:
			break;
	}
	wc_utility_next(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
}

/* DROP TABLE: the manifest rows of the relation go with it. */
static void
wc_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == RelationRelationId && subId > 0 &&
		wc_relation_is_widecol(objectId))
	{
		Relation	rel = relation_open(objectId, AccessShareLock);
		WcTableInfo *info = wc_table_info(rel);

		for (int i = 0; i < info->npk + info->nck; i++)
			if (info->cols[i].attnum == subId)
				ereport(ERROR,
						(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
						 errmsg("cannot drop key column \"%s\" of widecol table \"%s\"",
								NameStr(TupleDescAttr(RelationGetDescr(rel), subId - 1)->attname),
								RelationGetRelationName(rel)),
						 errhint("Drop the table, or copy its rows into a table with another key first.")));
		refuse_counter_column_change(rel, subId,
									 NameStr(TupleDescAttr(RelationGetDescr(rel), subId - 1)->attname),
									 "drop");
		relation_close(rel, AccessShareLock);
	}
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		wc_relation_is_widecol(objectId))
	{
		Relation	rel = relation_open(objectId, AccessExclusiveLock);
		uint64		storage_id;

		wc_damage_clear(rel);
		if (wc_meta_storage_id(rel, &storage_id))
			wc_manifest_drop_storage(storage_id);
		else if (RelationGetNumberOfBlocks(rel) > 0)
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("widecol: the metapage of \"%s\" is unreadable; its rows in widecol.segment are left behind",
							RelationGetRelationName(rel))));
		relation_close(rel, NoLock);
	}
}

void
wc_install_utility_hook(void)
{
	prev_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = wc_process_utility;
	prev_object_access_hook = object_access_hook;
	object_access_hook = wc_object_access;
}
