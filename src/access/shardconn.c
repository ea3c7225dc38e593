/*
 * shardconn.c — a remote COPY FROM STDIN on a shard, over postgres_fdw's own
 * connection to it.
 *
 * postgres_fdw keeps one connection per (server, user mapping) and runs a
 * remote transaction on it (REPEATABLE READ, a savepoint per subtransaction
 * level) that commits or aborts with the coordinator's transaction.  Using
 * its connection (GetConnection, exported by postgres_fdw.so, whose header is
 * not installed) keeps the rows of a COPY inside that transaction: a COPY
 * that fails, or a transaction that rolls back, leaves nothing on any shard.
 *
 * The data is sent in non-blocking mode so that a shard that reads slowly
 * does not stall the others (the caller buffers its rows meanwhile) and so
 * that waits are interruptible.  A remote error is raised with the shard's
 * SQLSTATE, message, detail and hint.  After an error, postgres_fdw's
 * (sub)transaction abort callback cancels what runs on the connection and
 * rolls the remote (sub)transaction back; wc_remote_copy_abandon only ends
 * the COPY (CopyFail) so that this is quick.
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "access/access.h"

/* postgres_fdw.h (PostgreSQL 15), not installed: the parts used here */
typedef struct PgFdwConnState
{
	void	   *pendingAreq;	/* an async foreign scan's pending request */
} PgFdwConnState;
typedef PGconn *(*GetConnection_fn) (UserMapping *user, bool will_prep_stmt,
									 PgFdwConnState **state);

typedef enum
{
	RC_COPYING,					/* CopyData may be sent */
	RC_ENDED,					/* CopyDone sent, result not read yet */
	RC_DONE						/* result read (or abandoned) */
} RemoteCopyState;

struct WcRemoteCopy
{
	PGconn	   *conn;
	const char *server;
	RemoteCopyState state;
	bool		unsent;			/* libpq holds data the socket did not take yet */
};

static GetConnection_fn get_connection = NULL;

/*
 * The transaction's remote COPYs not finished yet.  An ERROR ends them in
 * the caller's PG_CATCH; a FATAL (pg_terminate_backend, a fast shutdown)
 * never gets there, and postgres_fdw's abort cleanup would then wait
 * forever on a connection still in COPY_IN (libpq returns a COPY_IN result
 * for every PQgetResult).  So our transaction callbacks, registered after
 * postgres_fdw's and therefore called before them, end whatever is left.
 */
static List *open_copies = NIL;	/* in TopTransactionContext */

static void abandon(WcRemoteCopy *rc);

static void
end_open_copies(void)
{
	while (open_copies != NIL)
		abandon((WcRemoteCopy *) linitial(open_copies));	/* untracks it */
}

static void
copies_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		end_open_copies();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		open_copies = NIL;		/* the list's memory goes with the transaction */
}

static void
copies_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		end_open_copies();
}

static void
track(WcRemoteCopy *rc)
{
	static bool registered = false;
	MemoryContext old;

	if (!registered)
	{
		/* after fdw_connection: postgres_fdw has registered its callbacks */
		RegisterXactCallback(copies_xact_callback, NULL);
		RegisterSubXactCallback(copies_subxact_callback, NULL);
		registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	open_copies = lappend(open_copies, rc);
	MemoryContextSwitchTo(old);
}

static void
untrack(WcRemoteCopy *rc)
{
	open_copies = list_delete_ptr(open_copies, rc);
}

static PGconn *
fdw_connection(Oid foreign_relid, const char **server)
{
	ForeignTable *ft = GetForeignTable(foreign_relid);
	ForeignServer *fs = GetForeignServer(ft->serverid);
	UserMapping *um = GetUserMapping(GetUserId(), ft->serverid);
	PgFdwConnState *state = NULL;
	PGconn	   *conn;

	if (get_connection == NULL)
		get_connection = (GetConnection_fn)
			load_external_function("$libdir/postgres_fdw", "GetConnection", true, NULL);
	conn = get_connection(um, false, &state);
	/* only possible when COPY runs inside a query scanning the same shard */
	if (state != NULL && state->pendingAreq != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot COPY to server \"%s\" while an asynchronous scan of it is in progress",
						fs->servername),
				 errhint("Set widecol.batch_copy = off for this COPY.")));
	*server = fs->servername;
	return conn;
}

/*
 * A remote error's SQLSTATE and texts, copied out of res (NULL: a failure
 * of the connection itself, whose message is conn's), so that res and conn
 * can be freed before the error is raised.  Shared with shardsession.c.
 */
void
wc_remote_error_copy(PGconn *conn, PGresult *res, WcRemoteError *e)
{
	char	   *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	char	   *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char	   *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	char	   *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	char	   *context = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;

	e->code = state ? MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4])
		: ERRCODE_CONNECTION_FAILURE;
	e->msg = pstrdup(msg ? msg : (conn ? pchomp(PQerrorMessage(conn)) : "connection lost"));
	e->detail = detail ? pstrdup(detail) : NULL;
	e->hint = hint ? pstrdup(hint) : NULL;
	e->context = context ? pstrdup(context) : NULL;
}

/* Raise a remote error (res may be NULL: a connection failure). */
static void
remote_error(WcRemoteCopy *rc, PGresult *res)
{
	WcRemoteError e;

	wc_remote_error_copy(rc->conn, res, &e);
	if (res)
		PQclear(res);
	abandon(rc);
	ereport(ERROR,
			(errcode(e.code),
			 errmsg("%s", e.msg),
			 e.detail ? errdetail_internal("%s", e.detail) : 0,
			 e.hint ? errhint("%s", e.hint) : 0,
			 e.context ? errcontext("%s", e.context) : 0,
			 errcontext("remote COPY on server \"%s\" (its lines count the rows sent to that server)", rc->server)));
}

/*
 * Wait until conn's socket can be read (readable) or, else, read or
 * written; interruptible.  False if reading what came failed (the
 * connection is lost).  Shared with shardsession.c.
 */
bool
wc_remote_wait(PGconn *conn, bool readable)
{
	int			rc_wait;

	/*
	 * A writer waits for either: a shard that sends while it is sent to
	 * (notices) must be read, or both sides wait for the other.
	 */
	rc_wait = WaitLatchOrSocket(MyLatch,
								WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | WL_SOCKET_READABLE |
								(readable ? 0 : WL_SOCKET_WRITEABLE),
								PQsocket(conn), -1L, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return !(rc_wait & WL_SOCKET_READABLE) || PQconsumeInput(conn);
}

/* Wait on rc's socket; a lost connection is an error. */
static void
wait_socket(WcRemoteCopy *rc, bool readable)
{
	if (!wc_remote_wait(rc->conn, readable))
		remote_error(rc, NULL);
}

/* The next result, waiting for it interruptibly. */
static PGresult *
next_result(WcRemoteCopy *rc)
{
	while (PQisBusy(rc->conn))
		wait_socket(rc, true);
	return PQgetResult(rc->conn);
}

/* Push what libpq holds to the socket; wait for it if must_send. */
static void
send_pending(WcRemoteCopy *rc, bool must_send)
{
	for (;;)
	{
		int			r = PQflush(rc->conn);

		if (r < 0)
			remote_error(rc, NULL);
		rc->unsent = (r == 1);
		if (!rc->unsent || !must_send)
			return;
		wait_socket(rc, false);
	}
}

/*
 * Run a query that returns one boolean on the shard of foreign table
 * foreign_relid (in postgres_fdw's remote transaction); true if it is true.
 */
bool
wc_remote_query_true(Oid foreign_relid, const char *sql)
{
	WcRemoteCopy rc = {0};
	PGresult   *res;
	PGresult   *more;
	bool		result;

	rc.conn = fdw_connection(foreign_relid, &rc.server);
	rc.state = RC_DONE;
	if (!PQsendQuery(rc.conn, sql))
		remote_error(&rc, NULL);
	res = next_result(&rc);
	while ((more = next_result(&rc)) != NULL)
		PQclear(more);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		remote_error(&rc, res);
	result = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return result;
}

/*
 * Start "COPY ... FROM STDIN" (sql) on the shard of foreign table
 * foreign_relid, in postgres_fdw's remote transaction.
 */
WcRemoteCopy *
wc_remote_copy_begin(Oid foreign_relid, const char *sql)
{
	/* in the transaction's memory: the abort callbacks may still need it */
	WcRemoteCopy *rc = MemoryContextAllocZero(TopTransactionContext, sizeof(WcRemoteCopy));
	PGresult   *res;

	rc->conn = fdw_connection(foreign_relid, &rc->server);
	rc->server = MemoryContextStrdup(TopTransactionContext, rc->server);
	rc->state = RC_DONE;
	if (!PQsendQuery(rc->conn, sql))
		remote_error(rc, NULL);
	res = next_result(rc);
	if (PQresultStatus(res) != PGRES_COPY_IN)
	{
		/* an error (the table changed on the shard): read to the end */
		PGresult   *more;

		while ((more = next_result(rc)) != NULL)
			PQclear(more);
		remote_error(rc, res);
	}
	PQclear(res);
	rc->state = RC_COPYING;
	track(rc);
	if (PQsetnonblocking(rc->conn, 1) != 0)
		remote_error(rc, NULL);
	return rc;
}

/* Can data be handed over without growing libpq's buffer? */
bool
wc_remote_copy_ready(WcRemoteCopy *rc)
{
	if (rc->unsent)
		send_pending(rc, false);
	return !rc->unsent;
}

/* Send rows (whole rows of COPY data); waits only for earlier data. */
void
wc_remote_copy_put(WcRemoteCopy *rc, const char *data, int len)
{
	Assert(rc->state == RC_COPYING);
	send_pending(rc, true);
	if (PQputCopyData(rc->conn, data, len) != 1)
		remote_error(rc, NULL);
	send_pending(rc, false);
}

/* CopyDone: the shard finishes its COPY while others are still sent theirs. */
void
wc_remote_copy_end(WcRemoteCopy *rc)
{
	Assert(rc->state == RC_COPYING);
	send_pending(rc, true);
	if (PQputCopyEnd(rc->conn, NULL) != 1)
		remote_error(rc, NULL);
	rc->state = RC_ENDED;		/* from here a CopyFail is too late */
	send_pending(rc, true);
	if (PQsetnonblocking(rc->conn, 0) != 0)
		remote_error(rc, NULL);
}

/* The shard's result: its row count, or its error raised here. */
uint64
wc_remote_copy_finish(WcRemoteCopy *rc)
{
	PGresult   *res;
	PGresult   *more;
	uint64		rows;

	Assert(rc->state == RC_ENDED);
	res = next_result(rc);
	while ((more = next_result(rc)) != NULL)
		PQclear(more);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		remote_error(rc, res);
	rows = strtou64(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	rc->state = RC_DONE;
	untrack(rc);
	return rows;
}

/*
 * On error: end a COPY still in progress with CopyFail, so that the shard
 * stops it at once, and leave the connection in blocking mode for
 * postgres_fdw, whose abort callback reads the outcome and rolls the remote
 * (sub)transaction back.  Never raises an error; waits a bounded time.
 */
static void
abandon(WcRemoteCopy *rc)
{
	int			tries;

	untrack(rc);
	if (rc->state == RC_DONE)
		return;
	if (rc->state == RC_COPYING &&
		PQputCopyEnd(rc->conn, "COPY failed on the coordinator") != 1)
		elog(DEBUG1, "widecol: could not end the COPY on server \"%s\": %s",
			 rc->server, PQerrorMessage(rc->conn));
	rc->state = RC_DONE;
	/* what libpq still holds (postgres_fdw drops a connection that is stuck) */
	for (tries = 0; tries < 100 && PQflush(rc->conn) == 1; tries++)
		(void) WaitLatchOrSocket(NULL, WL_SOCKET_WRITEABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 PQsocket(rc->conn), 100L, PG_WAIT_EXTENSION);
	(void) PQsetnonblocking(rc->conn, 0);
}

void
wc_remote_copy_abandon(WcRemoteCopy *rc)
{
	if (rc != NULL)
		abandon(rc);
}
