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
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "utils/builtins.h"

#include "widecol.h"
#include "api/api.h"
#include "storage/columns.h"
#include "storage/compression.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/run.h"

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

/*
 * widecol.run_pages(regclass): where the bytes of the live runs are, per
 * run, page kind and codec: pages, the bytes their payloads hold once
 * decoded (raw) and as stored.  Reads every page of the relation once (a
 * diagnostic, like verify); pages whose checksums are wrong are counted as
 * they claim to be (widecol.verify is what checks them).
 */
#define RP_KINDS 8
#define RP_CODECS 3
static const char *const rp_kind_names[RP_KINDS] = {"key", "value", "index", "bloom", "value_dir", "header",
"value_columns",			/* value pages in column layout (columns.h) */
"dictionary"};				/* a run's zstd dictionary (dictionary.h) */

typedef struct RunPageCount
{
	int64		pages;
	int64		raw;
	int64		stored;
} RunPageCount;

static int
rp_kind(uint16 type)
{
	switch (type)
	{
		case WC_PAGE_RUN_DATA:
			return 0;
		case WC_PAGE_RUN_VALUES:
			return 1;
		case WC_PAGE_RUN_INDEX:
			return 2;
		case WC_PAGE_RUN_BLOOM:
			return 3;
		case WC_PAGE_RUN_VALUEDIR:
			return 4;
		case WC_PAGE_RUN_HEADER:
			return 5;
		case WC_PAGE_RUN_DICT:
			return 7;
	}
	return -1;
}

PG_FUNCTION_INFO_V1(widecol_run_pages);
Datum
widecol_run_pages(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_srf_open_widecol(fcinfo);
	WcMetaData	meta;
	WcManifest *m = wc_visible_manifest(rel, &meta);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	RunPageCount *counts;

	qsort(m->runs, m->nruns, sizeof(WcRunSummary), wc_run_id_cmp);
	counts = palloc0(sizeof(RunPageCount) * Max(m->nruns, 1) * RP_KINDS * RP_CODECS);
	for (BlockNumber b = WC_META_BLOCK + 1; b < nblocks; b++)
	{
		Buffer		buf;
		Page		page;
		WcPageOpaqueData op;
		Size		len;
		int			kind,
					codec = WC_CODEC_NONE;
		int64		raw;
		WcRunSummary key,
				   *run;
		RunPageCount *cnt;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, b, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page) || PageGetSpecialSize(page) != MAXALIGN(sizeof(WcPageOpaqueData)))
		{
			UnlockReleaseBuffer(buf);
			continue;
		}
		op = *WcPageGetOpaque(page);
		len = ((PageHeader) page)->pd_lower > MAXALIGN(SizeOfPageHeaderData) ?
			((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData) : 0;
		len = Min(len, WC_PAYLOAD_CAPACITY);
		raw = len;
		kind = rp_kind(op.type);
		if (kind == 0 && len >= sizeof(WcKeyPageHeader))
		{
			WcKeyPageHeader kh;

			memcpy(&kh, PageGetContents(page), sizeof(kh));
			codec = WcFlagsCodec(kh.flags);
			raw = (int64) op.aux + (len - Min(kh.keylen, len));
		}
		else if (kind == 1)
		{
			codec = WcFlagsCodec(op.flags);
			raw = op.aux;
			if (op.flags & WC_VALUES_COLUMNS)
				kind = 6;
		}
		UnlockReleaseBuffer(buf);
		if (kind < 0 || codec >= RP_CODECS)
			continue;
		key.run_id = op.segment;
		run = bsearch(&key, m->runs, m->nruns, sizeof(WcRunSummary), wc_run_id_cmp);
		if (run == NULL)
			continue;			/* a run being written or dropped */
		cnt = &counts[((run - m->runs) * RP_KINDS + kind) * RP_CODECS + codec];
		cnt->pages++;
		cnt->raw += raw;
		cnt->stored += len;
	}
	FreeAccessStrategy(strategy);

	for (int i = 0; i < m->nruns; i++)
		for (int k = 0; k < RP_KINDS; k++)
			for (int c = 0; c < RP_CODECS; c++)
			{
				RunPageCount *cnt = &counts[(i * RP_KINDS + k) * RP_CODECS + c];
				Datum		v[6];
				bool		n[6] = {0};

				if (cnt->pages == 0)
					continue;
				v[0] = Int64GetDatum((int64) m->runs[i].run_id);
				v[1] = CStringGetTextDatum(rp_kind_names[k]);
				v[2] = CStringGetTextDatum(wc_codec_name((WcCodec) c));
				v[3] = Int64GetDatum(cnt->pages);
				v[4] = Int64GetDatum(cnt->raw);
				v[5] = Int64GetDatum(cnt->stored);
				wc_srf_put(fcinfo, v, n);
			}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}
