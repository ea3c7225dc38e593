/*
 * options.c — the widecol.* table options.
 *
 * PostgreSQL 15 gives extensions no way to add table reloptions, so a
 * ProcessUtility hook takes widecol.* options out of CREATE TABLE and ALTER
 * TABLE, validates them against the table, and stores them in
 * pg_class.reloptions itself (where \d+ shows them and pg_dump emits them as
 * WITH ("widecol.x" = '...')).  PostgreSQL reads stored options back with
 * validate = false, so unknown names are tolerated there; only a re-validating
 * ALTER TABLE SET of other options needs our help (see run_stripped).
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
#include "damage.h"

static ProcessUtility_hook_type prev_utility_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

static const char *const wc_option_names[] = {
	"partition_key", "clustering_key", "default_ttl", "counter_columns",
	"compaction", "min_threshold", "max_threshold", "compaction_window",
	"autocompact", NULL
};

typedef struct KeySpec
{
	char	   *name;
	bool		desc;
	bool		has_order;
} KeySpec;

/* ---------- option names ---------- */

/* "widecol.x" for a DefElem written as widecol.x or "widecol.x". */
static char *
defelem_full_name(DefElem *def)
{
	if (def->defnamespace)
		return psprintf("%s.%s", def->defnamespace, def->defname);
	return pstrdup(def->defname);
}

static bool
is_wc_option(DefElem *def)
{
	if (def->defnamespace)
		return strcmp(def->defnamespace, WIDECOL_OPTION_NAMESPACE) == 0;
	return strncmp(def->defname, WIDECOL_OPTION_NAMESPACE ".",
				   strlen(WIDECOL_OPTION_NAMESPACE) + 1) == 0;
}

static const char *
short_name(const char *full)
{
	return full + strlen(WIDECOL_OPTION_NAMESPACE) + 1;
}

/* Split a DefElem list into widecol.* options (normalised) and the rest. */
static void
split_options(List *defs, List **wc, List **rest)
{
	ListCell   *lc;

	*wc = NIL;
	*rest = NIL;
	foreach(lc, defs)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (is_wc_option(def))
		{
			char	   *full = defelem_full_name(def);
			const char *sname = short_name(full);
			bool		known = false;

			for (int i = 0; wc_option_names[i]; i++)
				known |= strcmp(sname, wc_option_names[i]) == 0;
			if (!known)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unrecognized widecol option \"%s\"", full),
						 errhint("Valid options are widecol.partition_key, widecol.clustering_key, widecol.default_ttl, widecol.counter_columns, widecol.compaction, widecol.min_threshold, widecol.max_threshold, widecol.compaction_window and widecol.autocompact.")));
			*wc = lappend(*wc, makeDefElem(full,
										   def->arg ? (Node *) makeString(defGetString(def)) : NULL,
										   def->location));
		}
		else
			*rest = lappend(*rest, def);
	}
}

static const char *
find_option(List *wc, const char *sname)
{
	ListCell   *lc;
	const char *val = NULL;

	foreach(lc, wc)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(short_name(def->defname), sname) == 0 && def->arg)
			val = strVal(def->arg);
	}
	return val;
}

/* ---------- parsing ---------- */

static void
bad_key_list(const char *optname, const char *value, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for widecol.%s: \"%s\"", optname, value),
			 errdetail("%s", why),
			 errhint("Write a comma-separated list of column names%s, e.g. '%s'.",
					 strcmp(optname, "clustering_key") == 0 ? ", each optionally followed by ASC or DESC" : "",
					 strcmp(optname, "clustering_key") == 0 ? "capture_time DESC, image_id" : "device_id, day_bucket")));
}

static List *
parse_key_list(const char *optname, const char *value)
{
	List	   *result = NIL;
	const char *p = value;

	for (;;)
	{
		KeySpec    *ks = palloc0(sizeof(KeySpec));
		StringInfoData id;

		initStringInfo(&id);
		while (scanner_isspace(*p))
			p++;
		if (*p == '"')
		{
			p++;
			for (;;)
			{
				if (*p == '\0')
					bad_key_list(optname, value, "unterminated quoted identifier");
				if (*p == '"')
				{
					if (p[1] != '"')
						break;
					p++;
				}
				appendStringInfoChar(&id, *p++);
			}
			p++;
			ks->name = id.data;
		}
		else
		{
			while (*p && (isalnum((unsigned char) *p) || *p == '_' || *p == '$' ||
						  IS_HIGHBIT_SET(*p)))
				appendStringInfoChar(&id, *p++);
			if (id.len == 0)
				bad_key_list(optname, value, "a column name is missing");
			ks->name = downcase_truncate_identifier(id.data, id.len, false);
		}
		while (scanner_isspace(*p))
			p++;
		if (pg_strncasecmp(p, "asc", 3) == 0 || pg_strncasecmp(p, "desc", 4) == 0)
		{
			int			n = (pg_strncasecmp(p, "asc", 3) == 0) ? 3 : 4;

			if (p[n] == '\0' || p[n] == ',' || scanner_isspace(p[n]))
			{
				ks->desc = (n == 4);
				ks->has_order = true;
				p += n;
				while (scanner_isspace(*p))
					p++;
			}
		}
		result = lappend(result, ks);
		if (*p == '\0')
			break;
		if (*p != ',')
			bad_key_list(optname, value, "expected a comma after a column name");
		p++;
	}
	return result;
}

/* The column names of a key list, as widecol parses them (for SQL). */
List *
wc_key_column_names(const char *optname, const char *value)
{
	List	   *names = NIL;
	ListCell   *lc;

	foreach(lc, parse_key_list(optname, value))
		names = lappend(names, ((KeySpec *) lfirst(lc))->name);
	return names;
}

static int64
parse_ttl(const char *value)
{
	Interval   *iv;
	int64		us;

	iv = DatumGetIntervalP(DirectFunctionCall3(interval_in,
											   CStringGetDatum(value),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
	us = iv->time + (int64) iv->day * USECS_PER_DAY +
		(int64) iv->month * DAYS_PER_MONTH * USECS_PER_DAY;
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("widecol.default_ttl must not be negative: \"%s\"", value),
				 errhint("Use an interval such as '90 days', or '0' for no expiry.")));
	return us;
}

const char *
wc_compaction_name(int compaction)
{
	return compaction == WC_COMPACTION_TIME_WINDOW ? "time_window" : "size_tiered";
}

static int
parse_threshold(const char *optname, const char *value)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	while (scanner_isspace(*end))
		end++;
	if (errno != 0 || end == value || *end != '\0' || v < 2 || v > 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for widecol.%s: \"%s\"", optname, value),
				 errhint("Use an integer between 2 and 1024.")));
	return (int) v;
}

/* Build the compaction part of the table info; errors name the option. */
static void
parse_compaction_options(List *wc, WcTableInfo *info)
{
	const char *strategy = find_option(wc, "compaction");
	const char *minth = find_option(wc, "min_threshold");
	const char *maxth = find_option(wc, "max_threshold");
	const char *window = find_option(wc, "compaction_window");
	const char *autoc = find_option(wc, "autocompact");

	info->compaction = WC_COMPACTION_SIZE_TIERED;
	info->min_threshold = WC_DEFAULT_MIN_THRESHOLD;
	info->max_threshold = WC_DEFAULT_MAX_THRESHOLD;
	info->window_us = WC_DEFAULT_WINDOW_US;
	info->autocompact = true;
	if (strategy)
	{
		if (pg_strcasecmp(strategy, "size_tiered") == 0)
			info->compaction = WC_COMPACTION_SIZE_TIERED;
		else if (pg_strcasecmp(strategy, "time_window") == 0)
			info->compaction = WC_COMPACTION_TIME_WINDOW;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for widecol.compaction: \"%s\"", strategy),
					 errhint("Valid strategies are 'size_tiered' (the default) and 'time_window'.")));
	}
	if (minth)
		info->min_threshold = parse_threshold("min_threshold", minth);
	if (maxth)
		info->max_threshold = parse_threshold("max_threshold", maxth);
	if (info->min_threshold > info->max_threshold)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("widecol.min_threshold (%d) must not exceed widecol.max_threshold (%d)",
						info->min_threshold, info->max_threshold),
				 errhint("Raise widecol.max_threshold or lower widecol.min_threshold.")));
	if (window)
	{
		Interval   *iv;
		int64		us;

		if (info->compaction != WC_COMPACTION_TIME_WINDOW)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("widecol.compaction_window requires widecol.compaction = 'time_window'"),
					 errhint("Set widecol.compaction = 'time_window' as well, or leave widecol.compaction_window out.")));
		iv = DatumGetIntervalP(DirectFunctionCall3(interval_in,
												   CStringGetDatum(window),
												   ObjectIdGetDatum(InvalidOid),
												   Int32GetDatum(-1)));
		if (iv->month != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for widecol.compaction_window: \"%s\"", window),
					 errdetail("Months have no fixed length."),
					 errhint("Use days, hours, minutes or seconds, e.g. '1 day' or '30 days'.")));
		us = iv->time + (int64) iv->day * USECS_PER_DAY;
		if (us < USECS_PER_SEC)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for widecol.compaction_window: \"%s\"", window),
					 errdetail("The window must be at least 1 second."),
					 errhint("Use an interval such as '1 day' or '1 hour'.")));
		info->window_us = us;
	}
	if (autoc && !parse_bool(autoc, &info->autocompact))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for widecol.autocompact: \"%s\"", autoc),
				 errhint("Use on or off.")));
}

static void
add_key_columns(Relation rel, const char *optname, const char *value,
				bool partition, WcTableInfo *info)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *specs = parse_key_list(optname, value);
	ListCell   *lc;

	foreach(lc, specs)
	{
		KeySpec    *ks = lfirst(lc);
		AttrNumber	attnum = InvalidAttrNumber;
		Form_pg_attribute att = NULL;
		WcKeyColumn *col;
		Oid			basetype;

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (!a->attisdropped && strcmp(NameStr(a->attname), ks->name) == 0)
			{
				attnum = a->attnum;
				att = a;
			}
		}
		if (attnum == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" named in widecol.%s does not exist in relation \"%s\"",
							ks->name, optname, RelationGetRelationName(rel))));
		if (partition && ks->has_order)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("widecol.partition_key does not take ASC or DESC (column \"%s\")", ks->name),
					 errhint("Partitions have no order; put ASC/DESC on widecol.clustering_key columns.")));
		for (int i = 0; i < info->npk + info->nck; i++)
			if (info->cols[i].attnum == attnum)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" appears more than once in the widecol key of relation \"%s\"",
								ks->name, RelationGetRelationName(rel))));
		if (info->npk + info->nck >= WC_MAX_KEY_COLUMNS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a widecol key can have at most %d columns", WC_MAX_KEY_COLUMNS)));
		basetype = getBaseType(att->atttypid);
		if (!wc_type_is_supported(basetype))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of type %s cannot be part of a widecol key",
							ks->name, format_type_be(att->atttypid)),
					 errhint("Supported key types: %s.", wc_supported_types_list())));
		if (basetype == TEXTOID || basetype == VARCHAROID)
		{
			if (!OidIsValid(att->attcollation) ||
				!get_collation_isdeterministic(att->attcollation))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("key column \"%s\" uses a nondeterministic collation", ks->name),
						 errhint("widecol keys compare bytes; use a deterministic collation such as \"C\".")));
			if (!partition && !lc_collate_is_c(att->attcollation))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("clustering column \"%s\" must use the \"C\" collation", ks->name),
						 errdetail("widecol keeps clustering columns in byte order."),
						 errhint("Declare the column as %s COLLATE \"C\".", format_type_be(att->atttypid))));
		}
		col = &info->cols[info->npk + info->nck];
		col->attnum = attnum;
		col->typid = basetype;
		col->desc = ks->desc;
		col->partition = partition;
		if (partition)
			info->npk++;
		else
			info->nck++;
	}
}

/*
 * widecol.counter_columns: bigint columns outside the key whose writes add
 * to the stored value (see "Counter columns" in src/README.md).
 */
static void
add_counter_columns(Relation rel, const char *value, WcTableInfo *info)
{
	TupleDesc	desc = RelationGetDescr(rel);
	ListCell   *lc;

	if (WcTableIsKeyless(info))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("widecol.counter_columns needs a table with a key"),
				 errhint("Counters add up per key: declare widecol.partition_key.")));
	foreach(lc, parse_key_list("counter_columns", value))
	{
		KeySpec    *ks = lfirst(lc);
		Form_pg_attribute att = NULL;

		for (int i = 0; i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(desc, i)->attname), ks->name) == 0)
				att = TupleDescAttr(desc, i);
		if (att == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" named in widecol.counter_columns does not exist in relation \"%s\"",
							ks->name, RelationGetRelationName(rel))));
		for (int i = 0; i < info->npk + info->nck; i++)
			if (info->cols[i].attnum == att->attnum)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("key column \"%s\" cannot be a counter column", ks->name)));
		if (att->atttypid != INT8OID || ks->has_order)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("counter column \"%s\" must be of type bigint", ks->name),
					 errhint("Declare counter columns as bigint, without ASC or DESC.")));
		for (int i = 0; i < info->ncounters; i++)
			if (info->counters[i] == att->attnum)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("column \"%s\" is named twice in widecol.counter_columns", ks->name)));
		if (info->ncounters == WC_MAX_KEY_COLUMNS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a widecol table can have at most %d counter columns", WC_MAX_KEY_COLUMNS)));
		info->counters[info->ncounters++] = att->attnum;
	}
}

/*
 * How many of the table's first columns are key columns: asking a version
 * for only those needs no tuple (slot.c).
 */
static int
key_prefix(const WcTableInfo *info)
{
	int			n = 0;

	for (;;)
	{
		bool		key = false;

		for (int i = 0; i < info->npk + info->nck && !key; i++)
			key = info->cols[i].attnum - 1 == n;
		if (!key)
			return n;
		n++;
	}
}

/* Build a WcTableInfo from normalised widecol.* options; errors if invalid. */
static void
build_table_info(Relation rel, List *wc, WcTableInfo *info)
{
	const char *pk = find_option(wc, "partition_key");
	const char *ck = find_option(wc, "clustering_key");
	const char *ttl = find_option(wc, "default_ttl");
	const char *counters = find_option(wc, "counter_columns");

	memset(info, 0, sizeof(WcTableInfo));
	if (ck && !pk)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("widecol.clustering_key requires widecol.partition_key"),
				 errhint("Name the partition key columns in widecol.partition_key.")));
	if (pk)
		add_key_columns(rel, "partition_key", pk, true, info);
	if (ck)
		add_key_columns(rel, "clustering_key", ck, false, info);
	info->key_prefix = key_prefix(info);
	if (ttl)
		info->default_ttl_us = parse_ttl(ttl);
	if (counters)
		add_counter_columns(rel, counters, info);
	parse_compaction_options(wc, info);
}

/* ---------- pg_class.reloptions ---------- */

static List *
stored_options(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Datum		d;
	bool		isnull;
	List	   *defs = NIL;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	if (!isnull)
		defs = untransformRelOptions(d);
	ReleaseSysCache(tup);
	return defs;
}

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

/* ---------- per-relation cache ---------- */

/*
 * Every relcache invalidation of a relation (an ANALYZE or autovacuum
 * updating pg_class, for instance) makes PostgreSQL pfree its rd_amcache,
 * even while the relation is open — and it is processed at any catalog
 * access or lock (AcceptInvalidationMessages).  Callers keep the pointer
 * wc_table_info returns across such points (reading the manifest opens
 * widecol.segment), so the info itself does not live in rd_amcache:
 * rd_amcache only points to it, and the info lives in CacheMemoryContext
 * for the backend's lifetime, found again by relation OID.  When the
 * options did not change, the rebuilt info is the same allocation; a
 * changed one gets a new allocation and the old one is left in place (a
 * few hundred bytes per ALTER TABLE of the options).
 */
typedef struct InfoEntry
{
	Oid			relid;
	WcTableInfo *info;
} InfoEntry;

static HTAB *info_cache = NULL;

WcTableInfo *
wc_table_info(Relation rel)
{
	WcTableInfo info;
	List	   *wc,
			   *rest;
	InfoEntry  *entry;
	bool		found;
	Oid			relid = RelationGetRelid(rel);

	if (rel->rd_amcache)
		return *(WcTableInfo **) rel->rd_amcache;
	split_options(stored_options(relid), &wc, &rest);
	build_table_info(rel, wc, &info);
	if (info_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(InfoEntry);
		ctl.hcxt = CacheMemoryContext;
		info_cache = hash_create("widecol table info", 64, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(info_cache, &relid, HASH_ENTER, &found);
	if (!found || memcmp(entry->info, &info, sizeof(WcTableInfo)) != 0)
	{
		entry->info = MemoryContextAlloc(CacheMemoryContext, sizeof(WcTableInfo));
		memcpy(entry->info, &info, sizeof(WcTableInfo));
	}
	rel->rd_amcache = MemoryContextAlloc(CacheMemoryContext, sizeof(WcTableInfo *));
	*(WcTableInfo **) rel->rd_amcache = entry->info;
	return entry->info;
}

bool
wc_relation_is_widecol(Oid relid)
{
	Oid			amoid = get_table_am_oid(WIDECOL_AM_NAME, true);
	HeapTuple	tup;
	bool		result = false;

	if (!OidIsValid(amoid) || !OidIsValid(relid))
		return false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		result = form->relam == amoid &&
			(form->relkind == RELKIND_RELATION || form->relkind == RELKIND_MATVIEW);
		ReleaseSysCache(tup);
	}
	return result;
}

/* Does the table hold any stored data (level 0 or runs)? */
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

static void
call_next(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
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

	split_options(stmt->options, &wc, &rest);
	if (!am_is_widecol(stmt->accessMethod) || stmt->partspec != NULL)
	{
		if (wc != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("widecol.* options are only valid for tables created USING widecol")));
		call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
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
		call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
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
	call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);

	relid = RangeVarGetRelid(stmt->relation, NoLock, false);
	rel = table_open(relid, AccessExclusiveLock);
	build_table_info(rel, wc, &info);	/* validates */
	if (wc != NIL)
		write_options(relid, list_concat(stored_options(relid), wc));
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

	split_options(stored_options(relid), &wc, &rest);
	if (wc != NIL)
		write_options(relid, rest);
	call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
	if (wc != NIL)
	{
		List	   *none;

		split_options(stored_options(relid), &none, &rest);
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
		call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
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

					split_options((List *) cmd->def, &wc, &rest);
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
		call_next(pstmt, queryString, false, context, params, queryEnv, dest, qc);
	}

	if (wc_set != NIL || wc_reset != NIL)
	{
		List	   *wc,
				   *rest,
				   *newwc;
		WcTableInfo oldinfo,
					newinfo;

		rel = table_open(relid, AccessExclusiveLock);
		split_options(stored_options(relid), &wc, &rest);
		build_table_info(rel, wc, &oldinfo);
		newwc = merge_options(merge_options(wc, wc_set, false), wc_reset, true);
		build_table_info(rel, newwc, &newinfo);
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
	Oid			amoid = get_table_am_oid(WIDECOL_AM_NAME, true);
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

				split_options(into->options, &wc, &rest);
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
	call_next(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
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
