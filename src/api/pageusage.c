/*
 * pageusage.c — widecol.page_usage(regclass): where every page of a table
 * is, so that space that is neither used nor free shows: the metapage,
 * level-0 generations, runs, runs dropped whose pages are not free yet,
 * pages recorded in the free space map, and the rest ("unaccounted":
 * pages of writes that failed and were not found again yet, or of writes
 * in progress).
 */
#include "postgres.h"

#include "access/table.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "utils/builtins.h"

#include "widecol.h"
#include "api/api.h"
#include "storage/manifest.h"
#include "storage/metapage.h"

PG_FUNCTION_INFO_V1(widecol_page_usage);
Datum
widecol_page_usage(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	WcMetaData	meta;
	int64		level0 = 0,
				runs,
				dropped,
				free_pages = 0;
	Datum		v[7];
	bool		n[7] = {0};

	wc_meta_read(rel, &meta);
	for (uint32 g = 0; g < meta.ngens; g++)
		level0 += meta.gens[g].npages;
	wc_manifest_pages(meta.storage_id, &runs, &dropped);
	for (BlockNumber b = WC_META_BLOCK + 1; b < nblocks; b++)
		free_pages += GetRecordedFreeSpace(rel, b) > 0;
	table_close(rel, AccessShareLock);

	v[0] = Int64GetDatum(nblocks);
	v[1] = Int64GetDatum(1);
	v[2] = Int64GetDatum(level0);
	v[3] = Int64GetDatum(runs);
	v[4] = Int64GetDatum(dropped);
	v[5] = Int64GetDatum(free_pages);
	v[6] = Int64GetDatum((int64) nblocks - 1 - level0 - runs - dropped - free_pages);
	PG_RETURN_DATUM(wc_result_row(fcinfo, v, n));
}
