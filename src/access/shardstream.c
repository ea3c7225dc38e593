/*
 * shardstream.c — COPY FROM into a sharded table, streamed to the shards
 * with the COPY protocol.
 *
 * PostgreSQL's COPY machinery reads the input (BeginCopyFrom/NextCopyFrom:
 * every format and option, the column list, defaults), the statement's
 * WHERE is evaluated here as CopyFrom would, and each row is routed to its
 * partition as tuple routing does (shardroute.c).  The row is written as a
 * line of COPY text into that shard's buffer, and the buffers are sent as
 * one "COPY remote_table (columns) FROM STDIN" per shard, all open at once
 * on postgres_fdw's connections (shardconn.c), so the shards insert while
 * the coordinator still parses.  A shard's data goes over as soon as its
 * socket takes it; a shard that reads slowly gets its rows buffered (up to
 * BUFFER_MAX) instead of stalling the others.
 *
 * The privilege checks and WHERE transformation are DoCopy's (copy.c);
 * the rows, the triggers (none: see stream_possible) and the remote
 * transaction are what a plain COPY through postgres_fdw would give.  Only
 * for tables that are hash-partitioned on plain columns, whose partitions
 * are all postgres_fdw foreign tables, with no INSERT trigger on the parent
 * or a partition, and with the output styles postgres_fdw sends values in
 * (DateStyle ISO, IntervalStyle postgres, extra_float_digits > 0);
 * otherwise shardcopy.c's INSERT ... SELECT runs.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "commands/copy.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "partitioning/partdesc.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/partcache.h"
#include "utils/rel.h"

#include "access/access.h"

/* a shard's rows are handed to libpq in pieces of about this size */
#define FLUSH_AT	(64 * 1024)
/* rows kept for a shard whose socket is full before waiting for it */
#define BUFFER_MAX	(4 * 1024 * 1024)

typedef struct Shard
{
	Oid			relid;			/* the foreign partition */
	char	   *sql;			/* COPY remote_table (columns) FROM STDIN */
	WcRemoteCopy *remote;		/* started with its first full buffer */
	StringInfoData buf;			/* lines of COPY text not sent yet */
} Shard;

typedef struct Stream
{
	Relation	rel;
	PartitionDesc desc;
	Shard	   *shards;			/* by partition index */
	FmgrInfo   *out;			/* output function per column */
	bool	   *as_text;		/* column whose value is its text (textout) */
	int			nkeys;
	AttrNumber *keyatt;
} Stream;

static bool
inserts_fire_triggers(Relation rel)
{
	TriggerDesc *t = rel->trigdesc;

	return t && (t->trig_insert_before_row || t->trig_insert_after_row ||
				 t->trig_insert_instead_row || t->trig_insert_before_statement ||
				 t->trig_insert_after_statement || t->trig_insert_new_table);
}

static bool
option_false(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, name) == 0)
			return !defGetBoolean(lfirst_node(DefElem, lc));
	return false;
}

/* A postgres_fdw foreign table that a COPY may write without triggers. */
static bool
plain_fdw_partition(Oid relid)
{
	ForeignTable *ft;
	ForeignServer *fs;
	ForeignDataWrapper *fdw;
	Relation	part;
	bool		ok;

	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		return false;
	ft = GetForeignTable(relid);
	fs = GetForeignServer(ft->serverid);
	fdw = GetForeignDataWrapper(fs->fdwid);
	if (!OidIsValid(fdw->fdwhandler) ||
		strcmp(get_func_name(fdw->fdwhandler), "postgres_fdw_handler") != 0 ||
		option_false(ft->options, "updatable") ||
		(option_false(fs->options, "updatable") && !option_false(ft->options, "updatable")))
		return false;
	part = table_open(relid, RowExclusiveLock);
	ok = !inserts_fire_triggers(part);
	table_close(part, NoLock);
	return ok;
}

/*
 * Can this COPY be streamed?  Decided before anything is read, so that the
 * INSERT ... SELECT path can still take it.
 */
static bool
stream_possible(Relation rel)
{
	PartitionKey key = RelationGetPartitionKey(rel);
	PartitionDesc desc;
	int			i;

	if (DateStyle != USE_ISO_DATES || IntervalStyle != INTSTYLE_POSTGRES ||
		extra_float_digits <= 0)
		return false;
	if (key->strategy != PARTITION_STRATEGY_HASH || inserts_fire_triggers(rel))
		return false;
	for (i = 0; i < key->partnatts; i++)
		if (key->partattrs[i] == 0)
			return false;		/* an expression */
	desc = RelationGetPartitionDesc(rel, true);
	if (desc->nparts == 0)
		return false;
	for (i = 0; i < desc->nparts; i++)
		if (!plain_fdw_partition(desc->oids[i]))
			return false;
	return true;
}

static const char *
remote_copy_sql(Relation parent, Oid part)
{
	ForeignTable *ft = GetForeignTable(part);
	TupleDesc	desc = RelationGetDescr(parent);
	const char *schema = NULL;
	const char *table = NULL;
	StringInfoData sql;
	ListCell   *lc;
	bool		first = true;
	int			i;

	foreach(lc, ft->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "schema_name") == 0)
			schema = defGetString(def);
		else if (strcmp(def->defname, "table_name") == 0)
			table = defGetString(def);
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "COPY %s (",
					 quote_qualified_identifier(schema ? schema : get_namespace_name(get_rel_namespace(part)),
												table ? table : get_rel_name(part)));
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		AttrNumber	partatt;
		const char *name = NameStr(att->attname);

		if (att->attisdropped)
			continue;
		/* the partition's column of that name, and its column_name option */
		partatt = get_attnum(part, name);
		foreach(lc, GetForeignColumnOptions(part, partatt))
			if (strcmp(lfirst_node(DefElem, lc)->defname, "column_name") == 0)
				name = defGetString(lfirst_node(DefElem, lc));
		appendStringInfo(&sql, "%s%s", first ? "" : ", ", quote_identifier(name));
		first = false;
	}
	appendStringInfoString(&sql, ") FROM STDIN");
	return sql.data;
}

static Stream *
stream_open(Relation rel)
{
	Stream	   *s = palloc0(sizeof(Stream));
	TupleDesc	desc = RelationGetDescr(rel);
	PartitionKey key = RelationGetPartitionKey(rel);
	int			i;

	s->rel = rel;
	s->desc = RelationGetPartitionDesc(rel, true);
	s->shards = palloc0(sizeof(Shard) * s->desc->nparts);
	for (i = 0; i < s->desc->nparts; i++)
	{
		s->shards[i].relid = s->desc->oids[i];
		s->shards[i].sql = (char *) remote_copy_sql(rel, s->desc->oids[i]);
		initStringInfo(&s->shards[i].buf);
	}
	s->out = palloc0(sizeof(FmgrInfo) * desc->natts);
	s->as_text = palloc0(sizeof(bool) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			outfunc;
		bool		isvarlena;

		if (att->attisdropped)
			continue;
		getTypeOutputInfo(att->atttypid, &outfunc, &isvarlena);
		fmgr_info(outfunc, &s->out[i]);
		s->as_text[i] = (outfunc == F_TEXTOUT);
	}
	s->nkeys = key->partnatts;
	s->keyatt = key->partattrs;
	return s;
}

/* COPY text: backslash, newline, carriage return and tab escaped. */
static void
append_escaped(StringInfo buf, const char *p, int len)
{
	const char *end = p + len;
	const char *start = p;

	for (; p < end; p++)
	{
		char		c = *p;
		char		esc;

		switch (c)
		{
			case '\\':
				esc = '\\';
				break;
			case '\n':
				esc = 'n';
				break;
			case '\r':
				esc = 'r';
				break;
			case '\t':
				esc = 't';
				break;
			default:
				continue;
		}
		appendBinaryStringInfo(buf, start, p - start);
		appendStringInfoCharMacro(buf, '\\');
		appendStringInfoCharMacro(buf, esc);
		start = p + 1;
	}
	appendBinaryStringInfo(buf, start, end - start);
}

static void
append_row(Stream *s, StringInfo buf, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	bool		first = true;
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		if (TupleDescAttr(desc, i)->attisdropped)
			continue;
		if (!first)
			appendStringInfoCharMacro(buf, '\t');
		first = false;
		if (slot->tts_isnull[i])
			appendBinaryStringInfo(buf, "\\N", 2);
		else if (s->as_text[i])
		{
			text	   *t = DatumGetTextPP(slot->tts_values[i]);

			append_escaped(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
		}
		else
		{
			char	   *v = OutputFunctionCall(&s->out[i], slot->tts_values[i]);

			append_escaped(buf, v, strlen(v));
		}
	}
	appendStringInfoCharMacro(buf, '\n');
}

static int
route_row(Stream *s, TupleTableSlot *slot)
{
	Datum		values[PARTITION_MAX_KEYS];
	bool		isnull[PARTITION_MAX_KEYS];
	int			i;
	int			idx;

	for (i = 0; i < s->nkeys; i++)
	{
		values[i] = slot->tts_values[s->keyatt[i] - 1];
		isnull[i] = slot->tts_isnull[s->keyatt[i] - 1];
	}
	idx = wc_hash_partition_index(s->rel, s->desc, values, isnull);
	if (idx < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("no partition of relation \"%s\" found for row",
						RelationGetRelationName(s->rel)),
				 errhint("Every remainder of the hash modulus needs a partition (widecol.shards lists them).")));
	return idx;
}

/* Hand a shard's buffer to its connection when it is worth it (or final). */
static void
send_rows(Shard *sh, bool final)
{
	if (sh->buf.len == 0 || (!final && sh->buf.len < FLUSH_AT))
		return;
	if (sh->remote == NULL)
		sh->remote = wc_remote_copy_begin(sh->relid, sh->sql);
	/* a busy socket: keep buffering, unless the buffer is full */
	if (!final && sh->buf.len < BUFFER_MAX && !wc_remote_copy_ready(sh->remote))
		return;
	wc_remote_copy_put(sh->remote, sh->buf.data, sh->buf.len);
	resetStringInfo(&sh->buf);
}

static uint64
stream_rows(Stream *s, CopyFromState cstate, List *where)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(s->rel), &TTSOpsVirtual);
	ExprState  *qual = where ? ExecPrepareQual(where, estate) : NULL;
	ErrorContextCallback errcb;
	int			nparts = s->desc->nparts;
	uint64		rows = 0;
	int			i;

	econtext->ecxt_scantuple = slot;
	PG_TRY();
	{
		/* errors while reading name the input line, as CopyFrom's do */
		errcb.callback = CopyFromErrorCallback;
		errcb.arg = cstate;
		errcb.previous = error_context_stack;
		error_context_stack = &errcb;
		for (;;)
		{
			MemoryContext old;
			int			idx;

			CHECK_FOR_INTERRUPTS();
			ResetPerTupleExprContext(estate);
			old = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));
			ExecClearTuple(slot);
			if (!NextCopyFrom(cstate, econtext, slot->tts_values, slot->tts_isnull))
			{
				MemoryContextSwitchTo(old);
				break;
			}
			ExecStoreVirtualTuple(slot);
			if (qual && !ExecQual(qual, econtext))
			{
				MemoryContextSwitchTo(old);
				continue;
			}
			idx = route_row(s, slot);
			append_row(s, &s->shards[idx].buf, slot);
			MemoryContextSwitchTo(old);
			send_rows(&s->shards[idx], false);
		}
		error_context_stack = errcb.previous;

		/* the rest, CopyDone everywhere, then the shards' outcomes */
		for (i = 0; i < nparts; i++)
		{
			send_rows(&s->shards[i], true);
			if (s->shards[i].remote)
				wc_remote_copy_end(s->shards[i].remote);
		}
		for (i = 0; i < nparts; i++)
			if (s->shards[i].remote)
				rows += wc_remote_copy_finish(s->shards[i].remote);
	}
	PG_CATCH();
	{
		for (i = 0; i < nparts; i++)
			wc_remote_copy_abandon(s->shards[i].remote);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	return rows;
}

/*
 * DoCopy's checks for COPY FROM a file or program and of the INSERT
 * privilege on the columns, and its WHERE transformation.
 */
static List *
check_copy(ParseState *pstate, Relation rel, CopyStmt *stmt)
{
	ParseNamespaceItem *nsitem;
	RangeTblEntry *rte;
	Node	   *where = NULL;
	ListCell   *lc;

	if (stmt->filename != NULL && stmt->is_program &&
		!has_privs_of_role(GetUserId(), ROLE_PG_EXECUTE_SERVER_PROGRAM))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser or have privileges of the pg_execute_server_program role to COPY to or from an external program"),
				 errhint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")));
	if (stmt->filename != NULL && !stmt->is_program &&
		!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser or have privileges of the pg_read_server_files role to COPY from a file"),
				 errhint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")));

	nsitem = addRangeTableEntryForRelation(pstate, rel, RowExclusiveLock, NULL, false, false);
	rte = nsitem->p_rte;
	rte->requiredPerms = ACL_INSERT;
	if (stmt->whereClause)
	{
		addNSItemToQuery(pstate, nsitem, false, true, true);
		where = transformExpr(pstate, stmt->whereClause, EXPR_KIND_COPY_WHERE);
		where = coerce_to_boolean(pstate, where, "WHERE");
		assign_expr_collations(pstate, where);
		where = eval_const_expressions(NULL, where);
		where = (Node *) canonicalize_qual((Expr *) where, false);
		where = (Node *) make_ands_implicit((Expr *) where);
	}
	foreach(lc, CopyGetAttnums(RelationGetDescr(rel), rel, stmt->attlist))
		rte->insertedCols = bms_add_member(rte->insertedCols,
										   lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	ExecCheckRTPerms(pstate->p_rtable, true);
	PreventCommandIfReadOnly("COPY FROM");
	PreventCommandIfParallelMode("COPY FROM");
	return (List *) where;
}

/*
 * COPY FROM into a sharded table, streamed to the shards (true), or false
 * when this table or session does not allow it (nothing done then).
 */
bool
wc_copy_stream(PlannedStmt *pstmt, const char *queryString,
			   QueryEnvironment *queryEnv, QueryCompletion *qc)
{
	CopyStmt   *stmt = (CopyStmt *) pstmt->utilityStmt;
	Relation	rel = table_openrv(stmt->relation, RowExclusiveLock);
	ParseState *pstate;
	List	   *where;
	CopyFromState cstate;
	uint64		rows;

	if (!stream_possible(rel))
	{
		table_close(rel, NoLock);
		return false;
	}
	pstate = make_parsestate(NULL);
	pstate->p_sourcetext = queryString;
	pstate->p_queryEnv = queryEnv;
	where = check_copy(pstate, rel, stmt);
	cstate = BeginCopyFrom(pstate, rel, (Node *) where, stmt->filename, stmt->is_program,
						   NULL, stmt->attlist, stmt->options);
	rows = stream_rows(stream_open(rel), cstate, where);
	EndCopyFrom(cstate);
	free_parsestate(pstate);
	table_close(rel, NoLock);
	if (qc)
		SetQueryCompletion(qc, CMDTAG_COPY, rows);
	return true;
}
