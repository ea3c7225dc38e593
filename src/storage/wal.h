/*
 * storage/wal.h — widecol's custom WAL resource manager.
 */
#ifndef WC_STORAGE_WAL_H
#define WC_STORAGE_WAL_H

#include "storage/page.h"

/* wal.c: custom resource manager id (custom range 128-255) */
#define WC_RMGR_ID 147
extern void wc_register_rmgr(void);
extern void wc_log_snapshot_conflict(Relation rel, TransactionId latest_removed_xid);
extern void wc_free_buffer(Relation rel, Buffer buf);
extern OffsetNumber wc_l0_add_item(Relation rel, Buffer buf, const char *item, Size itemlen);
extern void wc_l0_log_new_page(Relation rel, Buffer metabuf, Buffer newbuf, Buffer tailbuf,
							   uint64 gen, const char *item, Size itemlen);
extern void wc_l0_add_items(Relation rel, Buffer buf, const char *data, Size datalen, int n);

#endif
