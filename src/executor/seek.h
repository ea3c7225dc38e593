/*
 * executor/seek.h — the planner hooks and the WidecolSeek custom scan.
 */
#ifndef WC_EXECUTOR_SEEK_H
#define WC_EXECUTOR_SEEK_H

#include "widecol.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "utils/relcache.h"

/* ---------- planner hooks (planner.c) ---------- */
extern void wc_install_planner_hooks(void);

/* keystats.c */
extern void wc_install_key_stats_hook(void);

/* seekplan.c */
extern void wc_sum_member_rows(PlannerInfo *root, RelOptInfo *rel, Index rti);
extern void wc_add_seek_path(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
extern void wc_register_custom_scan(void);
extern char *wc_seek_missing_key(Relation relation, List *clauses, Index relid);
extern bool wc_enable_seek;

/* filtering.c: widecol.filtering and the EXPLAIN note on full scans */
typedef enum WcFiltering
{
	WC_FILTERING_ALLOW,
	WC_FILTERING_WARN,
	WC_FILTERING_ERROR
} WcFiltering;
extern int	wc_filtering;
extern void wc_install_filtering_hooks(void);
extern void wc_check_filtering(PlannedStmt *stmt);
extern List *wc_plan_children(Plan *plan);

/* keydelete.c: DELETEs by key columns write their tombstones blindly */
extern void wc_install_key_deletes(void);
extern void wc_plan_key_deletes(PlannedStmt *stmt);

/* rangedelete.c: DELETEs written as range tombstones */
extern void wc_plan_range_deletes(PlannedStmt *stmt);

/* IN (subquery) on a partition key as an array of keys (semijoin.c) */
extern Query *wc_semijoins_as_arrays(Query *parse);
extern bool wc_semijoin_plan_better(PlannedStmt *alt, PlannedStmt *orig);
extern bool wc_delete_needs_rows(Relation rel);

/* router.c: single-shard queries of a sharded table planned on the foreign partition */
extern void wc_install_router(void);

/* shardread.c: a read of one shard as one autocommit statement (WidecolShardRead) */
extern void wc_install_shard_reads(void);
extern void wc_plan_shard_reads(PlannedStmt *stmt);

/* ---------- what the plan hands the executor (seekplan.c -> seekexec.c) ---------- */

/* The most partitions one seek reads. */
#define WC_MAX_SEEK_PARTITIONS 10000

/* What a clause says about one key column. */
typedef enum BoundKind
{
	BK_EQ = 1,
	BK_IN,
	BK_GE,
	BK_GT,
	BK_LE,
	BK_LT
} BoundKind;

/*
 * Flag on the kind of a further column of a row comparison bound,
 * (c1, c2, ...) >= (v1, v2, ...): the plan lists the first column with the
 * comparison's kind, then each further column with its kind | BK_ROW; the
 * executor appends their encodings to the first one's.
 */
#define BK_ROW		0x100
#define BoundKindOf(k) ((BoundKind) ((k) & ~BK_ROW))

extern Node *wc_seek_create_state(CustomScan *cscan);

#endif
