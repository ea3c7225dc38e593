/*
 * access/access.h — the table access method: handler, scans, tuple slot,
 * writes, write conflicts, and the bookkeeping of statements that wrote.
 */
#ifndef WC_ACCESS_H
#define WC_ACCESS_H

#include "storage/keyenc.h"
#include "storage/row.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "nodes/execnodes.h"
#include "storage/lock.h"
#include "tcop/utility.h"

/* ---------- DDL hooks (options.c) ---------- */
extern void wc_install_utility_hook(void);
extern void wc_utility_next(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
							ProcessUtilityContext context, ParamListInfo params,
							QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc);

/* ---------- sharded tables: COPY in batches (shardcopy.c) ---------- */
extern void wc_install_copy_batching(void);
extern bool wc_copy_in_batches(PlannedStmt *pstmt, const char *queryString,
							   ProcessUtilityContext context, ParamListInfo params,
							   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc);

/* ---------- sharded tables: COPY streamed to the shards ---------- */
/* shardroute.c: tuple routing's partition for a row of a hash-partitioned table */
extern int	wc_hash_partition_index(Relation rel, struct PartitionDescData *desc,
									Datum *values, bool *isnull);
/* shardconn.c: a remote COPY FROM STDIN over postgres_fdw's connection */
typedef struct WcRemoteCopy WcRemoteCopy;
extern bool wc_remote_query_true(Oid foreign_relid, const char *sql);
extern WcRemoteCopy *wc_remote_copy_begin(Oid foreign_relid, const char *sql);
extern bool wc_remote_copy_ready(WcRemoteCopy *rc);
extern void wc_remote_copy_put(WcRemoteCopy *rc, const char *data, int len);
extern void wc_remote_copy_end(WcRemoteCopy *rc);
extern uint64 wc_remote_copy_finish(WcRemoteCopy *rc);
extern void wc_remote_copy_abandon(WcRemoteCopy *rc);
/* shardconn.c, also for shardsession.c: a remote error copied out; an interruptible wait */
typedef struct WcRemoteError
{
	int			code;			/* the SQLSTATE, or a connection failure's */
	char	   *msg;
	char	   *detail;
	char	   *hint;
	char	   *context;
} WcRemoteError;
struct pg_conn;
struct pg_result;
extern void wc_remote_error_copy(struct pg_conn *conn, struct pg_result *res, WcRemoteError *e);
extern bool wc_remote_wait(struct pg_conn *conn, bool readable);
extern int	wc_shard_read_spin;
extern const char *wc_remote_column_name(Oid foreigntable, AttrNumber attnum);
/* shardsession.c: widecol's own connections for reads sent as one statement */
typedef struct WcShardSession WcShardSession;
extern WcShardSession *wc_shard_session(Oid serverid, Oid userid);
extern const char *wc_shard_session_server(WcShardSession *s);
extern void wc_shard_sessions_list(void (*fn) (const char *server, bool busy, bool valid, void *arg),
								   void *arg);
extern int	wc_shard_sessions_disconnect(const char *server);
extern void wc_shard_session_send(WcShardSession *s, const char *sql, int nparams,
								  const char *const *values, bool binary, bool stream);
extern struct pg_result *wc_shard_session_next(WcShardSession *s);
extern void wc_shard_session_stop(WcShardSession *s);
/* shardstream.c: COPY FROM parsed here, rows streamed to their shards */
extern bool wc_is_sharded_table(Oid relid);
extern bool wc_copy_stream(PlannedStmt *pstmt, const char *queryString,
						   QueryEnvironment *queryEnv, QueryCompletion *qc);

/* ---------- explicit row locks escalate to a table lock (rowlocks.c) ---------- */
extern bool wc_row_lock_covered(Relation rel, LOCKMODE rowmode, LockWaitPolicy wait_policy);
extern void wc_install_row_lock_escalation(void);

/* ---------- reads before a statement (beforestmt.c) ---------- */
extern void wc_note_write(Relation rel, CommandId cid);
extern void wc_note_inserted_key(Relation rel, const char *key, int keylen, int pklen,
								 CommandId cid);
extern Snapshot wc_snapshot_for_read(Relation rel, Snapshot snapshot, MemoryContext cxt);
extern List *wc_replaced_rows(Oid relid);
extern bool wc_inserted_keys_repeated(Oid relid);
extern void wc_read_before_begin(Oid relid);
extern void wc_read_before_end(void);
extern void wc_beforestmt_init(void);

/* ---------- scan / modify / fetch ---------- */
extern WcRowHeader *wc_fetch_version(Relation rel, ItemPointer tid);
extern WcRowHeader *wc_fetch_version_key(Relation rel, ItemPointer tid);
extern bool wc_version_is_current(Relation rel, WcRowHeader *row,
								  ItemPointer tid, Snapshot snapshot);
extern void wc_store_row(TupleTableSlot *slot, Relation rel,
						 WcRowHeader *row, ItemPointer tid);
extern void wc_store_row_ref(TupleTableSlot *slot, Relation rel,
							 WcRowHeader *row, ItemPointer tid,
							 WcKeyDecoder *dec);
extern void wc_store_row_keys(TupleTableSlot *slot, Relation rel,
							  WcRowHeader *row, ItemPointer tid,
							  WcKeyDecoder *dec);

extern const TableAmRoutine *wc_get_routine(void);
extern void wc_blind_delete_push(const void *owner, Oid relid, CommandId cid);
extern void wc_blind_delete_pop(const void *owner);
extern void wc_count_deletes(Relation rel, int64 n);
extern void wc_buffer_tombstone(Relation rel, const char *key, int keylen, int pklen,
								CommandId cid);
typedef struct WcTombstoneRun WcTombstoneRun;
extern WcTombstoneRun *wc_tombstone_run_begin(Relation rel, CommandId cid);
extern void wc_tombstone_run_add(WcTombstoneRun *t, const char *key, int keylen, int pklen);
extern void wc_tombstone_run_end(WcTombstoneRun *t);

/* ---------- tuple slot (slot.c) ---------- */
extern PGDLLIMPORT const TupleTableSlotOps WcSlotOps;
extern void wc_slot_mark_unused_columns(PlanState *top);
extern bool wc_scan_reads_keys_only(ScanState *ss);
extern bool *wc_scan_unread_columns(ScanState *ss);
extern WcRowHeader *wc_row_copy_columns(Relation rel, WcRowHeader *row, const bool *skip);
extern void wc_store_row_columns(TupleTableSlot *slot, Relation rel, WcRowHeader *row,
								 ItemPointer tid, WcKeyDecoder *dec, const bool *skip);
extern void wc_slot_store_version(TupleTableSlot *slot, WcTableInfo *info, WcRowHeader *row,
								  ItemPointer tid, Oid relid, WcKeyDecoder *dec);

/* scan.c */
extern TableScanDesc wc_scan_begin(Relation rel, Snapshot snapshot,
								   int nkeys, struct ScanKeyData *key,
								   ParallelTableScanDesc pscan, uint32 flags);
extern void wc_scan_end(TableScanDesc scan);
extern Size wc_parallelscan_estimate(Relation rel);
extern Size wc_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void wc_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern void wc_scan_rescan(TableScanDesc scan, struct ScanKeyData *key,
						   bool set_params, bool allow_strat,
						   bool allow_sync, bool allow_pagemode);
extern bool wc_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
								TupleTableSlot *slot);
extern bool wc_fetch_row_version(Relation rel, ItemPointer tid,
								 Snapshot snapshot, TupleTableSlot *slot);
extern bool wc_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void wc_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool wc_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
								  Snapshot snapshot);
extern bool wc_scan_analyze_next_block(TableScanDesc scan, BlockNumber blockno,
									   BufferAccessStrategy bstrategy);
extern bool wc_scan_analyze_next_tuple(TableScanDesc scan,
									   TransactionId OldestXmin,
									   double *liverows, double *deadrows,
									   TupleTableSlot *slot);

/* modify.c */
extern void wc_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							int options, struct BulkInsertStateData *bistate);
extern void wc_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							CommandId cid, int options,
							struct BulkInsertStateData *bistate);
extern void wc_finish_bulk_insert(Relation rel, int options);
extern void wc_insert_rows_of_statement(CommandId cid);
extern TM_Result wc_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
								 Snapshot snapshot, Snapshot crosscheck,
								 bool wait, TM_FailureData *tmfd,
								 bool changingPart);
extern TM_Result wc_tuple_update(Relation rel, ItemPointer otid,
								 TupleTableSlot *slot, CommandId cid,
								 Snapshot snapshot, Snapshot crosscheck,
								 bool wait, TM_FailureData *tmfd,
								 LockTupleMode *lockmode,
								 bool *update_indexes);
extern void wc_modify_init(void);
extern bool wc_xact_ended(XactEvent event);
/* movedkeys.c */
extern void wc_remember_moved(Relation rel, const char *key, int len, CommandId cid);
extern bool wc_key_moved_here(Relation rel, const char *key, int len, CommandId cid);
extern void wc_moved_keys_reset(void);

/* conflict.c */
extern TM_Result wc_check_write_conflict(Relation rel, WcRowHeader *old,
										 ItemPointer otid, CommandId cid,
										 bool wait, TM_FailureData *tmfd,
										 bool moved_here, LOCKTAG *tag);
extern void wc_key_unlock(LOCKTAG *tag);
extern void wc_key_locktag(Relation rel, const char *key, int keylen, LOCKTAG *tag);

/* baselocks.c */
extern bool wc_base_has_derived(Relation rel);
extern void wc_base_lock_key(Relation rel, const char *key, int keylen);
extern void wc_baselocks_init(void);
extern TM_Result wc_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
							   TupleTableSlot *slot, CommandId cid,
							   LockTupleMode mode, LockWaitPolicy wait_policy,
							   uint8 flags, TM_FailureData *tmfd);

/* ---------- VACUUM FULL / CLUSTER (cluster.c) ---------- */
extern void wc_cluster_copy(Relation old, Relation new, TransactionId oldest_xmin,
							TransactionId *xid_cutoff, MultiXactId *multi_cutoff,
							double *num_tuples, double *tups_vacuumed);

#endif
