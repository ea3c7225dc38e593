/*
 * shardsession.c — widecol's own connections to the shards, for reads sent
 * as one autocommit statement (executor/shardread.c).
 *
 * postgres_fdw's connections always run a remote transaction; a lone read
 * needs none, so it gets a connection of ours: one per user mapping, made
 * from the same server and user mapping options that postgres_fdw uses
 * (those libpq knows), with the same rules for non-superusers (a password
 * in the user mapping and a server that asks for it, unless a superuser
 * set password_required 'false') and the same session settings
 * (search_path pg_catalog, UTC, ISO dates, exact floats), so that the SQL
 * postgres_fdw deparsed means the same on it.
 *
 * One statement at a time per connection (wc_shard_session_busy tells);
 * a statement still running when its (sub)transaction aborts has its
 * connection closed, so the next read starts clean.
 */
#include "postgres.h"

#include <sched.h>

#include "access/xact.h"
#include "catalog/pg_foreign_server.h"
#include "common/hashfn.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#include "access/access.h"

/* A statement prepared on a session's connection, by its SQL's hash. */
typedef struct PreparedSql
{
	uint64		hash;
	char	   *sql;			/* in TopMemoryContext */
	char		name[32];
} PreparedSql;

/* So many statements prepared per connection; others are sent unprepared. */
#define WC_SHARD_MAX_PREPARED 200

struct WcShardSession
{
	Oid			umid;			/* hash key: the user mapping */
	PGconn	   *conn;
	HTAB	   *prepared;		/* PreparedSql, of this connection */
	char	   *server;			/* in TopMemoryContext */
	bool		busy;			/* a statement's results are not all read */
	bool		stale;			/* server or user mapping changed: reconnect */
	SubTransactionId busy_subid;	/* the subtransaction that sent it */
	uint64		next_name;		/* prepared statements are widecol_<n> */
	/* the statement sent, to send again if its prepared form went stale */
	MemoryContext stmtcxt;
	char	   *sql;
	int			nparams;
	char	  **values;
	bool		binary;
	bool		stream;
	bool		got_rows;		/* a row of it was returned */
	PreparedSql *used;			/* the prepared form it was sent as */
};

static HTAB *sessions = NULL;

static void
close_session(WcShardSession *s)
{
	if (s->conn)
	{
		PQfinish(s->conn);
		ReleaseExternalFD();
	}
	s->conn = NULL;
	s->busy = false;
	if (s->prepared)
	{
		HASH_SEQ_STATUS seq;
		PreparedSql *p;

		hash_seq_init(&seq, s->prepared);
		while ((p = hash_seq_search(&seq)) != NULL)
			pfree(p->sql);
		hash_destroy(s->prepared);
		s->prepared = NULL;
	}
}

/* Ask the shard to cancel what conn is running; false if that failed. */
static bool
send_cancel(PGconn *conn)
{
	PGcancel   *cancel = PQgetCancel(conn);
	char		errbuf[256];
	bool		ok;

	if (cancel == NULL)
		return false;
	ok = PQcancel(cancel, errbuf, sizeof(errbuf));
	PQfreeCancel(cancel);
	return ok;
}

/*
 * A statement still running when its (sub)transaction ends (an error, or
 * a portal whose executor was never ended): ask the shard to stop it, then
 * drop the connection.
 */
static void
close_busy(SubTransactionId subid)
{
	HASH_SEQ_STATUS seq;
	WcShardSession *s;

	if (sessions == NULL)
		return;
	hash_seq_init(&seq, sessions);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->busy && s->conn && (subid == InvalidSubTransactionId || s->busy_subid == subid))
		{
			(void) send_cancel(s->conn);
			close_session(s);
		}
}

static void
sessions_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		close_busy(InvalidSubTransactionId);
}

static void
sessions_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		close_busy(mySubid);
}

/* A server or user mapping changed: connect again before the next read. */
static void
sessions_inval_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	HASH_SEQ_STATUS seq;
	WcShardSession *s;

	hash_seq_init(&seq, sessions);
	while ((s = hash_seq_search(&seq)) != NULL)
		s->stale = true;
}

static void
init_sessions(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(WcShardSession);
	sessions = hash_create("widecol shard sessions", 8, &ctl, HASH_ELEM | HASH_BLOBS);
	RegisterXactCallback(sessions_xact_callback, NULL);
	RegisterSubXactCallback(sessions_subxact_callback, NULL);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, sessions_inval_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(USERMAPPINGOID, sessions_inval_callback, (Datum) 0);
}

static bool
is_libpq_option(const char *name)
{
	static PQconninfoOption *libpq_options = NULL;

	if (libpq_options == NULL && (libpq_options = PQconndefaults()) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	for (PQconninfoOption *o = libpq_options; o->keyword; o++)
		if (strcmp(o->keyword, name) == 0)
			return true;
	return false;
}

static bool
password_required(UserMapping *user)
{
	ListCell   *lc;

	foreach(lc, user->options)
	{
		DefElem    *d = lfirst(lc);

		if (strcmp(d->defname, "password_required") == 0)
			return defGetBoolean(d);
	}
	return true;
}

static PGconn *
connect_shard(ForeignServer *server, UserMapping *user)
{
	List	   *options = list_concat_copy(server->options, user->options);
	int			n = list_length(options) + 3;
	const char **keywords = palloc(n * sizeof(char *));
	const char **values = palloc(n * sizeof(char *));
	bool		has_password = false;
	bool		superuser = superuser_arg(user->userid);
	int			i = 0;
	ListCell   *lc;
	PGconn	   *conn;
	PGresult   *res;

	foreach(lc, options)
	{
		DefElem    *d = lfirst(lc);

		if (!is_libpq_option(d->defname))
			continue;			/* postgres_fdw's own: fetch_size, ... */
		keywords[i] = d->defname;
		values[i] = defGetString(d);
		has_password |= strcmp(d->defname, "password") == 0 && values[i][0] != '\0';
		i++;
	}
	keywords[i] = "fallback_application_name";
	values[i++] = "widecol";
	keywords[i] = "client_encoding";
	values[i++] = GetDatabaseEncodingName();
	keywords[i] = values[i] = NULL;

	/* postgres_fdw's rules: a non-superuser may not borrow the server's OS identity */
	if (!superuser && !has_password && password_required(user))
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required"),
				 errdetail("Non-superusers must provide a password in the user mapping.")));
	/* a socket fd.c does not open: counted against max_files_per_process */
	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to server \"%s\"", server->servername),
				 errdetail("There are too many open files on the local server."),
				 errhint("Raise the server's max_files_per_process and/or \"ulimit -n\" limits.")));
	conn = PQconnectdbParams(keywords, values, false);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		char	   *msg = conn ? pchomp(PQerrorMessage(conn)) : "out of memory";

		if (conn)
			PQfinish(conn);
		ReleaseExternalFD();
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to server \"%s\"", server->servername),
				 errdetail_internal("%s", msg)));
	}
	if (!superuser && password_required(user) && !PQconnectionUsedPassword(conn))
	{
		PQfinish(conn);
		ReleaseExternalFD();
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required"),
				 errdetail("Non-superuser cannot connect if the server does not request a password."),
				 errhint("Target server's authentication method must be changed or password_required=false set in the user mapping attributes.")));
	}
	/*
	 * What postgres_fdw's deparsed SQL and its text values assume; and no
	 * parallel workers, as under postgres_fdw's cursors: a query over all
	 * shards keeps every shard busy already (a shard view's report took
	 * 1.8x as long with each shard starting workers).
	 */
	res = PQexec(conn, "SET search_path = pg_catalog; SET timezone = 'UTC'; SET datestyle = ISO; "
				 "SET intervalstyle = postgres; SET extra_float_digits = 3; "
				 "SET max_parallel_workers_per_gather = 0");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		char	   *msg = pchomp(PQerrorMessage(conn));

		PQclear(res);
		PQfinish(conn);
		ReleaseExternalFD();
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not set up a session on server \"%s\"", server->servername),
				 errdetail_internal("%s", msg)));
	}
	PQclear(res);
	return conn;
}

/*
 * The session for reads of server `serverid` as `userid`; NULL if its
 * connection is running another statement (the caller reads through
 * postgres_fdw instead).
 */
WcShardSession *
wc_shard_session(Oid serverid, Oid userid)
{
	UserMapping *user = GetUserMapping(userid, serverid);
	WcShardSession *s;
	bool		found;

	if (sessions == NULL)
		init_sessions();
	s = hash_search(sessions, &user->umid, HASH_ENTER, &found);
	if (!found)
	{
		memset((char *) s + sizeof(Oid), 0, sizeof(WcShardSession) - sizeof(Oid));
		s->stmtcxt = AllocSetContextCreate(TopMemoryContext, "widecol shard statement",
										   ALLOCSET_SMALL_SIZES);
	}
	if (s->busy)
		return NULL;
	/*
	 * A connection whose server went away since (a restart, a terminated
	 * backend) has its error and end of file waiting: reading them (twice:
	 * the message, then the end) finds it dead before a statement fails on it.
	 */
	if (s->conn && (s->stale || !PQconsumeInput(s->conn) || !PQconsumeInput(s->conn) ||
					PQstatus(s->conn) != CONNECTION_OK))
		close_session(s);
	if (s->conn == NULL)
	{
		ForeignServer *server = GetForeignServer(serverid);

		s->stale = false;
		s->conn = connect_shard(server, user);
		if (s->server)
			pfree(s->server);
		s->server = MemoryContextStrdup(TopMemoryContext, server->servername);
	}
	return s;
}

const char *
wc_shard_session_server(WcShardSession *s)
{
	return s->server;
}

/*
 * This backend's connections, for widecol.shard_connections(): calls fn
 * with each one's server, whether a read is running on it and whether it
 * is usable (connected, its server and user mapping unchanged since).
 */
void
wc_shard_sessions_list(void (*fn) (const char *server, bool busy, bool valid, void *arg),
					   void *arg)
{
	HASH_SEQ_STATUS seq;
	WcShardSession *s;

	if (sessions == NULL)
		return;
	hash_seq_init(&seq, sessions);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->conn)
			fn(s->server, s->busy,
			   !s->stale && PQstatus(s->conn) == CONNECTION_OK, arg);
}

/*
 * Close this backend's connections to the shard server named `server`
 * (NULL: to every server), as postgres_fdw_disconnect() closes postgres_fdw's;
 * one a read is still running on is left open, with a warning.  Returns
 * how many were closed.  The next read connects again.
 */
int
wc_shard_sessions_disconnect(const char *server)
{
	HASH_SEQ_STATUS seq;
	WcShardSession *s;
	int			closed = 0;

	if (sessions == NULL)
		return 0;
	hash_seq_init(&seq, sessions);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		if (s->conn == NULL || (server && strcmp(server, s->server) != 0))
			continue;
		if (s->busy)
		{
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("widecol: the connection to shard server \"%s\" is in use: not closed", s->server),
					 errhint("A read of this statement is still running on it; disconnect after the statement.")));
			continue;
		}
		close_session(s);
		closed++;
	}
	return closed;
}

/* Raise a remote error, or a connection failure (res NULL); closes the session. */
static void
session_error(WcShardSession *s, PGresult *res)
{
	WcRemoteError e;

	wc_remote_error_copy(s->conn, res, &e);
	if (res)
		PQclear(res);
	if (res && s->conn && PQstatus(s->conn) == CONNECTION_OK)
	{
		/* a statement's error: the connection goes on once it is read to the end */
		PGresult   *more;

		while ((more = PQgetResult(s->conn)) != NULL)
			PQclear(more);
		s->busy = false;
	}
	else
		close_session(s);
	ereport(ERROR,
			(errcode(e.code),
			 errmsg("%s", e.msg),
			 e.detail ? errdetail_internal("%s", e.detail) : 0,
			 e.hint ? errhint("%s", e.hint) : 0,
			 errcontext("read of server \"%s\" (widecol.shard_direct_reads)", s->server)));
}

static PGresult *next_result(WcShardSession *s);

static void
forget_prepared(WcShardSession *s, PreparedSql *p)
{
	uint64		hash = p->hash;

	pfree(p->sql);
	hash_search(s->prepared, &hash, HASH_REMOVE, NULL);
}

/*
 * sql prepared on the session's connection (prepared now if it is new), or
 * NULL.  A statement with parameters is planned once by the
 * shard, as a prepared statement sent to it directly would be: its parse
 * and planning were as much as its execution for a 100-row read.
 */
static PreparedSql *
prepared_form(WcShardSession *s, const char *sql, int nparams)
{
	uint64		hash = hash_bytes_extended((const unsigned char *) sql, strlen(sql), 0);
	PreparedSql *p;
	PGresult   *res;
	bool		found;

	if (s->prepared == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(PreparedSql);
		s->prepared = hash_create("widecol shard prepared statements", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS);
	}
	p = hash_search(s->prepared, &hash, HASH_FIND, NULL);
	if (p != NULL)
		return strcmp(p->sql, sql) == 0 ? p : NULL;
	if (hash_get_num_entries(s->prepared) >= WC_SHARD_MAX_PREPARED)
		return NULL;
	p = hash_search(s->prepared, &hash, HASH_ENTER, &found);
	snprintf(p->name, sizeof(p->name), "widecol_" UINT64_FORMAT, ++s->next_name);
	p->sql = MemoryContextStrdup(TopMemoryContext, sql);
	if (!PQsendPrepare(s->conn, p->name, sql, nparams, NULL))
		session_error(s, NULL);
	s->busy = true;
	s->busy_subid = GetCurrentSubTransactionId();
	res = next_result(s);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		forget_prepared(s, p);
		session_error(s, res);
	}
	PQclear(res);
	while ((res = next_result(s)) != NULL)
		PQclear(res);
	s->busy = false;
	return p;
}

/*
 * Send one statement (its results in binary if binary); its rows then come
 * one by one if stream (libpq's single-row mode), else all at once
 * (wc_shard_session_next).
 */
static void
send_statement(WcShardSession *s)
{
	PreparedSql *p = s->nparams > 0 ? prepared_form(s, s->sql, s->nparams) : NULL;
	const char *const *values = (const char *const *) s->values;

	s->used = p;
	s->got_rows = false;
	if (!(p ? PQsendQueryPrepared(s->conn, p->name, s->nparams, values, NULL, NULL, s->binary ? 1 : 0) :
		  PQsendQueryParams(s->conn, s->sql, s->nparams, NULL, values, NULL, NULL, s->binary ? 1 : 0)))
		session_error(s, NULL);
	s->busy = true;
	s->busy_subid = GetCurrentSubTransactionId();
	if (s->stream && !PQsetSingleRowMode(s->conn))
		session_error(s, NULL);
}

void
wc_shard_session_send(WcShardSession *s, const char *sql, int nparams, const char *const *values,
					  bool binary, bool stream)
{
	MemoryContext old;

	MemoryContextReset(s->stmtcxt);
	old = MemoryContextSwitchTo(s->stmtcxt);
	s->sql = pstrdup(sql);
	s->nparams = nparams;
	s->values = palloc0(Max(nparams, 1) * sizeof(char *));
	for (int i = 0; i < nparams; i++)
		s->values[i] = values[i] ? pstrdup(values[i]) : NULL;
	s->binary = binary;
	s->stream = stream;
	MemoryContextSwitchTo(old);
	send_statement(s);
}

int			wc_shard_read_spin = 300;

/*
 * The next result of the statement, waiting for it interruptibly.  Until
 * its first rows came, it polls the socket for up to widecol.shard_read_spin
 * microseconds before it sleeps: a short read's answer often comes sooner
 * than a sleeping backend is woken again (a sleep and a wake-up cost ~50 µs
 * of a 100-row read's ~300 µs on the benchmark machine).  It yields the CPU
 * between polls, so that a busy machine's other processes (the shard's own
 * backend, on one machine) run first.
 */
static PGresult *
next_result(WcShardSession *s)
{
	if (wc_shard_read_spin > 0 && !s->got_rows && PQisBusy(s->conn))
	{
		instr_time	start,
					now;

		INSTR_TIME_SET_CURRENT(start);
		for (;;)
		{
			if (!PQconsumeInput(s->conn))
				session_error(s, NULL);
			if (!PQisBusy(s->conn))
				break;
			CHECK_FOR_INTERRUPTS();
			sched_yield();
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			if (INSTR_TIME_GET_MICROSEC(now) >= wc_shard_read_spin)
				break;
		}
	}
	while (PQisBusy(s->conn))
		if (!wc_remote_wait(s->conn, true))
			session_error(s, NULL);
	return PQgetResult(s->conn);
}

/*
 * The next rows (a PGresult of one or more tuples, for the caller to
 * PQclear), or NULL at the end of the statement's rows.
 */
PGresult *
wc_shard_session_next(WcShardSession *s)
{
	PGresult   *res = next_result(s);
	PGresult   *more;

	if (res && (PQresultStatus(res) == PGRES_SINGLE_TUPLE ||
				(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0)))
	{
		s->got_rows = true;
		return res;
	}
	/*
	 * The shard dropped or changed what the prepared form stands on (its
	 * table altered: 0A000 "cached plan must not change result type"; a
	 * pooler's new session: 26000): prepare it again, once, and resend.
	 */
	if (res && PQresultStatus(res) == PGRES_FATAL_ERROR && s->used && !s->got_rows)
	{
		char	   *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		if (state && (strcmp(state, "0A000") == 0 || strcmp(state, "26000") == 0))
		{
			PQclear(res);
			while ((more = next_result(s)) != NULL)
				PQclear(more);
			forget_prepared(s, s->used);
			s->used = NULL;
			send_statement(s);
			if (s->used)
				s->used = NULL;	/* no second retry */
			return wc_shard_session_next(s);
		}
	}
	if (res != NULL)
	{
		/* streamed rows end with an empty result, then nothing */
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			session_error(s, res);
		PQclear(res);
		if ((more = next_result(s)) != NULL)
			session_error(s, more);
	}
	s->busy = false;
	return NULL;
}

/* Stop a statement whose rows are no longer wanted, keeping the connection. */
void
wc_shard_session_stop(WcShardSession *s)
{
	PGresult   *res;

	if (!s->busy || s->conn == NULL)
		return;
	/* ended already (all its rows here)?  Then nothing to cancel */
	if (!PQconsumeInput(s->conn))
	{
		close_session(s);
		return;
	}
	while (!PQisBusy(s->conn))
	{
		if ((res = PQgetResult(s->conn)) == NULL)
		{
			s->busy = false;
			return;
		}
		PQclear(res);
	}
	if (!send_cancel(s->conn))
	{
		close_session(s);
		return;
	}
	/* the remaining rows, then the cancellation's error, then the end */
	while ((res = next_result(s)) != NULL)
		PQclear(res);
	s->busy = false;
}
