/*
 * storage/metapage.h — block 0: storage id, counters, level-0 generations.
 */
#ifndef WC_STORAGE_METAPAGE_H
#define WC_STORAGE_METAPAGE_H

#include "storage/page.h"

/* ---------- metapage ---------- */
#define WC_META_BLOCK		0
#define WC_META_MAGIC		0x57434F4C	/* "WCOL" */
#define WC_META_VERSION		2
#define WC_MAX_L0_GENS		256	/* fits the metapage: 24 bytes each */
#define WC_ROWID_CHUNK		1024

typedef struct WcL0Gen
{
	uint64		gen;
	BlockNumber head;
	BlockNumber tail;
	uint32		npages;
	uint32		pad;
} WcL0Gen;

/*
 * A run being written: its writer's (sub)transaction.  Listed before the
 * run's first page is written, so that if the writer aborts or crashes the
 * next maintenance pass finds the run's pages again (storage/pending.c).
 */
#define WC_MAX_PENDING_RUNS	64

typedef struct WcPendingRun
{
	uint64		run_id;
	TransactionId xid;
	uint32		pad;
} WcPendingRun;

typedef struct WcMetaData
{
	uint32		magic;
	uint32		version;
	uint64		storage_id;
	uint64		next_rowid;
	uint64		next_segment_id;
	uint64		next_l0_gen;
	int64		clock_reserved; /* every write time so far is below this */
	int64		clock_epoch;	/* start time of the server that reserved it */
	int64		bytes_ingested; /* compressed bytes of runs from flushes and bulk writes */
	int64		bytes_compacted;	/* compressed bytes of runs compactions wrote */
	uint32		l0_pages;
	uint32		ngens;
	WcL0Gen		gens[WC_MAX_L0_GENS];
	/* added after version 2's layout: zero on metapages written before */
	uint32		npending;
	uint32		pad;
	WcPendingRun pending[WC_MAX_PENDING_RUNS];
} WcMetaData;

StaticAssertDecl(sizeof(WcMetaData) <= WC_PAYLOAD_CAPACITY, "metapage too large");

extern void wc_meta_init_page(Page page, uint64 storage_id);
extern uint64 wc_new_storage_id(void);
extern void wc_meta_read(Relation rel, WcMetaData *meta);
extern uint64 wc_storage_id(Relation rel, bool refresh);
extern bool wc_meta_storage_id(Relation rel, uint64 *storage_id);
extern uint64 wc_meta_next_segment_id(Relation rel);
extern uint64 wc_meta_alloc_rowid(Relation rel);
extern int64 wc_meta_write_ts(Relation rel);
extern int64 wc_meta_write_ts_n(Relation rel, int n);
extern void wc_meta_count_written(Relation rel, bool compaction, int64 bytes);
extern Buffer wc_extend_page(Relation rel, BufferAccessStrategy strategy);
extern void wc_check_page(Relation rel, Buffer buf, uint16 expected_type);

#endif
