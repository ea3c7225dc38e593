/*
 * qttrigger.c — the statement trigger that keeps a query table in step with
 * its base: widecol.query_table_trigger(id).
 *
 * Why C: the PL/pgSQL version generated its statements as text and planned
 * them with EXECUTE at every statement on the base, which cost more than the
 * write itself for a single-row INSERT.  Here the statements of each query
 * table are generated once per shape (the SQL functions of
 * 20_query_tables.sql write them), prepared with the transition tables
 * registered, and kept: a statement on the base runs saved plans.  A plan is
 * kept per size class of the transition table too, because a plan made for
 * one row (nested loop of seeks) is the wrong one for a COPY.  Plans are
 * dropped when the query table, its base or a schema is altered or renamed
 * (the text names them), and regenerated on next use.
 *
 * Derived rows go into the query table without an INSERT statement: the
 * trigger runs the SELECT of the rows and hands each one to the table AM
 * (table_tuple_insert), as ModifyTable would, when nothing but widecol's
 * own guard could see the difference (no other trigger, no row-level
 * security, no constraint, INSERT granted on the whole table).  Setting up
 * and finishing a ModifyTable per query table and statement cost as much
 * as deriving the rows.  The catalog row is read through its primary key,
 * not by a query, and kept until the base or the query table changes.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "parser/parse_relation.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "widecol.h"
#include "access/access.h"
#include "api/api.h"
#include "storage/cache.h"
#include "storage/tableinfo.h"

/* What one statement on the base asks of a query table. */
typedef enum QtShape
{
	QT_INSERT,					/* new keys only */
	QT_UPSERT,					/* an INSERT that replaced rows */
	QT_UPSERT_REPEATED,			/* ... and wrote a key twice */
	QT_UPDATE,					/* a base whose UPDATEs replace nothing else */
	QT_UPDATE_REPLACED,			/* a keyed widecol base */
	QT_UPDATE_REPLACED_REPEATED,
	QT_DELETE,
	QT_TRUNCATE,
	QT_REPEATED,				/* does an UPDATE's NEW TABLE repeat a key? */
	QT_NSHAPES
} QtShape;

static const char *const shape_names[QT_NSHAPES] = {
	"INSERT", "UPSERT", "UPSERT_REPEATED", "UPDATE", "UPDATE_REPLACED",
	"UPDATE_REPLACED_REPEATED", "DELETE", "TRUNCATE", "REPEATED"
};

/* transition tables up to this many rows get the small plans */
#define QT_SMALL_ROWS 1000

/* One statement of a shape. */
typedef struct QtStatement
{
	char	   *sql;
	SPIPlanPtr	plan;			/* of sql, made on first use */
	SPIPlanPtr	rows_plan;		/* an INSERT into the query table: the SELECT
								 * of its rows, whose columns are the table's */
} QtStatement;

typedef struct QtPlans
{
	int32		id;				/* hash key: widecol.query_table.id */
	bool		valid;			/* false: regenerate on next use */
	Oid			query_table;
	Oid			base;
	TransactionId xmin;			/* of the catalog row the plans were made for */
	char	   *search_path;
	Oid			guard;			/* widecol._query_table_guard() */
	int			nstmts[QT_NSHAPES][2];	/* -1: not made yet */
	QtStatement *stmts[QT_NSHAPES][2];
} QtPlans;

static HTAB *qt_plans = NULL;
static bool allow_query_table_writes = false;

/*
 * Set a GUC for the trigger's statements, as a function's SET clause
 * would (undone when the trigger returns, or by the abort of its
 * (sub)transaction).  Only when needed: undoing walks every GUC.
 */
static void
set_for_statements(int *level, const char *name, const char *value)
{
	if (*level == 0)
		*level = NewGUCNestLevel();
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

static void
free_plans(QtPlans *e)
{
	for (int s = 0; s < QT_NSHAPES; s++)
		for (int z = 0; z < 2; z++)
		{
			for (int i = 0; i < e->nstmts[s][z]; i++)
			{
				QtStatement *st = &e->stmts[s][z][i];

				if (st->plan)
					SPI_freeplan(st->plan);
				if (st->rows_plan)
					SPI_freeplan(st->rows_plan);
				pfree(st->sql);
			}
			if (e->stmts[s][z])
				pfree(e->stmts[s][z]);
			e->stmts[s][z] = NULL;
			e->nstmts[s][z] = -1;
		}
	if (e->search_path)
		pfree(e->search_path);
	e->search_path = NULL;
	e->valid = false;
}

/* A rename or ALTER of a query table or base, or of any schema. */
static void
relcache_callback(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	QtPlans    *e;

	if (qt_plans == NULL)
		return;
	hash_seq_init(&seq, qt_plans);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (!OidIsValid(relid) || e->query_table == relid || e->base == relid)
			e->valid = false;
}

static void
namespace_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	relcache_callback(arg, InvalidOid);
}

static QtPlans *
plans_entry(int32 id)
{
	QtPlans    *e;
	bool		found;

	if (qt_plans == NULL)
	{
		qt_plans = wc_hash_create("widecol query table plans", 16, sizeof(int32),
								  sizeof(QtPlans), TopMemoryContext);
		CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, namespace_callback, (Datum) 0);
	}
	e = hash_search(qt_plans, &id, HASH_ENTER, &found);
	if (!found)
	{
		memset(((char *) e) + sizeof(int32), 0, sizeof(QtPlans) - sizeof(int32));
		for (int s = 0; s < QT_NSHAPES; s++)
			for (int z = 0; z < 2; z++)
				e->nstmts[s][z] = -1;
	}
	return e;
}

/* A relation's name as regclass prints it (qualified when not visible). */
static char *
rel_text(Oid relid)
{
	return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

static Oid
rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* The catalog row of a query table, as the trigger needs it. */
typedef struct QtCatalogRow
{
	Oid			query_table;
	Oid			base;
	TransactionId xmin;
	char	   *search_path;
} QtCatalogRow;

/*
 * Read the catalog row of query table id (false if there is none) through
 * the catalog's primary key, with the statement's snapshot, as a SELECT
 * would: a query cost an executor start and a scan at every statement on
 * the base.  The catalog is readable by everyone.
 */
static bool
read_catalog_row(int32 id, QtCatalogRow *row)
{
	Oid			relid = get_relname_relid("query_table", get_namespace_oid("widecol", false));
	Relation	rel;
	TupleDesc	desc;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		isnull;

	if (!OidIsValid(relid))
		elog(ERROR, "widecol: catalog widecol.query_table is missing");
	rel = table_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	ScanKeyInit(&key, attnameAttNum(rel, "id", false), BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(id));
	scan = systable_beginscan(rel, RelationGetPrimaryKeyIndex(rel), true,
							  ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot(),
							  1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		row->query_table = DatumGetObjectId(heap_getattr(tup, attnameAttNum(rel, "query_table", false),
														 desc, &isnull));
		row->base = DatumGetObjectId(heap_getattr(tup, attnameAttNum(rel, "base", false), desc, &isnull));
		row->xmin = HeapTupleHeaderGetXmin(tup->t_data);
		row->search_path = TextDatumGetCString(heap_getattr(tup, attnameAttNum(rel, "search_path", false),
															desc, &isnull));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return HeapTupleIsValid(tup);
}

/*
 * The catalog row of query table id, checked against the trigger that
 * fires: its base is this table and its query table has this table's owner
 * (a trigger never writes into another role's table).  Plans made for an
 * older row of the same id (the extension dropped and created again) go.
 */
static QtPlans *
query_table_for(TriggerData *td, int32 id)
{
	Oid			relid = RelationGetRelid(td->tg_relation);
	QtCatalogRow row;
	QtPlans    *e;

	/*
	 * An entry checked since the last change of either table still holds:
	 * the catalog changes only together with the base's triggers
	 * (create_query_table, DROP), and those, like a change of owner,
	 * invalidate the base's or the query table's relcache entry, which
	 * invalidates the entry (relcache_callback).
	 */
	e = qt_plans ? hash_search(qt_plans, &id, HASH_FIND, NULL) : NULL;
	if (e && e->valid && e->base == relid)
		return e;
	if (!read_catalog_row(id, &row))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("trigger %s on table %s names query table %d which is not registered",
						td->tg_trigger->tgname, rel_text(relid), id),
				 errhint("Drop the trigger (DROP TRIGGER %s ON %s) or recreate the query table.",
						 quote_identifier(td->tg_trigger->tgname), rel_text(relid))));
	if (row.base != relid)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("trigger %s on table %s names query table %s of another table (%s)",
						td->tg_trigger->tgname, rel_text(relid), rel_text(row.query_table),
						rel_text(row.base)),
				 errhint("Drop the trigger: DROP TRIGGER %s ON %s",
						 quote_identifier(td->tg_trigger->tgname), rel_text(relid))));
	if (rel_owner(row.query_table) != rel_owner(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("query table %s and its base table %s have different owners",
						rel_text(row.query_table), rel_text(relid)),
				 errhint("Give both the same owner: ALTER TABLE %s OWNER TO %s", rel_text(row.query_table),
						 quote_identifier(GetUserNameFromId(rel_owner(relid), false)))));

	e = plans_entry(id);
	if (e->valid && (e->query_table != row.query_table || e->base != row.base || e->xmin != row.xmin))
		e->valid = false;
	if (!e->valid)
	{
		List	   *guard = list_make2(makeString("widecol"), makeString("_query_table_guard"));

		free_plans(e);
		e->query_table = row.query_table;
		e->base = row.base;
		e->xmin = row.xmin;
		e->search_path = MemoryContextStrdup(TopMemoryContext, row.search_path);
		e->guard = LookupFuncName(guard, 0, NULL, true);
		e->valid = true;
	}
	return e;
}

/*
 * Do the rows of plan (a SELECT) have the columns of rel, type for type?
 * Then they can be written as they come; otherwise the INSERT statement
 * converts them (assignment casts, typmods).
 */
static bool
rows_fit(SPIPlanPtr plan, Relation rel)
{
	List	   *sources = SPI_plan_get_plan_sources(plan);
	TupleDesc	rows,
				table = RelationGetDescr(rel);

	if (list_length(sources) != 1)
		return false;
	rows = ((CachedPlanSource *) linitial(sources))->resultDesc;
	if (rows == NULL || rows->natts != table->natts)
		return false;
	for (int i = 0; i < table->natts; i++)
	{
		Form_pg_attribute r = TupleDescAttr(rows, i),
					t = TupleDescAttr(table, i);

		if (t->attisdropped || r->atttypid != t->atttypid ||
			(t->atttypmod >= 0 && r->atttypmod != t->atttypmod))
			return false;
	}
	return true;
}

static SPIPlanPtr
prepare_kept(const char *sql)
{
	SPIPlanPtr	p = SPI_prepare(sql, 0, NULL);

	if (p == NULL)
		elog(ERROR, "widecol: SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(p);
	return p;
}

/*
 * The statements of one shape and size class, made on first use from what
 * widecol._qt_trigger_statements(id, shape) writes.  Runs under the query
 * table's search_path (set by the caller).  The SELECT of an INSERT's rows
 * is prepared at once; a statement itself only when it has to run.
 */
static QtStatement *
shape_statements(QtPlans *e, QtShape shape, bool large, int *n)
{
	int			z = large ? 1 : 0;
	Oid			argtypes[2] = {INT4OID, TEXTOID};
	Datum		args[2];
	QtStatement *stmts;
	uint64		nrows;
	Relation	rel;

	if (e->nstmts[shape][z] >= 0)
	{
		*n = e->nstmts[shape][z];
		return e->stmts[shape][z];
	}
	args[0] = Int32GetDatum(e->id);
	args[1] = CStringGetTextDatum(shape_names[shape]);
	if (SPI_execute_with_args("SELECT statement, insert_rows FROM widecol._qt_trigger_statements($1, $2)",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "widecol: could not generate the statements of query table %d", e->id);
	nrows = SPI_processed;
	stmts = MemoryContextAllocZero(TopMemoryContext, sizeof(QtStatement) * Max(nrows, 1));
	rel = table_open(e->query_table, AccessShareLock);
	PG_TRY();
	{
		for (uint64 i = 0; i < nrows; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			char	   *rows_sql = SPI_getvalue(tup, SPI_tuptable->tupdesc, 2);

			stmts[i].sql = MemoryContextStrdup(TopMemoryContext,
											   SPI_getvalue(tup, SPI_tuptable->tupdesc, 1));
			if (rows_sql != NULL)
			{
				stmts[i].rows_plan = prepare_kept(rows_sql);
				if (!rows_fit(stmts[i].rows_plan, rel))
				{
					SPI_freeplan(stmts[i].rows_plan);
					stmts[i].rows_plan = NULL;
				}
			}
		}
	}
	PG_CATCH();
	{
		for (uint64 i = 0; i < nrows; i++)
		{
			if (stmts[i].rows_plan)
				SPI_freeplan(stmts[i].rows_plan);
			if (stmts[i].sql)
				pfree(stmts[i].sql);
		}
		pfree(stmts);
		PG_RE_THROW();
	}
	PG_END_TRY();
	table_close(rel, AccessShareLock);
	e->stmts[shape][z] = stmts;
	e->nstmts[shape][z] = (int) nrows;
	*n = (int) nrows;
	return stmts;
}

/*
 * May the rows of this statement go into the query table without an
 * INSERT?  Only where the INSERT would do nothing more than write them:
 * the user may insert into the whole table (column privileges are the
 * statement's to check), no row-level security, no trigger but widecol's
 * guard, no constraint or generated column (ALTERed in by hand).
 */
static bool
direct_writes_allowed(QtPlans *e, Relation rel)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	TriggerDesc *trigdesc = rel->trigdesc;

	if (rel->rd_rel->relkind != RELKIND_RELATION || !wc_relation_is_widecol(RelationGetRelid(rel)))
		return false;
	if (pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		return false;
	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, true) == RLS_ENABLED)
		return false;
	if (constr && (constr->has_not_null || constr->num_check > 0 || constr->has_generated_stored))
		return false;
	for (int i = 0; trigdesc && i < trigdesc->numtriggers; i++)
	{
		Trigger    *t = &trigdesc->triggers[i];

		if (t->tgfoid != e->guard || !TRIGGER_FOR_BEFORE(t->tgtype) || TRIGGER_FOR_ROW(t->tgtype))
			return false;
	}
	return true;
}

/* Rows of a SELECT written into a query table as they come. */
typedef struct DirectDest
{
	DestReceiver pub;
	Relation	rel;
	TupleTableSlot *slot;		/* of rel */
	CommandId	cid;
} DirectDest;

static void
direct_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	DirectDest *d = (DirectDest *) self;

	/* rows_fit checked the prepared SELECT's columns; the plan cache keeps them */
	Assert(typeinfo->natts == RelationGetDescr(d->rel)->natts);
	d->slot = MakeSingleTupleTableSlot(RelationGetDescr(d->rel), table_slot_callbacks(d->rel));
	d->cid = GetCurrentCommandId(true);
	wc_insert_rows_of_statement(d->cid);
}

static bool
direct_receive(TupleTableSlot *in, DestReceiver *self)
{
	DirectDest *d = (DirectDest *) self;
	TupleTableSlot *out = d->slot;
	int			natts = out->tts_tupleDescriptor->natts;

	slot_getallattrs(in);
	ExecClearTuple(out);
	memcpy(out->tts_values, in->tts_values, sizeof(Datum) * natts);
	memcpy(out->tts_isnull, in->tts_isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(out);
	table_tuple_insert(d->rel, out, d->cid, 0, NULL);
	return true;
}

static void
direct_shutdown(DestReceiver *self)
{
	DirectDest *d = (DirectDest *) self;

	if (d->slot)
		ExecDropSingleTupleTableSlot(d->slot);
	d->slot = NULL;
}

static void
direct_destroy(DestReceiver *self)
{
}

/* Run the SELECT of st's rows and write them into rel. */
static void
run_direct(QtStatement *st, Relation rel)
{
	DirectDest	d = {{direct_receive, direct_startup, direct_shutdown, direct_destroy, DestNone}};
	SPIExecuteOptions options = {0};
	int			rc;

	d.rel = rel;
	options.dest = &d.pub;
	/* as for the statement: a new command id, and a snapshot that sees the earlier ones */
	options.read_only = false;
	rc = SPI_execute_plan_extended(st->rows_plan, &options);
	if (rc < 0)
		elog(ERROR, "widecol: query table statement failed: %s", SPI_result_code_string(rc));
}

/* What one call of the trigger set up for its statements. */
typedef struct QtRun
{
	bool		direct_known;	/* has a statement asked for direct writes? */
	Relation	direct;			/* then the query table, NULL if not allowed */
	int			nestlevel;		/* GUC nest level of its settings, 0: none */
} QtRun;

/*
 * Run the statements of one shape; returns the first one's first column
 * when it returns a row (QT_REPEATED), else false.
 */
static bool
run_shape(QtPlans *e, QtShape shape, bool large, QtRun *run)
{
	int			n;
	QtStatement *stmts = shape_statements(e, shape, large, &n);
	bool		result = false;

	for (int i = 0; i < n; i++)
	{
		QtStatement *st = &stmts[i];
		int			rc;

		if (st->rows_plan && !run->direct_known)
		{
			Relation	rel = table_open(e->query_table, RowExclusiveLock);

			run->direct = direct_writes_allowed(e, rel) ? rel : NULL;
			if (run->direct == NULL)
				table_close(rel, NoLock);
			run->direct_known = true;
		}
		if (st->rows_plan && run->direct)
		{
			run_direct(st, run->direct);
			continue;
		}
		/* a statement that writes the query table passes its guard */
		if (!allow_query_table_writes)
			set_for_statements(&run->nestlevel, "widecol.allow_query_table_writes", "on");
		if (st->plan == NULL)
			st->plan = prepare_kept(st->sql);
		rc = SPI_execute_plan(st->plan, NULL, NULL, false, 0);
		if (rc < 0)
			elog(ERROR, "widecol: query table statement failed: %s", SPI_result_code_string(rc));
		if (rc == SPI_OK_SELECT && SPI_processed > 0)
		{
			bool		isnull;

			result = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		}
	}
	return result;
}

/*
 * widecol.query_table_trigger(id): AFTER ... FOR EACH STATEMENT on a base,
 * one per query table and event (INSERT, UPDATE, DELETE each need their own
 * for their transition tables).  Runs as the user who writes the base.
 */
PG_FUNCTION_INFO_V1(widecol_query_table_trigger);
Datum
widecol_query_table_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	bool		keyed;
	int32		id;
	QtPlans    *e;
	QtShape		shape;
	bool		large;
	QtRun		run = {0};

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) || td->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("widecol.query_table_trigger() must be an AFTER ... FOR EACH STATEMENT trigger with the query table's id as its argument")));
	rel = td->tg_relation;
	id = pg_strtoint32(td->tg_trigger->tgargs[0]);
	/* an INSERT that wrote nothing (the recorded keys are an earlier one's) */
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event) &&
		(td->tg_newtable == NULL || tuplestore_tuple_count(td->tg_newtable) == 0))
		return PointerGetDatum(NULL);

	SPI_connect();
	SPI_register_trigger_data(td);
	e = query_table_for(td, id);
	keyed = wc_relation_is_widecol(RelationGetRelid(rel)) &&
		!WcTableIsKeyless(wc_table_info(rel));

	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		shape = QT_TRUNCATE;
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		shape = QT_DELETE;
	else if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
	{
		Oid			relid = RelationGetRelid(rel);

		shape = QT_INSERT;
		if (keyed && wc_inserted_keys_repeated(relid))
			shape = QT_UPSERT_REPEATED;
		else if (keyed && wc_replaced_rows(relid) != NIL)
			shape = QT_UPSERT;
	}
	else
		shape = keyed ? QT_UPDATE_REPLACED : QT_UPDATE;
	large = (td->tg_newtable && tuplestore_tuple_count(td->tg_newtable) > QT_SMALL_ROWS) ||
		(td->tg_oldtable && tuplestore_tuple_count(td->tg_oldtable) > QT_SMALL_ROWS);

	/*
	 * The definition's names resolve with the search_path of its creation
	 * (most often the writer's already: then setting it would only make
	 * every saved plan check its path anew).
	 */
	if (namespace_search_path == NULL || strcmp(namespace_search_path, e->search_path) != 0)
		set_for_statements(&run.nestlevel, "search_path", e->search_path);
	if (shape == QT_UPDATE_REPLACED)
	{
		if (run_shape(e, QT_REPEATED, large, &run))
			shape = QT_UPDATE_REPLACED_REPEATED;
		/* the rows a moved row replaced are read as before the UPDATE */
		wc_read_before_begin(RelationGetRelid(rel));
		run_shape(e, shape, large, &run);
		wc_read_before_end();
	}
	else
		run_shape(e, shape, large, &run);
	if (run.direct)
		table_close(run.direct, NoLock);
	if (run.nestlevel > 0)
		AtEOXact_GUC(true, run.nestlevel);

	SPI_finish();
	return PointerGetDatum(NULL);
}

/*
 * widecol._query_table_guard(): BEFORE ... FOR EACH STATEMENT on a query
 * table.  A write into a query table that its base's triggers or a rebuild
 * did not make would silently disagree with the base, so it is refused
 * unless widecol.allow_query_table_writes is on.
 */
PG_FUNCTION_INFO_V1(widecol_query_table_guard);
Datum
widecol_query_table_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("widecol._query_table_guard() must be called as a trigger")));
	if (!allow_query_table_writes)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot write into query table %s directly", rel_text(RelationGetRelid(td->tg_relation))),
				 errdetail("Its rows are derived from its base table by widecol, which keeps them in step."),
				 errhint("Write the base table, or repair with widecol.rebuild_query_table(); to write anyway: SET widecol.allow_query_table_writes = on.")));
	return PointerGetDatum(NULL);
}

void
wc_query_tables_init(void)
{
	DefineCustomBoolVariable("widecol.allow_query_table_writes",
							 "Allows INSERT, UPDATE, DELETE, COPY and TRUNCATE of query tables other than by widecol.",
							 "A query table written directly no longer equals what its definition derives from its base.",
							 &allow_query_table_writes, false, PGC_USERSET, 0, NULL, NULL, NULL);
}
