/*
 * bgworker.c — the widecol launcher and its per-database workers.
 *
 * Why a file of its own: process management (signals, latches, slots,
 * scheduling, error containment) is a separate concern from what is done to
 * a table (maintain.c).  The shape is autovacuum's: a launcher, registered
 * from _PG_init, connected to no database, wakes up on its latch, reads
 * pg_database every widecol.naptime and starts one dynamic worker per
 * database that is due, at most widecol.max_workers at a time.  A worker
 * checks that the extension exists in its database, lists the widecol
 * tables and runs one maintenance pass over each (wc_maintain), each in its
 * own transaction inside PG_TRY: an error in one table is logged as a
 * WARNING naming it and the worker goes on with the next.  Then it exits;
 * the launcher starts a new one after naptime.  Short-lived workers pick up
 * configuration, new tables and dropped databases without extra machinery,
 * and never keep a database connected for long (CREATE DATABASE from a
 * template and DROP DATABASE wait for other sessions; template databases
 * are skipped altogether).
 *
 * SIGTERM is handled by die(), so a worker leaves at its next
 * CHECK_FOR_INTERRUPTS (every row a compaction merges, every throttle
 * slice) and the transaction in progress is rolled back.
 */
#include "postgres.h"

#include <sys/resource.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/damage.h"
#include "storage/reclaim.h"
#include "maintenance/maintenance.h"
#include "storage/page.h"
#include "storage/tableinfo.h"

PGDLLEXPORT void wc_launcher_main(Datum main_arg);
PGDLLEXPORT void wc_worker_main(Datum main_arg);

/* ---------- registration ---------- */

static void
fill_worker(BackgroundWorker *bgw, const char *function, const char *name)
{
	memset(bgw, 0, sizeof(BackgroundWorker));
	bgw->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* no maintenance on a standby: it cannot write */
	bgw->bgw_start_time = BgWorkerStart_RecoveryFinished;
	snprintf(bgw->bgw_library_name, BGW_MAXLEN, "widecol");
	snprintf(bgw->bgw_function_name, BGW_MAXLEN, "%s", function);
	snprintf(bgw->bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(bgw->bgw_type, BGW_MAXLEN, "%s", name);
}

/* From _PG_init (shared_preload_libraries only). */
void
wc_register_launcher(void)
{
	BackgroundWorker bgw;

	fill_worker(&bgw, "wc_launcher_main", "widecol launcher");
	bgw.bgw_restart_time = 10;
	RegisterBackgroundWorker(&bgw);
}

/* ---------- launcher ---------- */

typedef struct DbEntry
{
	Oid			dboid;
	TimestampTz next_run;
	BackgroundWorkerHandle *handle; /* running worker, or NULL */
	bool		seen;
} DbEntry;

static DbEntry *dbs;
static int	ndbs;
static int	dbcap;

/* Bring the list of databases up to date: connectable, not templates. */
static void
refresh_databases(TimestampTz now)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	int			kept = 0;

	for (int i = 0; i < ndbs; i++)
		dbs[i].seen = false;
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);
		int			i;

		if (!db->datallowconn || db->datistemplate ||
			db->datconnlimit == DATCONNLIMIT_INVALID_DB)
			continue;
		for (i = 0; i < ndbs; i++)
			if (dbs[i].dboid == db->oid)
				break;
		if (i == ndbs)
		{
			if (ndbs == dbcap)
			{
				dbcap = Max(dbcap * 2, 16);
				dbs = dbs ? repalloc(dbs, sizeof(DbEntry) * dbcap) :
					MemoryContextAlloc(TopMemoryContext, sizeof(DbEntry) * dbcap);
			}
			dbs[ndbs].dboid = db->oid;
			dbs[ndbs].next_run = now;
			dbs[ndbs].handle = NULL;
			ndbs++;
		}
		dbs[i].seen = true;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();

	/* forget dropped databases (once their worker, if any, is gone) */
	for (int i = 0; i < ndbs; i++)
		if (dbs[i].seen || dbs[i].handle != NULL)
			dbs[kept++] = dbs[i];
	ndbs = kept;
}

static bool
start_worker(DbEntry *db)
{
	BackgroundWorker bgw;

	fill_worker(&bgw, "wc_worker_main", "widecol worker");
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	bgw.bgw_main_arg = ObjectIdGetDatum(db->dboid);
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &db->handle))
	{
		db->handle = NULL;
		return false;
	}
	return true;
}

/* Forget the workers that have exited; returns how many still run. */
static int
reap_workers(void)
{
	int			running = 0;

	for (int i = 0; i < ndbs; i++)
	{
		pid_t		pid;

		if (dbs[i].handle == NULL)
			continue;
		switch (GetBackgroundWorkerPid(dbs[i].handle, &pid))
		{
			case BGWH_STOPPED:
				pfree(dbs[i].handle);
				dbs[i].handle = NULL;
				break;
			case BGWH_POSTMASTER_DIED:
				proc_exit(1);
				break;
			default:
				running++;
		}
	}
	return running;
}

/*
 * Start the workers of the databases that are due, the longest-waiting
 * first.  Returns false when some must wait for a slot.
 */
static bool
start_due_workers(TimestampTz now, int running, bool *warned_no_slot)
{
	for (;;)
	{
		DbEntry    *due = NULL;

		for (int i = 0; i < ndbs; i++)
			if (dbs[i].handle == NULL && dbs[i].next_run <= now &&
				(due == NULL || dbs[i].next_run < due->next_run))
				due = &dbs[i];
		if (due == NULL)
			return true;
		if (running >= wc_max_workers)
			return false;
		if (!start_worker(due))
		{
			if (!*warned_no_slot)
				ereport(LOG,
						(errmsg("widecol launcher: no background worker slot free for database %u",
								due->dboid),
						 errhint("Consider increasing max_worker_processes.")));
			*warned_no_slot = true;
			return false;
		}
		*warned_no_slot = false;
		due->next_run = TimestampTzPlusMilliseconds(now, wc_naptime_s * 1000L);
		running++;
	}
}

void
wc_launcher_main(Datum main_arg)
{
	TimestampTz next_refresh;
	bool		warned_no_slot = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	/* no database: only shared catalogs (pg_database) are read */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_activity(STATE_IDLE, NULL);

	/* the first round comes one naptime after startup, as autovacuum's */
	next_refresh = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wc_naptime_s * 1000L);
	for (;;)
	{
		TimestampTz now;
		int			running;
		long		timeout_ms;
		TimestampTz wake;
		bool		waiting;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			/* a shorter naptime takes effect now, not after the old one */
			next_refresh = Min(next_refresh,
							   TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														   wc_naptime_s * 1000L));
		}

		running = reap_workers();

		now = GetCurrentTimestamp();
		if (now >= next_refresh)
		{
			refresh_databases(now);
			next_refresh = TimestampTzPlusMilliseconds(now, wc_naptime_s * 1000L);
		}

		waiting = !start_due_workers(now, running, &warned_no_slot);

		/*
		 * Sleep until the next database is due; a worker's exit sets the
		 * latch.  Databases due but waiting for a slot are looked at again
		 * within a second (or at the next exit).
		 */
		wake = next_refresh;
		for (int i = 0; i < ndbs; i++)
			if (dbs[i].handle == NULL && dbs[i].next_run > now && dbs[i].next_run < wake)
				wake = dbs[i].next_run;
		timeout_ms = Max(10, Min((wake - now) / 1000 + 1, wc_naptime_s * 1000L));
		if (waiting)
			timeout_ms = Min(timeout_ms, 1000);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* ---------- worker ---------- */

static MemoryContext worker_cxt;

/* The widecol tables of this database; *installed: is the extension? */
static List *
list_tables(bool *installed)
{
	List	   *result = NIL;
	Oid			amoid;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	amoid = wc_am_oid();
	*installed = OidIsValid(get_extension_oid("widecol", true)) && OidIsValid(amoid);
	if (*installed)
	{
		Relation	rel = table_open(RelationRelationId, AccessShareLock);
		TableScanDesc scan = table_beginscan_catalog(rel, 0, NULL);
		HeapTuple	tup;

		while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
		{
			Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

			if (form->relam == amoid &&
				(form->relkind == RELKIND_RELATION || form->relkind == RELKIND_MATVIEW) &&
				form->relpersistence == RELPERSISTENCE_PERMANENT)
			{
				MemoryContext old = MemoryContextSwitchTo(worker_cxt);

				result = lappend_oid(result, form->oid);
				MemoryContextSwitchTo(old);
			}
		}
		table_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	/* oldest first: a deterministic order from round to round */
	list_sort(result, list_oid_cmp);
	return result;
}

/*
 * In a PG_CATCH block of the worker: take a copy of the error (in the
 * worker's context) and abort the transaction.  Interrupts stay held until
 * the caller has reported it (RESUME_INTERRUPTS).
 */
static ErrorData *
abort_after_error(void)
{
	ErrorData  *edata;

	HOLD_INTERRUPTS();
	MemoryContextSwitchTo(worker_cxt);
	edata = CopyErrorData();
	FlushErrorState();
	AbortCurrentTransaction();
	return edata;
}

/*
 * Run a step on a table in a transaction of its own, after its failed
 * transaction was aborted (interrupts held); the step's own failure is a
 * WARNING.  `conditional`: skip the table if the lock is not free at once.
 */
static void
in_own_transaction(Oid relid, LOCKMODE lockmode, bool conditional,
				   void (*step) (Relation rel, const void *arg), const void *arg,
				   const char *failure)
{
	StartTransactionCommand();
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		if (!conditional || ConditionalLockRelationOid(relid, lockmode))
		{
			Relation	rel = try_relation_open(relid, conditional ? NoLock : lockmode);

			if (rel)
			{
				step(rel, arg);
				relation_close(rel, conditional ? NoLock : lockmode);
			}
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata = abort_after_error();

		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("widecol worker: %s of table with OID %u failed: %s",
						failure, relid, edata->message)));
		FreeErrorData(edata);
		RESUME_INTERRUPTS();	/* abort_after_error's */
	}
	PG_END_TRY();
}

static void
damage_step(Relation rel, const void *arg)
{
	wc_damage_after_error(rel, (const WcDamage *) arg);
}

static void
reclaim_step(Relation rel, const void *arg)
{
	wc_reclaim_aborted_runs(rel);
}

/*
 * Maintenance of a table failed on a page that failed its checks: record
 * the damage, so that the next rounds skip the table with a WARNING
 * instead of failing on it again.
 */
static void
record_damage(Oid relid, const WcDamage *d)
{
	in_own_transaction(relid, AccessShareLock, false, damage_step, d,
					   psprintf("recording the damage found (%s)", d->problem));
}

/*
 * After a failed pass: give back the pages the failed writes took, now
 * rather than at the next (backed-off) pass.
 */
static void
reclaim_after_failure(Oid relid)
{
	in_own_transaction(relid, ShareUpdateExclusiveLock, true, reclaim_step, NULL,
					   "giving back the pages of failed writes");
}

/* One table in its own transaction; an error is logged and contained. */
static void
maintain_one(Oid relid)
{
	char	   *volatile relname = NULL;

	StartTransactionCommand();
	PG_TRY();
	{
		Relation	rel;
		bool		busy = false;

		PushActiveSnapshot(GetTransactionSnapshot());
		/* never wait: a table being maintained, altered or dropped is skipped */
		if (ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
		{
			if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			{
				TimestampTz until;
				int			failures;

				rel = relation_open(relid, NoLock);
				relname = MemoryContextStrdup(worker_cxt,
											  quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
																		 RelationGetRelationName(rel)));

				if (wc_backoff_active(relid, &until, &failures))
				{
					wc_report_activity("widecol: backing off %s until %s after %d failed passes",
									   relname, timestamptz_to_str(until), failures);
					elog(DEBUG1, "widecol worker: skipping %s until %s after %d failed passes",
						 relname, timestamptz_to_str(until), failures);
				}
				else if (wc_table_info(rel)->autocompact && !wc_damage_skip(rel))
				{
					wc_report_activity("widecol: maintaining %s", relname);
					wc_maintain(rel, WC_MAINTAIN_STRATEGY, true, &busy);
				}
				relation_close(rel, NoLock);
			}
		}
		else
			elog(DEBUG1, "widecol worker: table %u is busy, skipped", relid);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata = abort_after_error();
		WcCorruption found;

		if (edata->sqlerrcode == ERRCODE_DATA_CORRUPTED)
		{
			/*
			 * widecol's own checks note what failed; PostgreSQL's (a data
			 * checksum, a short read) name the block in the message only
			 */
			WcDamage	d = {"page", 0, InvalidBlockNumber, edata->message, 0};

			if (wc_take_corruption(relid, &found))
			{
				d.segment = found.segment;
				d.id = found.id;
				d.block = found.block;
			}
			record_damage(relid, &d);
		}
		else
		{
			int			failures;
			int			wait_s = wc_backoff_failed(relid, &failures);

			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("widecol worker: maintenance of table %s failed: %s",
							relname ? relname : psprintf("with OID %u", relid), edata->message),
					 errdetail("%s%sFailure %d in a row; the workers try this table again in %d s.",
							   edata->detail ? edata->detail : "", edata->detail ? "\n" : "",
							   failures, wait_s),
					 errhint("Each failure in a row doubles the wait, up to an hour; widecol.compact('%s') tries at once and ends the back-off when it succeeds.",
							 relname ? relname : psprintf("%u", relid))));
			reclaim_after_failure(relid);
		}
		FreeErrorData(edata);
		RESUME_INTERRUPTS();
	}
	PG_END_TRY();
}

/* Old rows of widecol.compaction_history go; an error is only logged. */
static void
prune_history(void)
{
	StartTransactionCommand();
	PG_TRY();
	{
		int64		n;

		PushActiveSnapshot(GetTransactionSnapshot());
		wc_report_activity("widecol: pruning widecol.compaction_history");
		n = wc_history_prune();
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (n > 0)
			elog(DEBUG1, "widecol worker: deleted %lld old rows of widecol.compaction_history",
				 (long long) n);
	}
	PG_CATCH();
	{
		ErrorData  *edata = abort_after_error();

		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("widecol worker: pruning widecol.compaction_history failed: %s",
						edata->message)));
		FreeErrorData(edata);
		RESUME_INTERRUPTS();
	}
	PG_END_TRY();
}

/*
 * Compaction yields the CPU to queries (widecol.worker_nice): a worker
 * lowers its own priority, as RocksDB's low-priority compaction pool and
 * Cassandra's compaction threads do.  A worker waits for nothing a query
 * holds, and a query that waits for a lock the worker holds sleeps, which
 * gives the worker the CPU; so the only cost is compaction time on a busy
 * machine.  Never raised: an unprivileged process cannot, and a postmaster
 * started under nice(1) meant it.
 */
static void
lower_cpu_priority(void)
{
	int			current;

	if (wc_worker_nice <= 0)
		return;
	errno = 0;
	current = getpriority(PRIO_PROCESS, 0);
	if (errno != 0 || current >= wc_worker_nice)
		return;
	if (setpriority(PRIO_PROCESS, 0, wc_worker_nice) != 0)
		elog(LOG, "widecol worker: could not set nice %d: %m", wc_worker_nice);
	else
		elog(DEBUG1, "widecol worker: nice %d (was %d)", wc_worker_nice, current);
}

void
wc_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	List	   *tables;
	ListCell   *lc;
	bool		installed;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	wc_am_worker = true;
	lower_cpu_priority();
	worker_cxt = AllocSetContextCreate(TopMemoryContext, "widecol worker",
									   ALLOCSET_DEFAULT_SIZES);
	pgstat_report_appname("widecol worker");
	wc_report_activity("widecol: looking for widecol tables");

	tables = list_tables(&installed);
	if (!installed)
		proc_exit(0);
	foreach(lc, tables)
	{
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		maintain_one(lfirst_oid(lc));
	}
	CHECK_FOR_INTERRUPTS();
	prune_history();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}
