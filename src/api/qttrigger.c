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
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
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

typedef struct QtPlans
{
	int32		id;				/* hash key: widecol.query_table.id */
	bool		valid;			/* false: regenerate on next use */
	Oid			query_table;
	Oid			base;
	TransactionId xmin;			/* of the catalog row the plans were made for */
	char	   *search_path;
	int			nplans[QT_NSHAPES][2];	/* -1: not made yet */
	SPIPlanPtr *plans[QT_NSHAPES][2];
} QtPlans;

static HTAB *qt_plans = NULL;
static bool allow_query_table_writes = false;
static SPIPlanPtr catalog_plan = NULL;

static void
free_plans(QtPlans *e)
{
	for (int s = 0; s < QT_NSHAPES; s++)
		for (int z = 0; z < 2; z++)
		{
			for (int i = 0; i < e->nplans[s][z]; i++)
				SPI_freeplan(e->plans[s][z][i]);
			if (e->plans[s][z])
				pfree(e->plans[s][z]);
			e->plans[s][z] = NULL;
			e->nplans[s][z] = -1;
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
				e->nplans[s][z] = -1;
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
	Datum		arg = Int32GetDatum(id);
	bool		isnull;
	Oid			qt,
				base;
	TransactionId xmin;
	QtPlans    *e;

	if (catalog_plan == NULL)
	{
		Oid			argtype = INT4OID;
		SPIPlanPtr	p = SPI_prepare("SELECT query_table, base, search_path, xmin FROM widecol.query_table WHERE id = $1",
									1, &argtype);

		if (p == NULL)
			elog(ERROR, "widecol: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		catalog_plan = p;
	}
	if (SPI_execute_plan(catalog_plan, &arg, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "widecol: reading widecol.query_table failed");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("trigger %s on table %s names query table %d which is not registered",
						td->tg_trigger->tgname, rel_text(relid), id),
				 errhint("Drop the trigger (DROP TRIGGER %s ON %s) or recreate the query table.",
						 quote_identifier(td->tg_trigger->tgname), rel_text(relid))));
	qt = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	base = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	xmin = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	if (base != relid)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("trigger %s on table %s names query table %s of another table (%s)",
						td->tg_trigger->tgname, rel_text(relid), rel_text(qt), rel_text(base)),
				 errhint("Drop the trigger: DROP TRIGGER %s ON %s",
						 quote_identifier(td->tg_trigger->tgname), rel_text(relid))));
	if (rel_owner(qt) != rel_owner(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("query table %s and its base table %s have different owners",
						rel_text(qt), rel_text(relid)),
				 errhint("Give both the same owner: ALTER TABLE %s OWNER TO %s", rel_text(qt),
						 quote_identifier(GetUserNameFromId(rel_owner(relid), false)))));

	e = plans_entry(id);
	if (e->valid && (e->query_table != qt || e->base != base || e->xmin != xmin))
		e->valid = false;
	if (!e->valid)
	{
		MemoryContext old;

		free_plans(e);
		e->query_table = qt;
		e->base = base;
		e->xmin = xmin;
		old = MemoryContextSwitchTo(TopMemoryContext);
		e->search_path = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
		MemoryContextSwitchTo(old);
		e->valid = true;
	}
	return e;
}

/*
 * The saved plans of one shape and size class, made on first use from the
 * statements widecol._qt_trigger_statements(id, shape) writes.  Runs under
 * the query table's search_path (set by the caller).
 */
static SPIPlanPtr *
shape_plans(QtPlans *e, QtShape shape, bool large, int *n)
{
	int			z = large ? 1 : 0;
	Oid			argtypes[2] = {INT4OID, TEXTOID};
	Datum		args[2];
	bool		isnull;
	ArrayType  *arr;
	Datum	   *texts;
	int			ntexts;
	SPIPlanPtr *plans;

	if (e->nplans[shape][z] >= 0)
	{
		*n = e->nplans[shape][z];
		return e->plans[shape][z];
	}
	args[0] = Int32GetDatum(e->id);
	args[1] = CStringGetTextDatum(shape_names[shape]);
	if (SPI_execute_with_args("SELECT widecol._qt_trigger_statements($1, $2)", 2, argtypes,
							  args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "widecol: could not generate the statements of query table %d", e->id);
	arr = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &texts, NULL, &ntexts);
	plans = MemoryContextAllocZero(TopMemoryContext, sizeof(SPIPlanPtr) * Max(ntexts, 1));
	PG_TRY();
	{
		for (int i = 0; i < ntexts; i++)
		{
			char	   *sql = TextDatumGetCString(texts[i]);
			SPIPlanPtr	p = SPI_prepare(sql, 0, NULL);

			if (p == NULL)
				elog(ERROR, "widecol: SPI_prepare failed for \"%s\": %s", sql,
					 SPI_result_code_string(SPI_result));
			SPI_keepplan(p);
			plans[i] = p;
		}
	}
	PG_CATCH();
	{
		for (int i = 0; i < ntexts; i++)
			if (plans[i])
				SPI_freeplan(plans[i]);
		pfree(plans);
		PG_RE_THROW();
	}
	PG_END_TRY();
	e->plans[shape][z] = plans;
	e->nplans[shape][z] = ntexts;
	*n = ntexts;
	return plans;
}

/* Run the statements of one shape; returns the first one's first column
 * when it returns a row (QT_REPEATED), else false. */
static bool
run_shape(QtPlans *e, QtShape shape, bool large)
{
	int			n;
	SPIPlanPtr *plans = shape_plans(e, shape, large, &n);
	bool		result = false;

	for (int i = 0; i < n; i++)
	{
		int			rc = SPI_execute_plan(plans[i], NULL, NULL, false, 0);

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
	int			nestlevel;

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

	/* the definition's names resolve with the search_path of its creation */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", e->search_path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("widecol.allow_query_table_writes", "on", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (shape == QT_UPDATE_REPLACED)
	{
		if (run_shape(e, QT_REPEATED, large))
			shape = QT_UPDATE_REPLACED_REPEATED;
		/* the rows a moved row replaced are read as before the UPDATE */
		wc_read_before_begin(RelationGetRelid(rel));
		run_shape(e, shape, large);
		wc_read_before_end();
	}
	else
		run_shape(e, shape, large);
	AtEOXact_GUC(true, nestlevel);

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
