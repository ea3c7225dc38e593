/*
 * storage/page.h — the page formats every widecol page shares (special space,
 * page types, payload capacity) and their checks.
 */
#ifndef WC_STORAGE_PAGE_H
#define WC_STORAGE_PAGE_H

#include "widecol.h"
#include "storage/buf.h"
#include "utils/rel.h"

/* ---------- pages ---------- */
#define WC_PAGE_META		1
#define WC_PAGE_L0			2
#define WC_PAGE_RUN_HEADER	3
#define WC_PAGE_RUN_DATA	4
#define WC_PAGE_RUN_INDEX	5
#define WC_PAGE_RUN_BLOOM	6
#define WC_PAGE_FREE		7	/* reclaimed, listed in the free space map */
#define WC_PAGE_RUN_VALUES	8	/* a run's non-key columns (see WcKeyPageHeader) */
#define WC_PAGE_RUN_VALUEDIR 9	/* the blocks of a run's value pages */
#define WC_PAGE_RUN_EXTENT	10	/* allocated for a run's extent, not written yet */
#define WC_PAGE_RUN_DICT	11	/* a run's zstd dictionary (storage/dictionary.h) */

#define WC_VALUEDIR_ENTRIES (WC_PAYLOAD_CAPACITY / sizeof(BlockNumber))

/* flags: the payload's codec in the low bits (storage/compression.h) */

typedef struct WcPageOpaqueData
{
	uint16		type;
	uint16		flags;
	uint32		crc;
	uint64		segment;		/* run id or level-0 generation */
	uint32		count;			/* rows (data) or entries (index) */
	uint32		aux;			/* raw size (data), level (index), next (L0) */
} WcPageOpaqueData;

typedef WcPageOpaqueData *WcPageOpaque;

#define WcPageGetOpaque(page) ((WcPageOpaque) PageGetSpecialPointer(page))
#define WC_PAYLOAD_CAPACITY \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(WcPageOpaqueData)))

/* What a read found corrupt last (relation, segment, block). */
typedef struct WcCorruption
{
	const char *segment;		/* "run", "level0", "metapage" */
	uint64		id;				/* run id or level-0 generation; 0 if unknown */
	BlockNumber block;
} WcCorruption;

extern void wc_note_corruption(Relation rel, const char *segment, uint64 id, BlockNumber blk);
extern bool wc_take_corruption(Oid relid, WcCorruption *out);

extern uint32 wc_page_crc(Page page);
extern bool wc_page_crc_covered(void);
extern void wc_check_page(Relation rel, Buffer buf, uint16 expected_type);
extern void wc_page_init_free(Page page);
extern Buffer wc_extend_page(Relation rel, BufferAccessStrategy strategy);
extern void wc_read_ahead(Relation rel, BlockNumber first, BlockNumber n);
extern void wc_stamp_extent_page(Page page, uint64 run_id);

#endif
