/*
 * damage.c — remembering that a table's pages failed their checks.
 *
 * A page that fails its checks raises ERRCODE_DATA_CORRUPTED where it is
 * read.  A user's query then fails, which is the most we can do for it;
 * but the background worker would fail on the same run every naptime and
 * say nothing new, and nothing would tell an operator before a user reads
 * the damaged rows.  So the read path notes what it found (relation,
 * segment, block), and when a maintenance pass fails on corruption the
 * worker records it in widecol.damage, in a transaction of its own.  From
 * then on maintenance leaves the table alone (a WARNING every round says
 * why), widecol.compact refuses it, and table_stats shows it as damaged.
 * widecol.verify records every damaged segment it finds, and clears the
 * marks when it finds none.
 *
 * Rows are keyed by the relation's relfilenode as well as its OID: a
 * TRUNCATE or a rewrite gives the table new storage, without the damage,
 * and rolling the TRUNCATE back brings the old storage and its marks back.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "maintenance/damage.h"

enum
{
	Anum_dmg_relid = 1,
	Anum_dmg_relfilenode,
	Anum_dmg_segment,
	Anum_dmg_id,
	Anum_dmg_block,
	Anum_dmg_problem,
	Anum_dmg_found,
	Natts_dmg = Anum_dmg_found
};

#define DAMAGE_HINT "SELECT * FROM widecol.verify('%s') WHERE NOT ok lists the damaged runs. " \
	"Restore the table from a backup or rebuild it from a healthy copy (see \"Damaged tables\" in README.md); " \
	"a widecol.verify that finds no problem clears the mark."

/* widecol.damage and its index, or InvalidOid (extension half dropped). */
static Oid
damage_relid(bool index)
{
	Oid			nsp = get_namespace_oid(WIDECOL_SCHEMA, true);

	return OidIsValid(nsp) ? get_relname_relid(index ? "damage_pkey" : "damage", nsp) : InvalidOid;
}

/*
 * Open widecol.damage and begin a scan of rel's marks (of any storage), or
 * return NULL if the catalog is missing (*drel is then not opened).
 */
static SysScanDesc
scan_marks(Relation rel, LOCKMODE mode, Relation *drel, ScanKeyData *key)
{
	Oid			dmgid = damage_relid(false);

	if (!OidIsValid(dmgid))
		return NULL;
	*drel = table_open(dmgid, mode);
	ScanKeyInit(&key[0], Anum_dmg_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(rel)));
	return systable_beginscan(*drel, damage_relid(true), true, NULL, 1, key);
}

static void
deform(Relation drel, HeapTuple tup, Oid *relfilenode, WcDamage *d)
{
	Datum		v[Natts_dmg];
	bool		n[Natts_dmg];

	heap_deform_tuple(tup, RelationGetDescr(drel), v, n);
	*relfilenode = DatumGetObjectId(v[Anum_dmg_relfilenode - 1]);
	d->segment = TextDatumGetCString(v[Anum_dmg_segment - 1]);
	d->id = (uint64) DatumGetInt64(v[Anum_dmg_id - 1]);
	d->block = n[Anum_dmg_block - 1] ? InvalidBlockNumber : (BlockNumber) DatumGetInt64(v[Anum_dmg_block - 1]);
	d->problem = TextDatumGetCString(v[Anum_dmg_problem - 1]);
	d->found = DatumGetTimestampTz(v[Anum_dmg_found - 1]);
}

/*
 * Record a damaged segment of rel's current storage (once per segment);
 * marks of storage the table no longer has are deleted on the way.
 */
void
wc_damage_record(Relation rel, const WcDamage *d)
{
	Relation	drel;
	ScanKeyData key[1];
	SysScanDesc scan = scan_marks(rel, RowExclusiveLock, &drel, key);
	HeapTuple	tup;
	bool		known = false;

	if (scan == NULL)
		return;
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Oid			node;
		WcDamage	old;

		deform(drel, tup, &node, &old);
		if (node != rel->rd_node.relNode)
			CatalogTupleDelete(drel, &tup->t_self);
		else if (strcmp(old.segment, d->segment) == 0 && old.id == d->id)
			known = true;
	}
	systable_endscan(scan);
	if (!known)
	{
		Datum		v[Natts_dmg];
		bool		n[Natts_dmg] = {0};

		v[Anum_dmg_relid - 1] = ObjectIdGetDatum(RelationGetRelid(rel));
		v[Anum_dmg_relfilenode - 1] = ObjectIdGetDatum(rel->rd_node.relNode);
		v[Anum_dmg_segment - 1] = CStringGetTextDatum(d->segment);
		v[Anum_dmg_id - 1] = Int64GetDatum((int64) d->id);
		v[Anum_dmg_block - 1] = Int64GetDatum((int64) d->block);
		n[Anum_dmg_block - 1] = d->block == InvalidBlockNumber;
		v[Anum_dmg_problem - 1] = CStringGetTextDatum(d->problem);
		v[Anum_dmg_found - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
		CatalogTupleInsert(drel, heap_form_tuple(RelationGetDescr(drel), v, n));
	}
	table_close(drel, RowExclusiveLock);
}

/* How many segments of rel's current storage are marked; *first the oldest. */
int
wc_damage_find(Relation rel, WcDamage *first)
{
	List	   *marks = wc_damage_list(rel);
	ListCell   *lc;

	foreach(lc, marks)
	{
		WcDamage   *d = lfirst(lc);

		if (foreach_current_index(lc) == 0 || d->found < first->found)
			*first = *d;
	}
	return list_length(marks);
}

/*
 * Forget rel's marks (DROP TABLE, or a verify found its storage sound: marks
 * of storage it had before are moot too).  Transactional, as the
 * TRUNCATE that replaced that storage.
 */
void
wc_damage_clear(Relation rel)
{
	Relation	drel;
	ScanKeyData key[1];
	SysScanDesc scan;
	HeapTuple	tup;

	/* the extension half dropped (see damage_relid): nothing to clear */
	if (!OidIsValid(damage_relid(true)) ||
		(scan = scan_marks(rel, RowExclusiveLock, &drel, key)) == NULL)
		return;
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
		CatalogTupleDelete(drel, &tup->t_self);
	systable_endscan(scan);
	table_close(drel, RowExclusiveLock);
}

static char *
describe(const WcDamage *d)
{
	StringInfoData s;

	initStringInfo(&s);
	if (strcmp(d->segment, "page") == 0)
		appendStringInfoString(&s, d->segment);	/* PostgreSQL's message names it */
	else
		appendStringInfo(&s, "%s %llu", d->segment, (unsigned long long) d->id);
	if (d->block != InvalidBlockNumber)
		appendStringInfo(&s, ", block %u", d->block);
	appendStringInfo(&s, ": %s", d->problem);
	return s.data;
}

static char *
qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

/*
 * Raise (ERROR from widecol.compact, WARNING from the worker, which then
 * skips the table) if rel is marked damaged.  Returns false if it is not.
 */
static bool
report(Relation rel, int elevel, const char *what)
{
	WcDamage	d;
	int			n = wc_damage_find(rel, &d);
	char	   *name;

	if (n == 0)
		return false;
	name = qualified_name(rel);
	ereport(elevel,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("%s damaged widecol table %s: %s", what, name, describe(&d)),
			 errdetail("Found %s; %d damaged segment%s recorded in widecol.damage.",
					   timestamptz_to_str(d.found), n, n == 1 ? "" : "s"),
			 errhint(DAMAGE_HINT, name)));
	return true;
}

void
wc_damage_refuse(Relation rel, const char *what)
{
	report(rel, ERROR, what);
}

bool
wc_damage_skip(Relation rel)
{
	return report(rel, WARNING, "widecol worker: skipping maintenance of");
}

/*
 * After a maintenance pass on rel failed with a corruption error (the
 * worker's error path, in a new transaction): record it and say so.
 */
void
wc_damage_after_error(Relation rel, const WcDamage *d)
{
	char	   *name = qualified_name(rel);

	wc_damage_record(rel, d);
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("widecol worker: widecol table %s is damaged: %s", name, describe(d)),
			 errdetail("Maintenance of this table is suspended until the damage is repaired."),
			 errhint(DAMAGE_HINT, name)));
}

/* The damaged segments of rel's current storage: a List of WcDamage. */
List *
wc_damage_list(Relation rel)
{
	Relation	drel;
	ScanKeyData key[1];
	SysScanDesc scan = scan_marks(rel, AccessShareLock, &drel, key);
	HeapTuple	tup;
	List	   *result = NIL;

	if (scan == NULL)
		return NIL;
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Oid			node;
		WcDamage   *d = palloc(sizeof(WcDamage));

		deform(drel, tup, &node, d);
		if (node == rel->rd_node.relNode)
			result = lappend(result, d);
	}
	systable_endscan(scan);
	table_close(drel, AccessShareLock);
	return result;
}
