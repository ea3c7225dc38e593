/*
 * wal.c — widecol's own WAL resource manager.
 *
 * Page contents are logged with generic WAL and full-page images; this
 * resource manager carries what those cannot: the recovery conflict of a
 * metapage change that stops readers from finding level-0 pages an old
 * snapshot may still need.  On a hot standby, its redo cancels queries whose
 * snapshots are older than the retiring transaction, as heap's pruning
 * records do (unless hot_standby_feedback keeps the primary from it).
 *
 * The resource manager id is in the custom range (see src/README.md).
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "storage/standby.h"

#include "widecol.h"

#define XLOG_WC_SNAPSHOT_CONFLICT	0x00

typedef struct xl_wc_snapshot_conflict
{
	RelFileNode node;
	TransactionId latest_removed_xid;
} xl_wc_snapshot_conflict;

static void
wc_rm_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_wc_snapshot_conflict *xlrec = (xl_wc_snapshot_conflict *) XLogRecGetData(record);

	if (info != XLOG_WC_SNAPSHOT_CONFLICT)
		elog(PANIC, "widecol redo: unknown op code %u", info);
	if (InHotStandby)
		ResolveRecoveryConflictWithSnapshot(xlrec->latest_removed_xid, xlrec->node);
}

static void
wc_rm_desc(StringInfo buf, XLogReaderState *record)
{
	xl_wc_snapshot_conflict *xlrec = (xl_wc_snapshot_conflict *) XLogRecGetData(record);

	appendStringInfo(buf, "rel %u/%u/%u; latest removed xid %u",
					 xlrec->node.spcNode, xlrec->node.dbNode, xlrec->node.relNode,
					 xlrec->latest_removed_xid);
}

static const char *
wc_rm_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_WC_SNAPSHOT_CONFLICT ? "SNAPSHOT_CONFLICT" : NULL;
}

static RmgrData wc_rmgr = {
	.rm_name = "widecol",
	.rm_redo = wc_rm_redo,
	.rm_desc = wc_rm_desc,
	.rm_identify = wc_rm_identify,
};

void
wc_register_rmgr(void)
{
	RegisterCustomRmgr(WC_RMGR_ID, &wc_rmgr);
}

/* Before removing something old snapshots may need: conflict on standbys. */
void
wc_log_snapshot_conflict(Relation rel, TransactionId latest_removed_xid)
{
	xl_wc_snapshot_conflict xlrec;

	if (!RelationNeedsWAL(rel) || !XLogStandbyInfoActive() ||
		!TransactionIdIsValid(latest_removed_xid))
		return;
	xlrec.node = rel->rd_node;
	xlrec.latest_removed_xid = latest_removed_xid;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogInsert(WC_RMGR_ID, XLOG_WC_SNAPSHOT_CONFLICT);
}
