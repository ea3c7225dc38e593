/*
 * tableinfo.c — what the storage engine knows of a widecol table, parsed
 * from its widecol.* reloptions: key columns (order, types), default TTL,
 * counter columns, compaction options; kept per relation in a backend
 * cache.  The DDL hooks that take these options out of CREATE/ALTER TABLE
 * and store them are in access/ddl.c.
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
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "commands/tablecmds.h"
#include "access/tableam.h"

#include "widecol.h"
#include "storage/cache.h"
#include "storage/tableinfo.h"

static const char *const wc_option_names[] = {
	"partition_key", "clustering_key", "default_ttl", "gc_grace", "counter_columns",
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
void
wc_split_options(List *defs, List **wc, List **rest)
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
						 errhint("Valid options are widecol.partition_key, widecol.clustering_key, widecol.default_ttl, widecol.gc_grace, widecol.counter_columns, widecol.compaction, widecol.min_threshold, widecol.max_threshold, widecol.compaction_window and widecol.autocompact.")));
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

/* An interval option (widecol.default_ttl, widecol.gc_grace) in microseconds. */
static int64
parse_interval_option(const char *name, const char *value)
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
				 errmsg("widecol.%s must not be negative: \"%s\"", name, value),
				 errhint("Use an interval such as '90 days', or '0' %s.",
						 strcmp(name, "gc_grace") == 0 ? "to purge at once" : "for no expiry")));
	return us;
}

/* How old a tombstone or expired row must be before it is purged. */
int64
wc_gc_grace_us(const WcTableInfo *info)
{
	return info->gc_grace_us >= 0 ? info->gc_grace_us :
		(int64) wc_gc_grace_seconds * USECS_PER_SEC;
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
void
wc_build_table_info(Relation rel, List *wc, WcTableInfo *info)
{
	const char *pk = find_option(wc, "partition_key");
	const char *ck = find_option(wc, "clustering_key");
	const char *ttl = find_option(wc, "default_ttl");
	const char *gc_grace = find_option(wc, "gc_grace");
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
		info->default_ttl_us = parse_interval_option("default_ttl", ttl);
	info->gc_grace_us = gc_grace ? parse_interval_option("gc_grace", gc_grace) : -1;
	if (counters)
		add_counter_columns(rel, counters, info);
	parse_compaction_options(wc, info);
}

/* ---------- the access method ---------- */

static Oid	cached_am_oid = InvalidOid;

static void
am_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	cached_am_oid = InvalidOid;
}

/*
 * The widecol access method's OID, InvalidOid while the extension is not
 * created.  Looked up by name once and kept until pg_am changes (DROP and
 * CREATE EXTENSION give it another OID): every write and plan asks.
 */
Oid
wc_am_oid(void)
{
	static bool registered = false;

	if (!registered)
	{
		CacheRegisterSyscacheCallback(AMOID, am_callback, (Datum) 0);
		registered = true;
	}
	if (!OidIsValid(cached_am_oid))
		cached_am_oid = get_table_am_oid(WIDECOL_AM_NAME, true);
	return cached_am_oid;
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
wc_table_info_build(Relation rel)
{
	WcTableInfo info;
	List	   *wc,
			   *rest;
	InfoEntry  *entry;
	bool		found;
	Oid			relid = RelationGetRelid(rel);

	wc_split_options(wc_stored_options(relid), &wc, &rest);
	wc_build_table_info(rel, wc, &info);
	entry = wc_hash_enter(&info_cache, "widecol table info", sizeof(Oid), sizeof(InfoEntry),
						  CacheMemoryContext, &relid, &found);
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
	Oid			amoid = wc_am_oid();
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

List *
wc_stored_options(Oid relid)
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
