/*
 * storage/tableinfo.h — what the storage engine knows of a table: its key
 * columns, TTL, counter columns and compaction options, parsed from its
 * widecol.* reloptions.
 */
#ifndef WC_STORAGE_TABLEINFO_H
#define WC_STORAGE_TABLEINFO_H

#include "widecol.h"
#include "utils/rel.h"

#define WC_MAX_KEY_COLUMNS	32
#define WC_MAX_KEY_SIZE		1024

typedef struct WcKeyColumn
{
	AttrNumber	attnum;
	Oid			typid;			/* base type */
	bool		desc;
	bool		partition;		/* part of the partition key */
} WcKeyColumn;

/* Per-relation info parsed from pg_class.reloptions; lives in rd_amcache. */
typedef struct WcTableInfo
{
	int			npk;			/* partition key columns */
	int			nck;			/* clustering key columns */
	WcKeyColumn cols[WC_MAX_KEY_COLUMNS];	/* partition cols, then clustering */
	int			key_prefix;		/* the first columns, all key columns */
	int64		default_ttl_us; /* 0 = none */
	int64		gc_grace_us;	/* widecol.gc_grace; -1: the setting's */
	int			ncounters;		/* widecol.counter_columns */
	AttrNumber	counters[WC_MAX_KEY_COLUMNS];
	/* compaction options (see "Compaction strategies" in src/README.md) */
	int			compaction;		/* WC_COMPACTION_* */
	int			min_threshold;	/* runs of a bucket before it is compacted */
	int			max_threshold;	/* most runs merged at once */
	int64		window_us;		/* time_window: window length */
	bool		autocompact;	/* background workers maintain the table */
} WcTableInfo;

#define WC_COMPACTION_SIZE_TIERED	0
#define WC_COMPACTION_TIME_WINDOW	1
#define WC_DEFAULT_MIN_THRESHOLD	4
#define WC_DEFAULT_MAX_THRESHOLD	32
#define WC_DEFAULT_WINDOW_US		((int64) 24 * 3600 * 1000000)

extern const char *wc_compaction_name(int compaction);
extern int64 wc_gc_grace_us(const WcTableInfo *info);
extern int	wc_gc_grace_seconds;
extern List *wc_key_column_names(const char *optname, const char *value);

/*
 * The time window of a write time (microseconds since 2000): windows are
 * aligned on the Unix epoch, as Cassandra's, so '1 day' windows start at
 * midnight UTC.
 */
static inline int64
wc_time_window(int64 ts, int64 window_us)
{
	int64		unix_us = ts + INT64CONST(946684800) * 1000000;

	return unix_us / window_us - (unix_us % window_us < 0 ? 1 : 0);
}

#define WcTableIsKeyless(info) ((info)->npk + (info)->nck == 0)

extern WcTableInfo *wc_table_info_build(Relation rel);

/* The table's keys and options, cached in its relcache entry (per row: inline). */
static inline WcTableInfo *
wc_table_info(Relation rel)
{
	if (likely(rel->rd_amcache != NULL))
		return *(WcTableInfo **) rel->rd_amcache;
	return wc_table_info_build(rel);
}
extern List *wc_stored_options(Oid relid);
extern void wc_split_options(List *defs, List **wc, List **rest);
extern void wc_build_table_info(Relation rel, List *wc, WcTableInfo *info);
extern Oid	wc_am_oid(void);
extern bool wc_relation_is_widecol(Oid relid);
extern const char *wc_supported_types_list(void);
extern bool wc_type_is_supported(Oid typid);

#endif
