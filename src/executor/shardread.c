/*
 * shardread.c — WidecolShardRead: a read of one shard sent as one statement.
 *
 * postgres_fdw reads a foreign table in five round trips even for 100 rows:
 * START TRANSACTION, DECLARE CURSOR, FETCH, CLOSE and, when the
 * coordinator's transaction ends, COMMIT.  A single-partition query through
 * a sharded table paid them all (8x the single-node latency).  A read-only
 * statement outside a transaction block needs none of it: one autocommit
 * statement on the shard sees one snapshot, which is what the remote
 * REPEATABLE READ transaction gave a lone scan.
 *
 * So after planning, each foreign scan of a sharded table's partition
 * (widecol.create_sharded_table) becomes WidecolShardRead: it sends the SQL
 * postgres_fdw deparsed (the same WHERE, ORDER BY, LIMIT; its parameters
 * as text, as postgres_fdw sends them) in one message over a connection of
 * ours (access/shardsession.c) and reads the rows as they come.  Scans not
 * pruned at startup send at once, so the shards of a fan-out work at the
 * same time.  Only scans the statement runs once are taken (no rescans,
 * subplans or executor parameters: each run would be a new snapshot), and
 * only where the plan reads their server once (postgres_fdw gives one
 * snapshot per server).  The foreign scan stays below it and runs instead
 * wherever a second connection could see something else than
 * postgres_fdw's remote transaction (direct_refused): in a transaction
 * block, at REPEATABLE READ or SERIALIZABLE, in a function's query, after
 * a write or a utility command of the transaction (postgres_fdw's remote
 * writes are not committed yet).  A LIMIT over an Append of such reads is
 * sent to each shard (push_limit).  widecol.shard_direct_reads = off keeps
 * postgres_fdw throughout.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "access/access.h"
#include "executor/seek.h"

static bool wc_shard_direct_reads = true;

static CustomScanMethods shard_read_scan_methods;
static CustomExecMethods shard_read_exec_methods;

static ExecutorStart_hook_type prev_executor_start = NULL;

/* The transaction ran a statement that may have written (through postgres_fdw too). */
static bool xact_wrote = false;

/* Executors running (a query started while one runs is a function's). */
static int	executor_depth = 0;
static ExecutorRun_hook_type prev_executor_run = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;
static ProcessUtility_hook_type prev_utility = NULL;

/* Foreign partitions known to be shards of a table in widecol.sharded_table (a table is registered once). */
static List *shard_relids = NIL;	/* in TopMemoryContext */

typedef struct ShardReadState
{
	CustomScanState css;
	bool		direct;			/* one statement on our connection */
	const char *why_not;		/* else, why postgres_fdw reads */
	PlanState  *child;			/* the foreign scan, when it reads */
	char	   *sql;
	List	   *retrieved;		/* columns the SQL returns, in order */
	Oid			serverid;
	Oid			userid;
	WcShardSession *session;
	List	   *param_exprs;	/* ExprStates of the SQL's $n */
	FmgrInfo   *param_out;
	const char **param_values;
	bool		binary;			/* rows come in binary (built-in types only) */
	FmgrInfo   *in;				/* per scan column: input or receive function */
	Oid		   *ioparam;
	int32	   *typmod;
	bool		stream;			/* rows one by one: the SQL has no small LIMIT */
	bool		sent;
	bool		done;
	bool		columns_checked;	/* of the statement sent */
	PGresult   *rows;			/* rows received, not all returned yet */
	MemoryContextCallback free_rows;
	int			next_row;
	MemoryContext rowcxt;
} ShardReadState;

/* ---------- planning ---------- */

static void
shard_relid_inval(Datum arg, Oid relid)
{
	if (!OidIsValid(relid))
		shard_relids = NIL;		/* leaked, a few OIDs */
	else
		shard_relids = list_delete_oid(shard_relids, relid);
}

static bool
is_shard(Oid relid)
{
	MemoryContext old;

	if (list_member_oid(shard_relids, relid))
		return true;
	if (!get_rel_relispartition(relid) || !wc_is_sharded_table(get_partition_parent(relid, false)))
		return false;
	old = MemoryContextSwitchTo(TopMemoryContext);
	shard_relids = lappend_oid(shard_relids, relid);
	MemoryContextSwitchTo(old);
	return true;
}

static bool
is_postgres_fdw(Oid serverid)
{
	ForeignDataWrapper *fdw = GetForeignDataWrapper(GetForeignServer(serverid)->fdwid);
	char	   *handler = OidIsValid(fdw->fdwhandler) ? get_func_name(fdw->fdwhandler) : NULL;

	return handler && strcmp(handler, "postgres_fdw_handler") == 0;
}

static bool
has_system_column(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varattno < 0 && ((Var *) node)->varattno != TableOidAttributeNumber;
	return expression_tree_walker(node, has_system_column, context);
}

/* The plan's foreign scans' servers (one entry per scan) and its highest node id. */
static void
survey_plan(Plan *plan, List **servers, int *max_id)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();
	if (IsA(plan, ForeignScan))
		*servers = lappend_oid(*servers, ((ForeignScan *) plan)->fs_server);
	*max_id = Max(*max_id, plan->plan_node_id);
	foreach(lc, wc_plan_children(plan))
		survey_plan(lfirst(lc), servers, max_id);
	survey_plan(plan->lefttree, servers, max_id);
	survey_plan(plan->righttree, servers, max_id);
}

static bool
has_exec_param(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind == PARAM_EXEC;
	return expression_tree_walker(node, has_exec_param, context);
}

typedef struct Rewrite
{
	PlannedStmt *stmt;
	List	   *servers;		/* a server per foreign scan of the plan */
	int			next_id;
} Rewrite;

static Plan *
shard_read_or_same(Rewrite *rw, ForeignScan *fs)
{
	Index		rti = fs->scan.scanrelid;
	RangeTblEntry *rte;
	CustomScan *cs;
	List	   *retrieved;
	int			member;
	int			n = 0;
	ListCell   *lc;

	if (rti == 0 && bms_get_singleton_member(fs->fs_relids, &member))
		rti = member;			/* LIMIT, ORDER BY or aggregates sent too */
	if (fs->operation != CMD_SELECT || rti == 0 || list_length(fs->fdw_private) < 2 ||
		!IsA(linitial(fs->fdw_private), String) ||
		(lsecond(fs->fdw_private) != NIL && !IsA(lsecond(fs->fdw_private), IntList)))
		return (Plan *) fs;
	foreach(lc, rw->servers)
		n += lfirst_oid(lc) == fs->fs_server;
	rte = rt_fetch(rti, rw->stmt->rtable);
	if (n != 1 || rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE ||
		!is_shard(rte->relid) ||
		!is_postgres_fdw(fs->fs_server) ||
		has_system_column((Node *) fs->scan.plan.targetlist, NULL) ||
		has_system_column((Node *) fs->scan.plan.qual, NULL) ||
		has_system_column((Node *) fs->fdw_scan_tlist, NULL) ||
		has_exec_param((Node *) fs->fdw_exprs, NULL))
		return (Plan *) fs;
	retrieved = lsecond(fs->fdw_private);
	foreach(lc, retrieved)
		if (lfirst_int(lc) <= 0)
			return (Plan *) fs;

	cs = makeNode(CustomScan);
	cs->scan.plan.startup_cost = fs->scan.plan.startup_cost;
	cs->scan.plan.total_cost = fs->scan.plan.total_cost;
	cs->scan.plan.plan_rows = fs->scan.plan.plan_rows;
	cs->scan.plan.plan_width = fs->scan.plan.plan_width;
	cs->scan.plan.plan_node_id = rw->next_id++;
	cs->scan.plan.targetlist = fs->scan.plan.targetlist;
	cs->scan.plan.qual = fs->scan.plan.qual;
	/* initplans run where their parameters are read: here, or in the child */
	cs->scan.plan.initPlan = fs->scan.plan.initPlan;
	fs->scan.plan.initPlan = NIL;
	cs->scan.plan.extParam = bms_copy(fs->scan.plan.extParam);
	cs->scan.plan.allParam = bms_copy(fs->scan.plan.allParam);
	cs->scan.scanrelid = fs->scan.scanrelid;
	cs->custom_plans = list_make1(fs);
	cs->custom_exprs = fs->fdw_exprs;
	cs->custom_private = list_make3(linitial(fs->fdw_private), retrieved,
									list_make2_oid(fs->fs_server, rte->checkAsUser));
	cs->custom_scan_tlist = fs->fdw_scan_tlist;
	cs->custom_relids = fs->fs_relids;
	cs->methods = &shard_read_scan_methods;
	/* run by us, synchronously, if at all */
	fs->scan.plan.async_capable = false;
	return (Plan *) cs;
}

/*
 * Does a node run this child at most once per run of itself?  The scans
 * below one that could run them again (a nested loop's inner side, a
 * subplan, anything not listed) keep postgres_fdw: each run of ours would
 * be a new statement, with a new snapshot, where postgres_fdw rescans in
 * its one remote transaction.
 */
static bool
runs_child_once(Plan *plan, Plan *child)
{
	switch (nodeTag(plan))
	{
		case T_Append:
		case T_MergeAppend:
		case T_Limit:
		case T_Sort:
		case T_IncrementalSort:
		case T_Agg:
		case T_Group:
		case T_Result:
		case T_ProjectSet:
		case T_Unique:
		case T_WindowAgg:
		case T_SubqueryScan:
		case T_Material:
			return true;
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			return child == plan->lefttree;	/* the outer side */
		default:
			return false;
	}
}

static Plan *
rewrite_plan(Rewrite *rw, Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return NULL;
	check_stack_depth();
	if (IsA(plan, ForeignScan))
		return shard_read_or_same(rw, (ForeignScan *) plan);
	if (IsA(plan, SubqueryScan))
		((SubqueryScan *) plan)->subplan = rewrite_plan(rw, ((SubqueryScan *) plan)->subplan);
	else if (IsA(plan, Append) || IsA(plan, MergeAppend))
		foreach(lc, wc_plan_children(plan))
			lfirst(lc) = rewrite_plan(rw, lfirst(lc));
	if (plan->lefttree && runs_child_once(plan, plan->lefttree))
		plan->lefttree = rewrite_plan(rw, plan->lefttree);
	if (plan->righttree && runs_child_once(plan, plan->righttree))
		plan->righttree = rewrite_plan(rw, plan->righttree);
	return plan;
}

/* The LIMIT that sql ends with (postgres_fdw's deparse), if at most 10000; else 0. */
static int
small_limit(const char *sql)
{
	const char *suffix = "::bigint";
	size_t		len = strlen(sql);
	size_t		slen = strlen(suffix);
	const char *p;

	if (len < slen || strcmp(sql + len - slen, suffix) != 0)
		return 0;
	p = sql + len - slen;
	while (p > sql && isdigit((unsigned char) p[-1]))
		p--;
	if (p == sql + len - slen || p - sql < 7 || strncmp(p - 7, " LIMIT ", 7) != 0 ||
		(sql + len - slen) - p > 5 || atoi(p) > 10000)
		return 0;
	return atoi(p);
}

/*
 * " ORDER BY ..." for one shard read under sort, in the shard's column
 * names, or NULL where the shard could order otherwise: each key must be a
 * column the read returns, sorted by the built-in default btree ordering of
 * its type, in its own collation (as postgres_fdw sends an ORDER BY).
 */
static char *
remote_order_by(Sort *sort, CustomScan *cs, List *rtable)
{
	StringInfoData buf;

	if (cs->custom_scan_tlist != NIL || cs->scan.scanrelid == 0)
		return NULL;			/* a join or an aggregate sent to the shard */
	initStringInfo(&buf);
	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *tle = list_nth(cs->scan.plan.targetlist, sort->sortColIdx[i] - 1);
		Var		   *var = (Var *) tle->expr;
		Oid			opfamily,
					opcintype,
					opclass;
		int16		strategy;

		if (!IsA(var, Var) || var->varno != cs->scan.scanrelid || var->varattno <= 0 ||
			!get_ordering_op_properties(sort->sortOperators[i], &opfamily, &opcintype, &strategy) ||
			sort->sortOperators[i] >= FirstGenbkiObjectId ||
			!OidIsValid(opclass = GetDefaultOpClass(var->vartype, BTREE_AM_OID)) ||
			get_opclass_family(opclass) != opfamily ||
			sort->collations[i] != var->varcollid)
			return NULL;
		appendStringInfo(&buf, "%s %s %s %s", i == 0 ? " ORDER BY" : ",",
						 quote_identifier(wc_remote_column_name(rt_fetch(var->varno, rtable)->relid, var->varattno)),
						 strategy == BTLessStrategyNumber ? "ASC" : "DESC",
						 sort->nullsFirst[i] ? "NULLS FIRST" : "NULLS LAST");
	}
	return buf.data;
}

/*
 * LIMIT n over an Append or MergeAppend of shard reads, or over a Sort of
 * an Append of them: each shard needs to send at most n (plus OFFSET) rows,
 * already in order for a MergeAppend (its remote SQL has the ORDER BY), or
 * in the Sort's order, sent with it, for the Sort (the planner sorts on the
 * coordinator where it expects fewer rows than the LIMIT: a generic plan of
 * a multi-day read).  PostgreSQL 15 does not send a LIMIT through a
 * partitioned table; a generic plan of a prepared statement, which prunes
 * shards at run time, then shipped every row of its shard that matched.
 * With the LIMIT sent, that plan reads what a routed one reads, without
 * planning each execution: its cost is lowered so that the plan cache
 * keeps it (it compares it with the custom plans' costs).
 */
static void
push_limit(PlannedStmt *stmt)
{
	Limit	   *limit = (Limit *) stmt->planTree;
	Plan	   *below;
	Sort	   *sort = NULL;
	List	   *children;
	List	   *orders = NIL;
	int64		n;
	ListCell   *lc,
			   *lc2;

	if (!IsA(limit, Limit) || limit->limitOption != LIMIT_OPTION_COUNT ||
		limit->limitCount == NULL || !IsA(limit->limitCount, Const) ||
		((Const *) limit->limitCount)->constisnull ||
		((Const *) limit->limitCount)->consttype != INT8OID)
		return;
	n = DatumGetInt64(((Const *) limit->limitCount)->constvalue);
	if (limit->limitOffset != NULL)
	{
		if (!IsA(limit->limitOffset, Const) || ((Const *) limit->limitOffset)->constisnull ||
			((Const *) limit->limitOffset)->consttype != INT8OID)
			return;
		n += Max(DatumGetInt64(((Const *) limit->limitOffset)->constvalue), 0);
	}
	if (n <= 0 || n > 10000 || (below = outerPlan(limit)) == NULL)
		return;
	if (IsA(below, Sort) && outerPlan(below) != NULL && IsA(outerPlan(below), Append))
	{
		sort = (Sort *) below;
		below = outerPlan(below);
	}
	if (IsA(below, Append))
		children = ((Append *) below)->appendplans;
	else if (IsA(below, MergeAppend))
		children = ((MergeAppend *) below)->mergeplans;
	else
		return;
	foreach(lc, children)
	{
		CustomScan *cs = lfirst(lc);
		const char *sql;
		char	   *order = NULL;

		/*
		 * Every row it reads must reach the Limit (no local filter), and
		 * its SQL must not have a LIMIT or OFFSET already (a subquery's),
		 * nor an ORDER BY where it would get the Sort's.
		 */
		if (!IsA(cs, CustomScan) || cs->methods != &shard_read_scan_methods ||
			cs->scan.plan.qual != NIL)
			return;
		sql = strVal(linitial(cs->custom_private));
		if (strstr(sql, " LIMIT ") != NULL || strstr(sql, " OFFSET ") != NULL ||
			(sort && (strstr(sql, " ORDER BY ") != NULL ||
					  (order = remote_order_by(sort, cs, stmt->rtable)) == NULL)))
			return;
		orders = lappend(orders, order);
	}
	forboth(lc, children, lc2, orders)
	{
		CustomScan *cs = lfirst(lc);
		char	   *order = lfirst(lc2);

		linitial(cs->custom_private) =
			makeString(psprintf("%s%s LIMIT " INT64_FORMAT "::bigint", strVal(linitial(cs->custom_private)),
								order ? order : "", n));
	}
	limit->plan.startup_cost = 0;
	limit->plan.total_cost = 1;
}

/*
 * After planning (router.c, the outermost planner hook): foreign scans of
 * sharded tables' partitions in a read-only statement as WidecolShardRead,
 * those the statement runs once (not in subplans, not rescanned).
 */
void
wc_plan_shard_reads(PlannedStmt *stmt)
{
	Rewrite		rw = {stmt, NIL, 0};
	int			max_id = -1;
	ListCell   *lc;

	if (!wc_shard_direct_reads || stmt->commandType != CMD_SELECT || stmt->hasModifyingCTE ||
		stmt->rowMarks != NIL || stmt->planTree == NULL)
		return;
	survey_plan(stmt->planTree, &rw.servers, &max_id);
	foreach(lc, stmt->subplans)
		survey_plan(lfirst(lc), &rw.servers, &max_id);
	if (rw.servers == NIL)
		return;
	rw.next_id = max_id + 1;
	stmt->planTree = rewrite_plan(&rw, stmt->planTree);
	push_limit(stmt);
}

/* ---------- execution ---------- */

static Node *
shard_read_create_state(CustomScan *cs)
{
	ShardReadState *st = (ShardReadState *) newNode(sizeof(ShardReadState), T_CustomScanState);

	st->css.methods = &shard_read_exec_methods;
	return (Node *) st;
}

/* Why a second connection could see something else than postgres_fdw's (NULL: it cannot). */
static const char *
direct_refused(void)
{
	if (!wc_shard_direct_reads)
		return "widecol.shard_direct_reads is off";
	if (IsTransactionBlock())
		return "in a transaction block";
	if (xact_wrote || GetCurrentCommandId(false) != FirstCommandId)
		return "after a write or command of the transaction";
	if (XactIsoLevel >= XACT_REPEATABLE_READ)
		return "a transaction snapshot";
	/* a function's query: the function may read the shard again */
	if (executor_depth > 0)
		return "in a function";
	return NULL;
}

/* The rows received and not returned: libpq's memory, freed with the query's too. */
static void
drop_rows(ShardReadState *st)
{
	if (st->rows)
		PQclear(st->rows);
	st->rows = NULL;
}

static void
drop_rows_callback(void *arg)
{
	drop_rows((ShardReadState *) arg);
}

static void
send_query(ShardReadState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	int			n = list_length(st->param_exprs);
	ListCell   *lc;
	int			i = 0;

	if (n > 0)
	{
		/* text as postgres_fdw sends it: ISO dates, postgres intervals, exact floats */
		int			nestlevel = NewGUCNestLevel();
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		foreach(lc, st->param_exprs)
		{
			bool		isnull;
			Datum		d = ExecEvalExpr(lfirst(lc), econtext, &isnull);

			st->param_values[i] = isnull ? NULL : OutputFunctionCall(&st->param_out[i], d);
			i++;
		}
		AtEOXact_GUC(true, nestlevel);
		MemoryContextSwitchTo(old);
	}
	wc_shard_session_send(st->session, st->sql, n, st->param_values, st->binary, st->stream);
	st->sent = true;
	st->done = false;
	st->columns_checked = false;
}

static void
shard_read_begin(CustomScanState *node, EState *estate, int eflags)
{
	ShardReadState *st = (ShardReadState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *ids = lthird(cs->custom_private);
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	ListCell   *lc;
	int			i = 0;
	int			limit;

	st->sql = strVal(linitial(cs->custom_private));
	st->retrieved = lsecond(cs->custom_private);
	st->serverid = linitial_oid(ids);
	st->userid = OidIsValid(lsecond_oid(ids)) ? lsecond_oid(ids) : GetUserId();
	st->why_not = direct_refused();
	st->direct = st->why_not == NULL;
	if (st->direct && !(eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		(st->session = wc_shard_session(st->serverid, st->userid)) == NULL)
	{
		st->direct = false;
		st->why_not = "its connection is busy with another read";
	}
	if (!st->direct || (eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		st->child = ExecInitNode(linitial(cs->custom_plans), estate, eflags);
		node->custom_ps = list_make1(st->child);
		return;
	}

	st->param_exprs = ExecInitExprList(cs->custom_exprs, &node->ss.ps);
	st->param_out = palloc0(Max(1, list_length(cs->custom_exprs)) * sizeof(FmgrInfo));
	st->param_values = palloc0(Max(1, list_length(cs->custom_exprs)) * sizeof(char *));
	foreach(lc, cs->custom_exprs)
	{
		Oid			typoutput;
		bool		varlena;

		getTypeOutputInfo(exprType(lfirst(lc)), &typoutput, &varlena);
		fmgr_info(typoutput, &st->param_out[i++]);
	}

	st->in = palloc0(desc->natts * sizeof(FmgrInfo));
	st->ioparam = palloc0(desc->natts * sizeof(Oid));
	st->typmod = palloc0(desc->natts * sizeof(int32));
	/*
	 * Binary rows skip parsing text (uuid_in, timestamptz_in were most of a
	 * 100-row read); only for built-in types, whose binary format and OIDs
	 * (arrays name their element type) are the same on every shard, and
	 * where the session's client encoding is the database's: the receive
	 * functions of text types convert from the client encoding, while the
	 * shard sends the database's.
	 */
	st->binary = pg_get_client_encoding() == GetDatabaseEncoding();	/* textrecv converts from the client's */
	foreach(lc, st->retrieved)
		st->binary &= TupleDescAttr(desc, lfirst_int(lc) - 1)->atttypid < FirstGenbkiObjectId;
	foreach(lc, st->retrieved)
	{
		int			a = lfirst_int(lc) - 1;
		Form_pg_attribute att = TupleDescAttr(desc, a);
		Oid			fn;

		if (st->binary)
			getTypeBinaryInputInfo(att->atttypid, &fn, &st->ioparam[a]);
		else
			getTypeInputInfo(att->atttypid, &fn, &st->ioparam[a]);
		fmgr_info(fn, &st->in[a]);
		st->typmod[a] = att->atttypmod;
	}
	st->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "widecol shard read row",
									   ALLOCSET_SMALL_SIZES);
	/* an error ends the query without EndCustomScan: its rows go with its memory */
	st->free_rows.func = drop_rows_callback;
	st->free_rows.arg = st;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &st->free_rows);
	/*
	 * A small LIMIT sent with the SQL bounds the rows: if they are small
	 * too (by the planner's width), they come in one result, without one
	 * result per row (postgres_fdw deparses it last, as "LIMIT n::bigint").
	 * Any other read streams its rows.
	 */
	limit = small_limit(st->sql);
	st->stream = limit == 0 || (double) limit * Max(cs->scan.plan.plan_width, 1) > 4.0 * 1024 * 1024;
	/* start the shard now: the others of an Append then work meanwhile */
	send_query(st);
}

/*
 * The statement's first rows have the columns asked for; in binary, of the
 * local columns' types (a shard whose column has another type, which
 * check_shards would report, must not be read as if it had not).  Once per
 * statement: every row of it has the same columns.
 */
static void
check_columns(ShardReadState *st, PGresult *res)
{
	TupleDesc	desc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	ListCell   *lc;
	int			col = 0;

	if (st->retrieved != NIL && PQnfields(res) != list_length(st->retrieved))
		ereport(ERROR,			/* no columns asked for: postgres_fdw sends SELECT NULL */
				(errcode(ERRCODE_FDW_INVALID_COLUMN_NUMBER),
				 errmsg("server \"%s\" returned %d columns where %d were asked for",
						wc_shard_session_server(st->session), PQnfields(res),
						list_length(st->retrieved))));
	st->columns_checked = true;
	if (!st->binary)
		return;
	foreach(lc, st->retrieved)
	{
		Oid			expected = TupleDescAttr(desc, lfirst_int(lc) - 1)->atttypid;

		if (col < PQnfields(res) && PQftype(res, col) != expected)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of a row from server \"%s\" has type %u, not %s",
							col + 1, wc_shard_session_server(st->session), PQftype(res, col),
							format_type_be(expected)),
					 errhint("widecol.check_shards() compares the shards' columns; widecol.shard_direct_reads = off reads through postgres_fdw.")));
		col++;
	}
}

static TupleTableSlot *
shard_read_next(ScanState *ss)
{
	ShardReadState *st = (ShardReadState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	PGresult   *res;
	int			row;
	int			col = 0;
	ListCell   *lc;
	MemoryContext old;

	if (!st->sent)
		send_query(st);
	ExecClearTuple(slot);
	if (st->rows && st->next_row >= PQntuples(st->rows))
		drop_rows(st);
	if (st->rows == NULL && !st->done)
	{
		st->rows = wc_shard_session_next(st->session);
		st->next_row = 0;
	}
	if (st->rows == NULL)
	{
		st->done = true;
		return slot;
	}
	res = st->rows;
	row = st->next_row++;
	if (!st->columns_checked)
		check_columns(st, res);
	MemoryContextReset(st->rowcxt);
	old = MemoryContextSwitchTo(st->rowcxt);
	memset(slot->tts_isnull, true, desc->natts * sizeof(bool));
	foreach(lc, st->retrieved)
	{
		int			a = lfirst_int(lc) - 1;
		char	   *value = PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);

		/* with NULL too: a domain's NOT NULL is checked */
		if (!st->binary)
			slot->tts_values[a] = InputFunctionCall(&st->in[a], value, st->ioparam[a], st->typmod[a]);
		else if (value == NULL)
			slot->tts_values[a] = ReceiveFunctionCall(&st->in[a], NULL, st->ioparam[a], st->typmod[a]);
		else
		{
			/* libpq ends every value with a zero byte, as a StringInfo's */
			StringInfoData buf = {value, PQgetlength(res, row, col), PQgetlength(res, row, col) + 1, 0};

			slot->tts_values[a] = ReceiveFunctionCall(&st->in[a], &buf, st->ioparam[a], st->typmod[a]);
			if (buf.cursor != buf.len)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("incorrect binary data format in column %d of a row from server \"%s\"",
								col + 1, wc_shard_session_server(st->session))));
		}
		slot->tts_isnull[a] = value == NULL;
		col++;
	}
	MemoryContextSwitchTo(old);
	if (ss->ss_currentRelation)
		slot->tts_tableOid = RelationGetRelid(ss->ss_currentRelation);
	return ExecStoreVirtualTuple(slot);
}

static bool
shard_read_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
shard_read_exec(CustomScanState *node)
{
	ShardReadState *st = (ShardReadState *) node;

	if (!st->direct)
		return ExecProcNode(st->child);
	return ExecScan(&node->ss, shard_read_next, shard_read_recheck);
}

static void
shard_read_end(CustomScanState *node)
{
	ShardReadState *st = (ShardReadState *) node;

	if (st->child)
		ExecEndNode(st->child);
	else if (st->session && st->sent && !st->done)
		wc_shard_session_stop(st->session);
	drop_rows(st);
}

static void
shard_read_rescan(CustomScanState *node)
{
	ShardReadState *st = (ShardReadState *) node;

	if (!st->direct)
	{
		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(st->child, node->ss.ps.chgParam);
		ExecReScan(st->child);
		return;
	}
	if (st->sent && !st->done)
		wc_shard_session_stop(st->session);
	drop_rows(st);
	st->sent = false;
	st->done = false;
}

static void
shard_read_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	ShardReadState *st = (ShardReadState *) node;

	ExplainPropertyText("Server", GetForeignServer(st->serverid)->servername, es);
	ExplainPropertyText("Sent As", st->direct ? "one statement" : psprintf("postgres_fdw cursor (%s)", st->why_not), es);
	/* the foreign scan below shows it when it is initialized, but not a LIMIT sent too */
	if (es->verbose &&
		(st->child == NULL ||
		 strcmp(st->sql, strVal(linitial(((ForeignScan *) st->child->plan)->fdw_private))) != 0))
		ExplainPropertyText("Remote SQL", st->sql, es);
}

/* ---------- setup ---------- */

static void
shard_read_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (queryDesc->operation != CMD_SELECT || queryDesc->plannedstmt->hasModifyingCTE ||
		queryDesc->plannedstmt->rowMarks != NIL)
		xact_wrote = true;
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
shard_read_executor_run(QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once)
{
	executor_depth++;
	PG_TRY();
	{
		if (prev_executor_run)
			prev_executor_run(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		executor_depth--;
	}
	PG_END_TRY();
}

static void
shard_read_executor_finish(QueryDesc *queryDesc)
{
	executor_depth++;
	PG_TRY();
	{
		if (prev_executor_finish)
			prev_executor_finish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		executor_depth--;
	}
	PG_END_TRY();
}

/*
 * Utility statements that may write (COPY and TRUNCATE into a sharded table
 * go into postgres_fdw's remote transaction) or run queries (DO, CALL) end
 * direct reads for the rest of the transaction.
 */
static void
shard_read_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	switch (nodeTag(pstmt->utilityStmt))
	{
		case T_ExplainStmt:
		case T_VariableSetStmt:
		case T_VariableShowStmt:
		case T_PrepareStmt:
		case T_ExecuteStmt:
		case T_DeallocateStmt:
		case T_TransactionStmt:
		case T_DeclareCursorStmt:
		case T_FetchStmt:
		case T_ClosePortalStmt:
			break;
		default:
			xact_wrote = true;
	}
	if (prev_utility)
		prev_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
}

static void
shard_read_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
	{
		xact_wrote = false;
		executor_depth = 0;
	}
}

void
wc_install_shard_reads(void)
{
	DefineCustomBoolVariable("widecol.shard_direct_reads",
							 "Reads a shard of a sharded table with one autocommit statement where postgres_fdw would open a transaction and a cursor.",
							 "Only for read-only statements outside a transaction block; postgres_fdw reads otherwise.",
							 &wc_shard_direct_reads, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("widecol.shard_read_spin",
							"Microseconds a direct shard read polls for the shard's first rows before it sleeps.",
							"Trades coordinator CPU for latency of short reads; 0 sleeps at once.",
							&wc_shard_read_spin, 300, 0, 100000, PGC_USERSET, 0,
							NULL, NULL, NULL);
	shard_read_scan_methods.CustomName = "WidecolShardRead";
	shard_read_scan_methods.CreateCustomScanState = shard_read_create_state;
	RegisterCustomScanMethods(&shard_read_scan_methods);
	shard_read_exec_methods.CustomName = "WidecolShardRead";
	shard_read_exec_methods.BeginCustomScan = shard_read_begin;
	shard_read_exec_methods.ExecCustomScan = shard_read_exec;
	shard_read_exec_methods.EndCustomScan = shard_read_end;
	shard_read_exec_methods.ReScanCustomScan = shard_read_rescan;
	shard_read_exec_methods.ExplainCustomScan = shard_read_explain;
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = shard_read_executor_start;
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = shard_read_executor_run;
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = shard_read_executor_finish;
	prev_utility = ProcessUtility_hook;
	ProcessUtility_hook = shard_read_utility;
	RegisterXactCallback(shard_read_xact_callback, NULL);
	CacheRegisterRelcacheCallback(shard_relid_inval, (Datum) 0);
}
