/*
 * storage/pending.h — runs being written, listed in the metapage so that
 * the pages of one whose writer aborted or crashed are found again.
 */
#ifndef WC_STORAGE_PENDING_H
#define WC_STORAGE_PENDING_H

#include "storage/metapage.h"

typedef enum WcPendingFate
{
	WC_PENDING_WRITING,			/* its writer is still in progress */
	WC_PENDING_COMMITTED,		/* published: nothing to do */
	WC_PENDING_ABORTED			/* aborted or crashed: its pages are lost */
} WcPendingFate;

extern WcPendingFate wc_pending_fate(const WcPendingRun *p);
extern bool wc_pending_add(Relation rel, uint64 run_id);
extern void wc_pending_forget(Relation rel, const uint64 *run_ids, int n);

#endif
