/*
 * modify.c — INSERT, COPY, UPDATE and DELETE.
 *
 * Every write is a new row version: single rows go to level 0, bulk writes
 * are sorted in memory and written as a run.  See src/README.md.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/table.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "common/hashfn.h"
#include "pgstat.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "access/access.h"
#include "maintenance/maintenance.h"
#include "storage/keyenc.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

/* ---------- keys ---------- */

/*
 * A version of the row in slot (or a tombstone), noted as written by this
 * command: reads of the table inside a query-table trigger may be asked to
 * see it as it was before (beforestmt.c).  A base with derived data locks
 * the key first, before the version takes its write time (baselocks.c).
 * Formed in the room alloc(arg, len) gives, palloc'd if alloc is NULL.
 */
static WcRowHeader *
form_row_in(Relation rel, TupleTableSlot *slot, const char *key, int keylen,
			int pklen, bool tombstone, CommandId cid, int64 write_ts,
			WcRowAllocator alloc, void *arg)
{
	if (pklen > 0)
		wc_base_lock_key(rel, key, keylen);
	wc_note_write(rel, cid);
	return wc_form_row_in(rel, slot, key, keylen, pklen, tombstone, cid, write_ts, alloc, arg);
}

static WcRowHeader *
form_row(Relation rel, TupleTableSlot *slot, const char *key, int keylen,
		 int pklen, bool tombstone, CommandId cid)
{
	return form_row_in(rel, slot, key, keylen, pklen, tombstone, cid, WC_WRITE_TS_NEXT, NULL, NULL);
}

/*
 * Write times for a batch of n rows that COPY has read: one range from the
 * clock, the rows 1 us apart in their order (the later of two versions of
 * a key in the batch wins, as before), instead of a clock read and a
 * compare-and-swap per row (1.5% of a COPY's time).  A base with derived
 * data takes each row's time after locking its key (baselocks.c), so its
 * rows take theirs one by one: WC_WRITE_TS_NEXT.
 */
static int64
batch_write_ts(Relation rel, int n)
{
	if (n <= 1 || wc_base_has_derived(rel))
		return WC_WRITE_TS_NEXT;
	return wc_meta_write_ts_n(rel, n);
}

/* The write time of row i of a batch whose first is ts. */
static inline int64
batch_row_ts(int64 ts, int i)
{
	return ts == WC_WRITE_TS_NEXT ? ts : ts + i;
}

static void
row_key(Relation rel, TupleTableSlot *slot, StringInfo key, int *pklen)
{
	WcTableInfo *info = wc_table_info(rel);

	resetStringInfo(key);
	if (WcTableIsKeyless(info))
	{
		wc_encode_rowid(wc_meta_alloc_rowid(rel), key);
		*pklen = 0;
		return;
	}
	slot_getallattrs(slot);
	wc_encode_key(rel, info, slot->tts_values, slot->tts_isnull, key, pklen);
}

/* ---------- single-row writes ---------- */

static void
write_version(Relation rel, WcRowHeader *row, ItemPointer tid)
{
	if (wc_l0_append(rel, row, tid))
		wc_flush(rel, false);
}

/* ---------- bulk writes ---------- */

typedef struct BulkState
{
	Oid			relid;
	RelFileNode node;
	SubTransactionId subid;
	MemoryContext cxt;
	WcRowHeader **rows;
	int64		n;
	int64		cap;
	char	   *arena;			/* rows, packed */
	Size		arena_size;		/* grows by doubling up to widecol.bulk_write_mem
								 * (COPY: that at once) */
	List	   *old_arenas;		/* smaller ones still holding buffered rows */
	Size		old_size;		/* their bytes */
	Size		used;
	StringInfoData key;			/* reused for every row's key */
	bool		statement;		/* rows of a multi-row INSERT, see below */
	struct BulkState *next;
} BulkState;

static BulkState *bulk_states = NULL;

/* fewer rows of one statement than this go to level 0, not a run */
#define WC_STATEMENT_RUN_MIN 256

/*
 * DELETEs whose tombstones are written blindly (executor/keydelete.c): the
 * statement chose its rows by key columns alone.  One entry per target
 * relation (a partitioned parent's DELETE has one per partition), dropped
 * when the statement ends; an entry an error left behind goes with the
 * transaction.
 */
typedef struct BlindDelete
{
	const void *owner;			/* the statement's QueryDesc */
	Oid			relid;
	CommandId	cid;
} BlindDelete;

static List *blind_deletes = NIL;	/* in TopTransactionContext */

/* Write the run a bulk write or a blind delete built (n versions). */
static void
finish_run(Relation rel, WcRunWriter *w, int64 n)
{
	WcRunSummary summary;

	wc_run_writer_finish(w, &summary);
	wc_meta_count_written(rel, false, summary.st.compressed_bytes);
	elog(DEBUG1, "widecol: wrote run %llu of \"%s\": %lld versions",
		 (unsigned long long) summary.run_id, RelationGetRelationName(rel),
		 (long long) n);
}

/*
 * Sorted rows lie all over the buffer: the writer stalled on each one's
 * first cache lines (perf: three quarters of wc_run_writer_add's time on
 * its first load of a row).  So the rows a few places ahead are asked
 * for while it writes this one.
 */
#define WC_WRITE_PREFETCH 8

static inline void
prefetch_row(const WcRowHeader *row)
{
#ifdef __GNUC__
	const char *p = (const char *) row;

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
	__builtin_prefetch(p + 128);
	__builtin_prefetch(p + 192);
#endif
}

/* Sort rows and write them as one run; tids[i] (if given) gets row i's TID. */
static void
write_sorted_run(Relation rel, WcRowHeader **rows, int64 n, ItemPointer *tids)
{
	WcRunWriter *w;

	if (n == 0)
		return;
	if (tids)
	{
		/* sort an index permutation so TIDs follow their rows */
		int64	   *perm = palloc(sizeof(int64) * n);

		wc_sort_rows(rows, n, perm);
		w = wc_run_writer_begin(rel, 1);
		for (int64 i = 0; i < n; i++)
			wc_run_writer_add(w, rows[perm[i]], tids[perm[i]]);
	}
	else
	{
		wc_sort_rows(rows, n, NULL);
		w = wc_run_writer_begin(rel, 1);
		for (int64 i = 0; i < n; i++)
		{
			if (i + WC_WRITE_PREFETCH < n)
				prefetch_row(rows[i + WC_WRITE_PREFETCH]);
			wc_run_writer_add(w, rows[i], NULL);
		}
	}
	finish_run(rel, w, n);
}

static BulkState *
bulk_state(Relation rel, bool create)
{
	BulkState  *s;

	for (s = bulk_states; s; s = s->next)
		if (s->relid == RelationGetRelid(rel) && RelFileNodeEquals(s->node, rel->rd_node))
			return s;
	if (!create)
		return NULL;
	s = MemoryContextAllocZero(TopTransactionContext, sizeof(BulkState));
	s->relid = RelationGetRelid(rel);
	s->node = rel->rd_node;
	s->subid = GetCurrentSubTransactionId();
	s->cxt = AllocSetContextCreate(TopTransactionContext, "widecol bulk write",
								   ALLOCSET_DEFAULT_SIZES);
	s->cap = 1024;
	s->rows = MemoryContextAlloc(s->cxt, sizeof(WcRowHeader *) * s->cap);
	/* untouched pages of a large allocation cost nothing until used */
	/*
	 * Small at first: most statements that query-table triggers run write a
	 * few rows, and mapping (and unmapping) bulk_write_mem for each cost
	 * more than the rest of a single-image INSERT.
	 */
	s->arena_size = WC_MAX_ROW_SIZE * 2;
	s->arena = wc_alloc_huge(s->cxt, s->arena_size);
	s->key.data = MemoryContextAlloc(s->cxt, WC_MAX_KEY_SIZE + 64);
	s->key.maxlen = WC_MAX_KEY_SIZE + 64;
	resetStringInfo(&s->key);
	s->next = bulk_states;
	bulk_states = s;
	return s;
}

/* Sort and write what is buffered; the arena is kept for the next rows. */
static void
bulk_write(Relation rel, BulkState *s)
{
	write_sorted_run(rel, s->rows, s->n, NULL);
	s->n = 0;
	s->used = 0;
	list_free_deep(s->old_arenas);
	s->old_arenas = NIL;
	s->old_size = 0;
}

/*
 * Room for `need` more bytes: a twice bigger arena while all of them stay
 * within widecol.bulk_write_mem (the rows in the old ones stay where they
 * are); past that, write what is buffered and go on in one arena of the
 * full size, reused run after run.  So a COPY holds at most bulk_write_mem
 * of rows (doubling without that check held twice as much: the old arenas
 * and a full-size one, 177 MB of a COPY backend at the default 64 MB).
 */
/* The full arena size: widecol.bulk_write_mem, at least two rows. */
static Size
bulk_arena_max(void)
{
	return Max((Size) wc_bulk_write_mem_kb * 1024, WC_MAX_ROW_SIZE * 2);
}

static void
bulk_make_room(Relation rel, BulkState *s, Size need)
{
	Size		max = bulk_arena_max();
	Size		next;

	if (s->used + need <= s->arena_size)
		return;
	next = Min(s->arena_size * 2, max);
	if (s->old_size + s->arena_size + next <= max)
	{
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		s->old_arenas = lappend(s->old_arenas, s->arena);
		s->old_size += s->arena_size;
		s->arena_size = next;
		s->arena = wc_alloc_huge(s->cxt, s->arena_size);
		s->used = 0;
		MemoryContextSwitchTo(old);
		return;
	}
	bulk_write(rel, s);
	if (s->arena_size < max)
	{
		pfree(s->arena);
		s->arena_size = max;
		s->arena = wc_alloc_huge(s->cxt, s->arena_size);
	}
}

/*
 * A COPY whose first batch is large writes many rows: its arena is the full
 * widecol.bulk_write_mem from the start, not doubled up to it (the doubling
 * touched twice the memory, fresh pages each time, before the first run
 * was written).  A small COPY (one short batch) keeps the small arena: the
 * first touch of a huge page zeroes 2 MB.
 */
#define WC_COPY_BATCH_MANY 64

static void
bulk_expect_many(BulkState *s, int nslots)
{
	if (nslots < WC_COPY_BATCH_MANY || s->n > 0 || s->old_arenas != NIL ||
		s->arena_size >= bulk_arena_max())
		return;
	pfree(s->arena);
	s->arena_size = bulk_arena_max();
	s->arena = wc_alloc_huge(s->cxt, s->arena_size);
	s->used = 0;
}

static void
bulk_forget(BulkState *s)
{
	BulkState **p;

	for (p = &bulk_states; *p; p = &(*p)->next)
		if (*p == s)
		{
			*p = s->next;
			break;
		}
	MemoryContextDelete(s->cxt);
	pfree(s);
}

/* The row at the end of the buffer (s->arena + s->used) is buffered. */
static void
bulk_keep(BulkState *s)
{
	WcRowHeader *row = (WcRowHeader *) (s->arena + s->used);

	if (s->n == s->cap)
	{
		s->cap *= 2;
		s->rows = repalloc_huge(s->rows, sizeof(WcRowHeader *) * s->cap);
	}
	s->rows[s->n++] = row;
	s->used += MAXALIGN(row->len);
}

/* A copy of row into the buffer. */
static void
bulk_append(Relation rel, BulkState *s, const WcRowHeader *row)
{
	bulk_make_room(rel, s, MAXALIGN(row->len));
	wc_row_copy((WcRowHeader *) (s->arena + s->used), row);
	bulk_keep(s);
}

typedef struct BulkRoom
{
	Relation	rel;
	BulkState  *s;
} BulkRoom;

/* WcRowAllocator: room at the end of the buffer (which may write a run) */
static void *
bulk_room(void *arg, Size len)
{
	BulkRoom   *r = (BulkRoom *) arg;

	bulk_make_room(r->rel, r->s, MAXALIGN(len));
	return r->s->arena + r->s->used;
}

/*
 * Rows are packed into one arena that is reused run after run: touching
 * fresh memory for every row (page faults) cost more than sorting.  Each
 * is formed there.
 */
static void
bulk_add(Relation rel, BulkState *s, TupleTableSlot *slot, CommandId cid, int64 write_ts)
{
	int			pklen;
	BulkRoom	room = {rel, s};

	row_key(rel, slot, &s->key, &pklen);
	(void) form_row_in(rel, slot, s->key.data, s->key.len, pklen, false, cid, write_ts,
					   bulk_room, &room);
	bulk_keep(s);
	wc_note_inserted_key(rel, s->key.data, s->key.len, pklen, cid);
	ItemPointerSetInvalid(&slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
}

/*
 * Multi-row INSERTs (INSERT ... SELECT, VALUES lists, the statements query
 * tables run) would write every row into level 0, one WAL record each, as
 * PostgreSQL 15 has no bulk insert for them.  So the second and later rows
 * of one command are buffered like COPY's and written as a sorted run when
 * the statement's executor finishes, before its AFTER statement triggers
 * run; fewer than WC_STATEMENT_RUN_MIN rows go to level 0 instead.  The
 * first row of a command goes to level 0 at once (single-row INSERTs stay
 * as they were) unless the planner expects the INSERT to write several.  Buffered rows get no TID (as COPY's), so tables with
 * AFTER ROW INSERT triggers, which fetch new rows by TID, are not buffered.
 */

static Oid	last_insert_rel = InvalidOid;
static CommandId last_insert_cid = InvalidCommandId;
static CommandId bulk_insert_cid = InvalidCommandId;
static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;

/*
 * An INSERT whose source the planner expects to return several rows is
 * buffered from its first row, so that it writes one run, not a level-0
 * row and a run.
 */
static void
wc_executor_start(QueryDesc *queryDesc, int eflags)
{
	Plan	   *top;

	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (queryDesc->planstate)
		wc_slot_mark_unused_columns(queryDesc->planstate);
	top = queryDesc->plannedstmt->planTree;
	if (queryDesc->operation == CMD_INSERT && top && IsA(top, ModifyTable) &&
		outerPlan(top) && outerPlan(top)->plan_rows > 1 && queryDesc->estate)
		bulk_insert_cid = queryDesc->estate->es_output_cid;
}

/*
 * Command cid inserts the rows of a statement that is not an INSERT (a
 * query table's trigger writes derived rows as its SELECT returns them,
 * api/qttrigger.c): they are buffered from the first, as an INSERT ...
 * SELECT's, and written when that statement's executor finishes.
 */
void
wc_insert_rows_of_statement(CommandId cid)
{
	bulk_insert_cid = cid;
}

/* The statement's buffer of rel, made now if need be; NULL under a COPY's. */
static BulkState *
statement_buffer(Relation rel)
{
	BulkState  *s = bulk_state(rel, false);

	if (s == NULL)
	{
		s = bulk_state(rel, true);
		s->statement = true;
	}
	return s->statement ? s : NULL;
}

/* Rows into level 0, one by one (too few of one statement for a run). */
static void
write_to_level0(Relation rel, WcRowHeader **rows, int64 n)
{
	if (wc_l0_append_many(rel, rows, n))
		wc_flush(rel, false);
}

static bool
buffer_statement_row(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	BulkState  *s;

	if (bulk_state(rel, false) == NULL)
	{
		if (rel->trigdesc && rel->trigdesc->trig_insert_after_row)
			return false;
		if (cid != bulk_insert_cid &&
			(last_insert_rel != RelationGetRelid(rel) || last_insert_cid != cid))
		{
			last_insert_rel = RelationGetRelid(rel);
			last_insert_cid = cid;
			return false;		/* the first row of this command */
		}
	}
	if ((s = statement_buffer(rel)) == NULL)
		return false;
	bulk_add(rel, s, slot, cid, WC_WRITE_TS_NEXT);
	return true;
}

/* Write the buffered rows of finished multi-row INSERTs. */
static void
finish_statement_buffers(void)
{
	BulkState  *s = bulk_states;

	while (s)
	{
		BulkState  *next = s->next;

		if (s->statement)
		{
			Relation	rel = table_open(s->relid, NoLock);

			if (s->n >= WC_STATEMENT_RUN_MIN)
				bulk_write(rel, s);
			else
				write_to_level0(rel, s->rows, s->n);
			table_close(rel, NoLock);
			bulk_forget(s);
		}
		s = next;
	}
	last_insert_rel = InvalidOid;
}

static void
wc_executor_finish(QueryDesc *queryDesc)
{
	finish_statement_buffers();
	if (prev_executor_finish)
		prev_executor_finish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

void
wc_finish_bulk_insert(Relation rel, int options)
{
	BulkState  *s = bulk_state(rel, false);

	if (s)
	{
		bulk_write(rel, s);
		bulk_forget(s);
	}
}

/*
 * Has the transaction ended (committed, aborted or prepared)?  Then what
 * the access layer kept in TopTransactionContext is gone: each module's
 * transaction callback forgets its pointers there.
 */
bool
wc_xact_ended(XactEvent event)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			return true;
		default:
			return false;
	}
}

static void
wc_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT)
	{
		finish_statement_buffers();
		if (bulk_states != NULL)
			elog(ERROR, "widecol: bulk write was not finished before commit");
	}
	else if (wc_xact_ended(event))
	{
		/* the memory went with TopTransactionContext */
		bulk_states = NULL;
		last_insert_rel = InvalidOid;
		bulk_insert_cid = InvalidCommandId;
		blind_deletes = NIL;
		wc_moved_keys_reset();
	}
}

static void
wc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		BulkState  *s = bulk_states;

		while (s)
		{
			BulkState  *next = s->next;

			if (s->subid == mySubid)
				bulk_forget(s);
			s = next;
		}
	}
}

void
wc_modify_init(void)
{
	RegisterXactCallback(wc_xact_callback, NULL);
	RegisterSubXactCallback(wc_subxact_callback, NULL);
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = wc_executor_start;
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = wc_executor_finish;
}

/* ---------- table AM callbacks ---------- */

void
wc_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
				struct BulkInsertStateData *bistate)
{
	StringInfoData key;
	int			pklen;
	WcRowHeader *row;

	if (bistate != NULL)
	{
		/* CREATE TABLE AS, table rewrites: a bulk write ended by finish_bulk_insert */
		bulk_add(rel, bulk_state(rel, true), slot, cid, WC_WRITE_TS_NEXT);
		pgstat_count_heap_insert(rel, 1);
		return;
	}
	if (buffer_statement_row(rel, slot, cid))
	{
		pgstat_count_heap_insert(rel, 1);
		return;
	}
	initStringInfo(&key);
	row_key(rel, slot, &key, &pklen);
	row = form_row(rel, slot, key.data, key.len, pklen, false, cid);
	wc_note_inserted_key(rel, key.data, key.len, pklen, cid);
	write_version(rel, row, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	pgstat_count_heap_insert(rel, 1);
	pfree(row);
	pfree(key.data);
}

void
wc_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				CommandId cid, int options, struct BulkInsertStateData *bistate)
{
	int64		ts = batch_write_ts(rel, nslots);

	/* AFTER ROW triggers fetch new rows by TID: write the batch now */
	if (rel->trigdesc && rel->trigdesc->trig_insert_after_row)
	{
		WcRowHeader **rows = palloc(sizeof(WcRowHeader *) * nslots);
		ItemPointer *tids = palloc(sizeof(ItemPointer) * nslots);
		StringInfoData key;

		initStringInfo(&key);
		for (int i = 0; i < nslots; i++)
		{
			int			pklen;

			row_key(rel, slots[i], &key, &pklen);
			rows[i] = form_row_in(rel, slots[i], key.data, key.len, pklen, false, cid,
								  batch_row_ts(ts, i), NULL, NULL);
			wc_note_inserted_key(rel, key.data, key.len, pklen, cid);
			tids[i] = &slots[i]->tts_tid;
			slots[i]->tts_tableOid = RelationGetRelid(rel);
		}
		write_sorted_run(rel, rows, nslots, tids);
	}
	else
	{
		BulkState  *s = bulk_state(rel, true);

		bulk_expect_many(s, nslots);
		for (int i = 0; i < nslots; i++)
			bulk_add(rel, s, slots[i], cid, batch_row_ts(ts, i));
	}
	pgstat_count_heap_insert(rel, nslots);
}

/*
 * The version an UPDATE or DELETE names by TID (its key alone when
 * key_only: a tombstone needs no values); there must be one.
 */
static WcRowHeader *
version_to_change(Relation rel, ItemPointer tid, const char *what)
{
	WcRowHeader *old = wc_fetch_version_key(rel, tid);

	if (old == NULL)
		elog(ERROR, "widecol: version to %s at (%u,%u) of \"%s\" not found", what,
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			 RelationGetRelationName(rel));
	return old;
}

/* Write a tombstone for old's key (a DELETE, or an UPDATE that moved the row). */
static void
write_tombstone(Relation rel, WcRowHeader *old, CommandId cid)
{
	WcRowHeader *tomb = form_row(rel, NULL, WcRowKey(old), old->keylen,
								 old->pklen, true, cid);
	ItemPointerData ttid;

	write_version(rel, tomb, &ttid);
}


void
wc_blind_delete_push(const void *owner, Oid relid, CommandId cid)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	BlindDelete *b = palloc(sizeof(BlindDelete));

	b->owner = owner;
	b->relid = relid;
	b->cid = cid;
	blind_deletes = lappend(blind_deletes, b);
	MemoryContextSwitchTo(old);
}

void
wc_blind_delete_pop(const void *owner)
{
	ListCell   *lc;

	foreach(lc, blind_deletes)
	{
		BlindDelete *b = lfirst(lc);

		if (b->owner == owner)
		{
			blind_deletes = foreach_delete_current(blind_deletes, lc);
			pfree(b);
		}
	}
}

static bool
blind_delete(Relation rel, CommandId cid)
{
	ListCell   *lc;

	foreach(lc, blind_deletes)
	{
		BlindDelete *b = lfirst(lc);

		if (b->relid == RelationGetRelid(rel) && b->cid == cid)
			return true;
	}
	return false;
}

/*
 * A blind delete's tombstone for a key joins the statement's buffered rows,
 * written as one run (or, if few, into level 0) when its executor finishes.
 */
void
wc_buffer_tombstone(Relation rel, const char *key, int keylen, int pklen, CommandId cid)
{
	WcRowHeader *tomb = form_row(rel, NULL, key, keylen, pklen, true, cid);
	BulkState  *s = statement_buffer(rel);

	if (s)
		bulk_append(rel, s, tomb);
	else
		write_to_level0(rel, &tomb, 1);
	pfree(tomb);
}

/*
 * Tombstones that arrive in key order (a merge's keys: WidecolKeyDelete)
 * go straight into a run writer: no buffer, no sort.  The first
 * WC_STATEMENT_RUN_MIN wait: if no more come they go to level 0 instead,
 * as a short statement's rows do.  The caller ends the run before the
 * statement's executor finishes.
 */
struct WcTombstoneRun
{
	Relation	rel;
	CommandId	cid;
	WcRunWriter *writer;
	WcRowHeader *first[WC_STATEMENT_RUN_MIN];	/* until the writer starts */
	int64		n;
};

WcTombstoneRun *
wc_tombstone_run_begin(Relation rel, CommandId cid)
{
	WcTombstoneRun *t = palloc0(sizeof(WcTombstoneRun));

	t->rel = rel;
	t->cid = cid;
	return t;
}

void
wc_tombstone_run_add(WcTombstoneRun *t, const char *key, int keylen, int pklen)
{
	WcRowHeader *tomb = form_row(t->rel, NULL, key, keylen, pklen, true, t->cid);

	if (t->writer == NULL && t->n < WC_STATEMENT_RUN_MIN)
	{
		t->first[t->n++] = tomb;
		return;
	}
	if (t->writer == NULL)
	{
		t->writer = wc_run_writer_begin(t->rel, 1);
		for (int i = 0; i < WC_STATEMENT_RUN_MIN; i++)
		{
			wc_run_writer_add(t->writer, t->first[i], NULL);
			pfree(t->first[i]);
		}
	}
	wc_run_writer_add(t->writer, tomb, NULL);
	t->n++;
	pfree(tomb);
}

void
wc_tombstone_run_end(WcTombstoneRun *t)
{
	if (t->writer == NULL)
	{
		write_to_level0(t->rel, t->first, t->n);
		for (int64 i = 0; i < t->n; i++)
			pfree(t->first[i]);
		return;
	}
	finish_run(t->rel, t->writer, t->n);
	t->writer = NULL;
}

/* n rows deleted from rel without tuple_delete, for its statistics (one call, not n) */
void
wc_count_deletes(Relation rel, int64 n)
{
	if (n <= 0)
		return;
	pgstat_count_heap_delete(rel);
	if (rel->pgstat_info && rel->pgstat_info->trans)
		rel->pgstat_info->trans->tuples_deleted += n - 1;
}

TM_Result
wc_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
				Snapshot snapshot, Snapshot crosscheck, bool wait,
				TM_FailureData *tmfd, bool changingPart)
{
	WcRowHeader *old = version_to_change(rel, tid, "delete");
	bool		moved;
	LOCKTAG		tag;
	TM_Result	result;

	if (blind_delete(rel, cid))
	{
		wc_buffer_tombstone(rel, WcRowKey(old), old->keylen, old->pklen, cid);
		pgstat_count_heap_delete(rel);
		return TM_Ok;
	}
	moved = wc_key_moved_here(rel, WcRowKey(old), old->keylen, cid);
	result = wc_check_write_conflict(rel, old, tid, cid, wait, tmfd, moved, &tag);
	if (result != TM_Ok)
		return result;
	if (!moved)
		write_tombstone(rel, old, cid);
	wc_key_unlock(&tag);
	pgstat_count_heap_delete(rel);
	return TM_Ok;
}

TM_Result
wc_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
				bool *update_indexes)
{
	WcRowHeader *old = version_to_change(rel, otid, "update");
	WcTableInfo *info = wc_table_info(rel);
	StringInfoData key;
	int			pklen;
	WcRowHeader *row;
	bool		moved;
	LOCKTAG		tag;
	TM_Result	result;

	*lockmode = LockTupleExclusive;
	*update_indexes = false;
	initStringInfo(&key);
	if (WcTableIsKeyless(info))
	{
		appendBinaryStringInfo(&key, WcRowKey(old), old->keylen);
		pklen = 0;
	}
	else
	{
		slot_getallattrs(slot);
		wc_encode_key(rel, info, slot->tts_values, slot->tts_isnull, &key, &pklen);
	}

	moved = wc_key_moved_here(rel, WcRowKey(old), old->keylen, cid);
	result = wc_check_write_conflict(rel, old, otid, cid, wait, tmfd, moved, &tag);
	if (result != TM_Ok)
		return result;
	if (wc_compare_keys(key.data, key.len, WcRowKey(old), old->keylen) != 0)
	{
		/* the key changed: the row moves (tombstone + new version) */
		if (!moved)
			write_tombstone(rel, old, cid);
		wc_remember_moved(rel, key.data, key.len, cid);
	}
	row = form_row(rel, slot, key.data, key.len, pklen, false, cid);
	/* UPDATE read the (summed) row: its counters are values, not increments */
	row->flags &= ~WC_ROW_DELTA;
	write_version(rel, row, &slot->tts_tid);
	wc_key_unlock(&tag);
	slot->tts_tableOid = RelationGetRelid(rel);
	pgstat_count_heap_update(rel, false);
	return TM_Ok;
}
