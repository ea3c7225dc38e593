/*
 * shardstream.c — COPY FROM into a sharded table, streamed to the shards
 * with the COPY protocol.
 *
 * PostgreSQL's COPY machinery reads the input (BeginCopyFrom/NextCopyFrom:
 * every format and option, the column list, defaults), the statement's
 * WHERE is evaluated here as CopyFrom would, and each row is routed to its
 * partition as tuple routing does (shardroute.c).  The row is written into
 * that shard's buffer, in binary COPY format where the shard's columns have
 * our types (else as COPY text), and the buffers are sent as one
 * "COPY remote_table (columns) FROM STDIN" per shard, all open at once on
 * postgres_fdw's connections (shardconn.c), so the shards insert while the
 * coordinator still parses.  A shard's data goes over as soon as its
 * socket takes it; a shard that reads slowly gets its rows buffered (up to
 * BUFFER_MAX) instead of stalling the others.
 *
 * The privilege checks and WHERE transformation are DoCopy's (copy.c);
 * the rows, the triggers (none: see stream_refused) and the remote
 * transaction are what a plain COPY through postgres_fdw would give.  Only
 * for tables that are hash-partitioned on plain columns, whose partitions
 * are all postgres_fdw foreign tables on different servers, with no INSERT
 * trigger on the parent or a partition, and with the output styles
 * postgres_fdw sends values in (DateStyle ISO, IntervalStyle postgres,
 * extra_float_digits > 0); otherwise shardcopy.c's INSERT ... SELECT runs.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "commands/copy.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
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
	char	   *copy_text;		/* COPY remote_table (columns) FROM STDIN */
	char	   *copy_binary;	/* the same in binary format */
	char	   *same_types;		/* query: the shard's columns have our types */
	WcRemoteCopy *remote;		/* started with the shard's first row */
	bool		binary;			/* rows sent in binary format */
	StringInfoData buf;			/* rows not sent yet */
	int			send_at;		/* buf.len at which to try sending */
} Shard;

typedef struct Stream
{
	Relation	rel;
	PartitionDesc desc;
	Shard	   *shards;			/* by partition index */
	FmgrInfo   *out;			/* output function per column */
	FmgrInfo   *send;			/* binary send function per column */
	bool	   *as_text;		/* column whose value is its text (textout) */
	bool		binary_ok;		/* every column can be sent in binary */
	MemoryContext cxt;			/* the statement's */
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

/* A boolean option of a foreign table or server, dflt if not set. */
static bool
option_bool(List *options, const char *name, bool dflt)
{
	ListCell   *lc;

	foreach(lc, options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, name) == 0)
			return defGetBoolean(lfirst_node(DefElem, lc));
	return dflt;
}

/*
 * Why a COPY may not write partition relid straight to its shard (NULL if
 * it may): a postgres_fdw foreign table without INSERT triggers, on a
 * server no other partition uses (a connection carries one COPY at a time).
 */
static const char *
partition_refused(Oid relid, List **servers)
{
	ForeignTable *ft;
	ForeignServer *fs;
	ForeignDataWrapper *fdw;
	Relation	part;
	bool		triggers;

	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		return "a partition is not a foreign table";
	ft = GetForeignTable(relid);
	fs = GetForeignServer(ft->serverid);
	fdw = GetForeignDataWrapper(fs->fdwid);
	if (!OidIsValid(fdw->fdwhandler) ||
		strcmp(get_func_name(fdw->fdwhandler), "postgres_fdw_handler") != 0)
		return "a partition is not a postgres_fdw foreign table";
	/* postgres_fdw's "updatable": the table's setting, else the server's */
	if (!option_bool(ft->options, "updatable", option_bool(fs->options, "updatable", true)))
		return "a partition is not updatable";
	if (list_member_oid(*servers, fs->serverid))
		return "two partitions are on the same server";
	*servers = lappend_oid(*servers, fs->serverid);
	part = table_open(relid, RowExclusiveLock);
	triggers = inserts_fire_triggers(part);
	table_close(part, NoLock);
	return triggers ? "a partition has INSERT triggers" : NULL;
}

/*
 * Why this COPY cannot be streamed (NULL if it can).  Decided before
 * anything is read, so that the INSERT ... SELECT path can still take it.
 */
/* Is relid registered in widecol.sharded_table?  (Also for executor/shardread.c.) */
bool
wc_is_sharded_table(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};
	bool		found;

	SPI_connect();
	if (SPI_execute_with_args("SELECT 1 FROM widecol.sharded_table WHERE parent = $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "widecol: could not read widecol.sharded_table");
	found = SPI_processed > 0;
	SPI_finish();
	return found;
}

static const char *
stream_refused(Relation rel)
{
	PartitionKey key = RelationGetPartitionKey(rel);
	PartitionDesc desc;
	List	   *servers = NIL;
	int			i;

	/*
	 * Only into shards widecol made: a COPY skips what an INSERT would go
	 * through on the remote side (rules, an updatable view's definition),
	 * which only the shard knows of.
	 */
	if (!wc_is_sharded_table(RelationGetRelid(rel)))
		return "the table was not made by widecol.create_sharded_table";
	if (DateStyle != USE_ISO_DATES || IntervalStyle != INTSTYLE_POSTGRES ||
		extra_float_digits <= 0)
		return "DateStyle, IntervalStyle or extra_float_digits is not postgres_fdw's";
	if (key->strategy != PARTITION_STRATEGY_HASH)
		return "the table is not hash-partitioned";
	if (inserts_fire_triggers(rel))
		return "the table has INSERT triggers";
	for (i = 0; i < key->partnatts; i++)
		if (key->partattrs[i] == 0)
			return "the partition key has an expression";
	desc = RelationGetPartitionDesc(rel, true);
	if (desc->nparts == 0)
		return "the table has no partitions";
	for (i = 0; i < desc->nparts; i++)
	{
		const char *why = partition_refused(desc->oids[i], &servers);

		if (why)
			return why;
	}
	return NULL;
}

/*
 * The shard's COPY statements for partition part (the remote table and
 * column names of postgres_fdw's options), and a query that is true if
 * the remote columns have the coordinator's types (so that binary format
 * means the same there).
 */
static void
remote_sql(Relation parent, Shard *sh)
{
	Oid			part = sh->relid;
	ForeignTable *ft = GetForeignTable(part);
	TupleDesc	desc = RelationGetDescr(parent);
	const char *schema = NULL;
	const char *table = NULL;
	const char *qualified;
	StringInfoData cols;
	StringInfoData names;
	StringInfoData types;
	ListCell   *lc;
	int			n = 0;
	int			i;

	foreach(lc, ft->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "schema_name") == 0)
			schema = defGetString(def);
		else if (strcmp(def->defname, "table_name") == 0)
			table = defGetString(def);
	}
	qualified = quote_qualified_identifier(schema ? schema : get_namespace_name(get_rel_namespace(part)),
										   table ? table : get_rel_name(part));
	initStringInfo(&cols);
	initStringInfo(&names);
	initStringInfo(&types);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		AttrNumber	partatt;
		const char *name = NameStr(att->attname);

		if (att->attisdropped)
			continue;
		/* the partition's column of that name, by its name on the shard */
		partatt = get_attnum(part, name);
		name = wc_remote_column_name(part, partatt);
		appendStringInfo(&cols, "%s%s", n ? ", " : "", quote_identifier(name));
		appendStringInfo(&names, "%s(%d, %s)", n ? ", " : "", n, quote_literal_cstr(name));
		appendStringInfo(&types, "%s%u", n ? "," : "", att->atttypid);
		n++;
	}
	sh->copy_text = psprintf("COPY %s (%s) FROM STDIN", qualified, cols.data);
	sh->copy_binary = psprintf("COPY %s (%s) FROM STDIN (FORMAT binary)", qualified, cols.data);
	sh->same_types = psprintf("SELECT pg_catalog.array_agg(a.atttypid ORDER BY c.n) = '{%s}'::pg_catalog.oid[]"
							  " FROM (VALUES %s) c(n, name) LEFT JOIN pg_catalog.pg_attribute a"
							  " ON a.attrelid = %s::pg_catalog.regclass AND a.attname = c.name AND NOT a.attisdropped",
							  types.data, names.data, quote_literal_cstr(qualified));
}

static Stream *
stream_open(Relation rel)
{
	Stream	   *s = palloc0(sizeof(Stream));
	TupleDesc	desc = RelationGetDescr(rel);
	PartitionKey key = RelationGetPartitionKey(rel);
	bool		same_encoding = (pg_get_client_encoding() == GetDatabaseEncoding());
	int			i;

	s->rel = rel;
	s->cxt = CurrentMemoryContext;
	s->desc = RelationGetPartitionDesc(rel, true);
	s->shards = palloc0(sizeof(Shard) * s->desc->nparts);
	for (i = 0; i < s->desc->nparts; i++)
	{
		s->shards[i].relid = s->desc->oids[i];
		remote_sql(rel, &s->shards[i]);
		initStringInfo(&s->shards[i].buf);
		s->shards[i].send_at = FLUSH_AT;
	}
	s->out = palloc0(sizeof(FmgrInfo) * desc->natts);
	s->send = palloc0(sizeof(FmgrInfo) * desc->natts);
	s->as_text = palloc0(sizeof(bool) * desc->natts);
	s->binary_ok = true;
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			outfunc;
		Oid			sendfunc;
		Oid			ioparam;
		bool		isvarlena;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		char		typdelim;

		if (att->attisdropped)
			continue;
		getTypeOutputInfo(att->atttypid, &outfunc, &isvarlena);
		fmgr_info(outfunc, &s->out[i]);
		s->as_text[i] = (outfunc == F_TEXTOUT);
		get_type_io_data(att->atttypid, IOFunc_send, &typlen, &typbyval, &typalign,
						 &typdelim, &ioparam, &sendfunc);
		/*
		 * Binary only for built-in types (their format is PostgreSQL's own),
		 * and, as send functions write text in the client's encoding while
		 * postgres_fdw's connection uses the database's, only for text
		 * (sent as is here) and fixed-size types other than name when the
		 * two differ.
		 */
		if (!OidIsValid(sendfunc) || att->atttypid >= FirstNormalObjectId ||
			(!same_encoding && !s->as_text[i] && (att->attlen < 0 || att->atttypid == NAMEOID)))
			s->binary_ok = false;
		else
			fmgr_info(sendfunc, &s->send[i]);
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

/* A row as a line of COPY text. */
static void
append_text_row(Stream *s, StringInfo buf, TupleTableSlot *slot)
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

/* A row as a tuple of binary COPY: field count, then length and bytes. */
static void
append_binary_row(Stream *s, StringInfo buf, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			n = 0;
	int			at = buf->len;
	int			i;

	pq_sendint16(buf, 0);		/* the count, set below */
	for (i = 0; i < desc->natts; i++)
	{
		if (TupleDescAttr(desc, i)->attisdropped)
			continue;
		n++;
		if (slot->tts_isnull[i])
			pq_sendint32(buf, -1);
		else if (s->as_text[i])
		{
			text	   *t = DatumGetTextPP(slot->tts_values[i]);

			pq_sendint32(buf, VARSIZE_ANY_EXHDR(t));
			appendBinaryStringInfo(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
		}
		else
		{
			bytea	   *v = SendFunctionCall(&s->send[i], slot->tts_values[i]);

			pq_sendint32(buf, VARSIZE(v) - VARHDRSZ);
			appendBinaryStringInfo(buf, VARDATA(v), VARSIZE(v) - VARHDRSZ);
		}
	}
	buf->data[at] = (char) (n >> 8);
	buf->data[at + 1] = (char) n;
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

/*
 * Start the shard's COPY, at its first row: in binary format where the
 * shard's columns have the coordinator's types, else in text.
 */
static void
shard_begin(Stream *s, Shard *sh)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);	/* not the row's */

	sh->binary = s->binary_ok && wc_remote_query_true(sh->relid, sh->same_types);
	sh->remote = wc_remote_copy_begin(sh->relid, sh->binary ? sh->copy_binary : sh->copy_text);
	MemoryContextSwitchTo(old);
	if (sh->binary)
	{
		/* signature, flags, header extension length */
		appendBinaryStringInfo(&sh->buf, "PGCOPY\n\377\r\n\0", 11);
		pq_sendint32(&sh->buf, 0);
		pq_sendint32(&sh->buf, 0);
	}
}

/* Hand a shard's buffer to its connection when it is worth it (or final). */
static void
send_rows(Shard *sh, bool final)
{
	if (sh->remote == NULL)
		return;
	if (final && sh->binary)
		pq_sendint16(&sh->buf, -1);		/* the trailer */
	if (sh->buf.len == 0 || (!final && sh->buf.len < sh->send_at))
		return;
	/* a busy socket: keep buffering (try again a piece later) up to the cap */
	if (!final && sh->buf.len < BUFFER_MAX && !wc_remote_copy_ready(sh->remote))
	{
		sh->send_at = sh->buf.len + FLUSH_AT;
		return;
	}
	wc_remote_copy_put(sh->remote, sh->buf.data, sh->buf.len);
	resetStringInfo(&sh->buf);
	sh->send_at = FLUSH_AT;
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
			Shard	   *sh;
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
			sh = &s->shards[idx];
			if (sh->remote == NULL)
				shard_begin(s, sh);
			if (sh->binary)
				append_binary_row(s, &sh->buf, slot);
			else
				append_text_row(s, &sh->buf, slot);
			MemoryContextSwitchTo(old);
			send_rows(sh, false);
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
	const char *why = stream_refused(rel);

	if (why)
	{
		ereport(DEBUG1,
				(errmsg_internal("COPY into \"%s\" is not streamed to the shards: %s",
								 RelationGetRelationName(rel), why)));
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

/*
 * The name of a foreign table's column on its server: its column_name
 * option, as postgres_fdw deparses it, else its own name.
 */
const char *
wc_remote_column_name(Oid foreigntable, AttrNumber attnum)
{
	ListCell   *lc;

	foreach(lc, GetForeignColumnOptions(foreigntable, attnum))
		if (strcmp(lfirst_node(DefElem, lc)->defname, "column_name") == 0)
			return defGetString(lfirst_node(DefElem, lc));
	return get_attname(foreigntable, attnum, false);
}
