/*
 * verify.c — widecol.verify(regclass): check a whole table without trusting
 * it.  Every run: header, every index page, every data block (checksum,
 * decompression, row offsets, sort order, first key = index key), every bloom
 * page (checksum, and every partition key of the run must test positive),
 * and the summary against what was read.  Every level-0 generation: page
 * kinds and generation numbers.  Problems are reported, not raised.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "damage.h"

#define MAX_PROBLEMS 20

typedef struct Report
{
	StringInfoData problems;
	int			nproblems;
	int64		pages;
	int64		rows;
	BlockNumber first_block;	/* of the first problem */
} Report;

static void
problem(Report *r, BlockNumber blk, const char *fmt,...) pg_attribute_printf(3, 4);

static void
problem(Report *r, BlockNumber blk, const char *fmt,...)
{
	va_list		ap;

	if (r->nproblems++ == 0)
		r->first_block = blk;
	if (r->nproblems > MAX_PROBLEMS)
		return;
	if (r->problems.len > 0)
		appendStringInfoString(&r->problems, "; ");
	if (blk != InvalidBlockNumber)
		appendStringInfo(&r->problems, "block %u: ", blk);
	va_start(ap, fmt);
	for (;;)
	{
		int			needed = appendStringInfoVA(&r->problems, fmt, ap);

		if (needed == 0)
			break;
		va_end(ap);
		enlargeStringInfo(&r->problems, needed);
		va_start(ap, fmt);
	}
	va_end(ap);
}

static bool
bloom_has(Relation rel, const WcRunHeader *hdr, const char *pk, int pklen, Report *r)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	uint64		hash = wc_bloom_hash(pk, pklen);
	BlockNumber blk = hdr->bloom_first + wc_bloom_page_for(hdr->nbloom_pages, hash);
	const char *p = wc_read_run_page_soft(rel, blk, WC_PAGE_RUN_BLOOM, hdr->run_id,
										  payload.data, &len, &op, NULL);

	if (p)
	{
		problem(r, blk, "bloom page: %s", p);
		return true;
	}
	return wc_bloom_test(payload.data, hash);
}

static void
verify_run(Relation rel, WcRunSummary *run, Report *r)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	WcRunHeader hdr;
	const char *p;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	WcIndexEntry *entries = palloc(sizeof(WcIndexEntry) * WC_MAX_INDEX_ENTRIES);
	WcBlock		block = {0};
	char	   *prev = NULL;
	Size		prevcap = 0;
	WcRowHeader *prevrow = NULL;
	char		lastpk[WC_MAX_KEY_SIZE];
	int			lastpklen = -1;
	int64		tombstones = 0,
				partitions = 0,
				datapages = 0;
	char	   *hdrkeys = NULL;
	bool		first_row = true;
	BlockNumber lastvalue = InvalidBlockNumber;
	PGAlignedBlock vpayload;
	BlockNumber *valuedir;
	uint32		nvaluedir = 0,
				nvalues_seen = 0;

	if (run->header_block >= nblocks)
	{
		problem(r, run->header_block, "run header past the end of the relation");
		return;
	}
	p = wc_read_run_page_soft(rel, run->header_block, WC_PAGE_RUN_HEADER, run->run_id,
							  payload.data, &len, &op, NULL);
	r->pages++;
	if (p || len < sizeof(WcRunHeader))
	{
		problem(r, run->header_block, "run header: %s", p ? p : "too short");
		return;
	}
	memcpy(&hdr, payload.data, sizeof(WcRunHeader));
	if (sizeof(WcRunHeader) + hdr.min_key_len + hdr.max_key_len <= len)
	{
		hdrkeys = palloc(hdr.min_key_len + hdr.max_key_len + 1);
		memcpy(hdrkeys, payload.data + sizeof(WcRunHeader), hdr.min_key_len + hdr.max_key_len);
	}
	if (hdr.magic != WC_RUN_MAGIC || hdr.run_id != run->run_id ||
		hdr.leaf_first + hdr.nleaf_pages > nblocks ||
		hdr.bloom_first + hdr.nbloom_pages > nblocks ||
		hdr.valuedir_first + hdr.nvaluedir_pages > nblocks ||
		hdr.nvalue_pages > hdr.ndata_pages ||
		hdr.version != WC_RUN_VERSION ||
		sizeof(WcRunHeader) + hdr.min_key_len + hdr.max_key_len > len)
	{
		problem(r, run->header_block, "run header fields are inconsistent");
		return;
	}

	/* the value directory: every value page, in the order key pages refer to them */
	valuedir = palloc(sizeof(BlockNumber) * Max(hdr.nvalue_pages, 1));
	for (uint32 d = 0; d < hdr.nvaluedir_pages; d++)
	{
		BlockNumber vblks[WC_VALUEDIR_ENTRIES];
		uint32		got;

		r->pages++;
		p = wc_read_value_dir_soft(rel, &hdr, d, vblks, &got);
		if (p == NULL && nvaluedir + got > hdr.nvalue_pages)
			p = "more entries than the run has value pages";
		if (p)
		{
			problem(r, hdr.valuedir_first + d, "value directory: %s", p);
			continue;
		}
		memcpy(valuedir + nvaluedir, vblks, got * sizeof(BlockNumber));
		nvaluedir += got;
	}
	if (nvaluedir != hdr.nvalue_pages)
		problem(r, InvalidBlockNumber, "value directory lists %u value pages, summary says %u",
				nvaluedir, hdr.nvalue_pages);

	/* leaves, and through them every data block, in key order */
	for (BlockNumber leaf = hdr.leaf_first; leaf < hdr.leaf_first + hdr.nleaf_pages; leaf++)
	{
		PGAlignedBlock lpayload;
		WcPageOpaqueData lop;
		Size		llen;

		r->pages++;
		p = wc_read_run_page_soft(rel, leaf, WC_PAGE_RUN_INDEX, run->run_id,
								  lpayload.data, &llen, &lop, NULL);
		if (p == NULL && (lop.aux != 0 || !wc_parse_index_soft(lpayload.data, llen, lop.count, entries)))
			p = "malformed leaf index page";
		if (p)
		{
			problem(r, leaf, "%s", p);
			continue;
		}
		for (uint32 e = 0; e < lop.count; e++)
		{
			BlockNumber dblk = entries[e].child;
			WcRowHeader *first;

			datapages++;
			r->pages++;
			if (dblk >= nblocks)
			{
				problem(r, dblk, "data block past the end of the relation");
				continue;
			}
			p = wc_read_run_page_soft(rel, dblk, WC_PAGE_RUN_DATA, run->run_id,
									  payload.data, &len, &op, NULL);
			if (p == NULL)
				p = wc_decode_block(payload.data, len, &op, &block);
			if (p)
			{
				problem(r, dblk, "%s", p);
				prevrow = NULL;
				continue;
			}
			/* its value pages (the first may be the last one's too) */
			for (int v = 0; v < block.nvalues; v++)
			{
				BlockNumber vblk = block.values[v].blkno;

				if (vblk != lastvalue)
				{
					if (nvalues_seen >= nvaluedir || valuedir[nvalues_seen] != vblk)
						problem(r, dblk, "value page %u is not next in the value directory", vblk);
					nvalues_seen++;
					datapages++;
					r->pages++;
					lastvalue = vblk;
				}
				if (block.value_loaded[v])
					continue;	/* shared with the key page before, checked */
				p = (vblk >= nblocks) ? "value page past the end of the relation" :
					wc_read_run_page_soft(rel, vblk, WC_PAGE_RUN_VALUES, run->run_id,
										  vpayload.data, &len, &op, NULL);
				if (p == NULL)
					p = wc_decode_values(vpayload.data, len, &op, &block, v);
				if (p)
					problem(r, vblk, "value page: %s", p);
			}
			first = WcBlockRow(&block, 0);
			if (wc_compare_keys(WcRowKey(first), first->keylen,
								entries[e].key, entries[e].keylen) != 0)
				problem(r, dblk, "first key differs from its index entry");
			for (int i = 0; i < block.nrows; i++)
			{
				WcRowHeader *row = WcBlockRow(&block, i);

				if (prevrow && wc_compare_rows(prevrow, row) >= 0)
					problem(r, dblk, "row %d is out of order", i + 1);
				if (first_row &&
					wc_compare_keys(WcRowKey(row), row->keylen, hdrkeys, hdr.min_key_len) != 0)
					problem(r, dblk, "first row differs from the run's min key");
				first_row = false;
				r->rows++;
				if (WcRowIsTombstone(row))
					tombstones++;
				if (row->pklen > 0 &&
					(lastpklen < 0 || wc_compare_keys(WcRowKey(row), row->pklen, lastpk, lastpklen) != 0))
				{
					partitions++;
					memcpy(lastpk, WcRowKey(row), row->pklen);
					lastpklen = row->pklen;
					if (hdr.nbloom_pages > 0 && !bloom_has(rel, &hdr, lastpk, lastpklen, r))
						problem(r, dblk, "bloom filter misses partition of row %d", i + 1);
				}
				/* keep a copy: the next block overwrites the buffer */
				if (prevcap < row->len)
				{
					prevcap = Max(row->len, 256);
					prev = prev ? repalloc(prev, prevcap) : palloc(prevcap);
				}
				/* header and key are all the checks need */
				memcpy(prev, row, Min(row->len, WcRowTupleOffset(row->keylen)));
				prevrow = (WcRowHeader *) prev;
			}
		}
	}

	/* upper index levels and the bloom filter: readable, checksums right */
	for (BlockNumber b = hdr.leaf_first + hdr.nleaf_pages; b <= hdr.index_root; b++)
	{
		r->pages++;
		p = wc_read_run_page_soft(rel, b, WC_PAGE_RUN_INDEX, run->run_id,
								  payload.data, &len, &op, NULL);
		if (p)
			problem(r, b, "index page: %s", p);
	}
	if (nvalues_seen != nvaluedir)
		problem(r, InvalidBlockNumber, "key pages refer to %u value pages, the directory lists %u",
				nvalues_seen, nvaluedir);
	for (BlockNumber b = hdr.bloom_first; b < hdr.bloom_first + hdr.nbloom_pages; b++)
	{
		r->pages++;
		p = wc_read_run_page_soft(rel, b, WC_PAGE_RUN_BLOOM, run->run_id,
								  payload.data, &len, &op, NULL);
		if (p)
			problem(r, b, "bloom page: %s", p);
	}

	/* the summary must describe what is there */
	if (r->rows != hdr.nrows || hdr.nrows != run->nrows)
		problem(r, InvalidBlockNumber, "summary says %lld rows (manifest %lld), found %lld",
				(long long) hdr.nrows, (long long) run->nrows, (long long) r->rows);
	if (tombstones != hdr.ntombstones)
		problem(r, InvalidBlockNumber, "summary says %lld tombstones, found %lld",
				(long long) hdr.ntombstones, (long long) tombstones);
	if (partitions != hdr.npartitions)
		problem(r, InvalidBlockNumber, "summary says %lld partitions, found %lld",
				(long long) hdr.npartitions, (long long) partitions);
	if (datapages != hdr.ndata_pages)
		problem(r, InvalidBlockNumber, "summary says %u data pages, found %lld",
				hdr.ndata_pages, (long long) datapages);
	if (prevrow &&
		wc_compare_keys(WcRowKey(prevrow), prevrow->keylen,
						hdrkeys + hdr.min_key_len, hdr.max_key_len) != 0)
		problem(r, InvalidBlockNumber, "last row differs from the run's max key");
	if (run->min_key == NULL || run->max_key == NULL ||
		wc_compare_keys(VARDATA_ANY(run->min_key), VARSIZE_ANY_EXHDR(run->min_key),
						hdrkeys, hdr.min_key_len) != 0 ||
		wc_compare_keys(VARDATA_ANY(run->max_key), VARSIZE_ANY_EXHDR(run->max_key),
						hdrkeys + hdr.min_key_len, hdr.max_key_len) != 0)
		problem(r, InvalidBlockNumber, "manifest key range differs from the run header");
}

static void
verify_gen(Relation rel, const WcL0Gen *gen, Report *r)
{
	BlockNumber blk = gen->head;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	uint32		seen = 0;

	while (blk != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		OffsetNumber maxoff;

		if (blk >= nblocks || ++seen > gen->npages)
		{
			problem(r, blk, "level-0 chain leaves the relation or loops");
			return;
		}
		buf = ReadBuffer(rel, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		r->pages++;
		if (PageIsNew(page) || WcPageGetOpaque(page)->type != WC_PAGE_L0 ||
			WcPageGetOpaque(page)->segment != gen->gen)
		{
			UnlockReleaseBuffer(buf);
			problem(r, blk, "not a level-0 page of generation %llu", (unsigned long long) gen->gen);
			return;
		}
		maxoff = PageGetMaxOffsetNumber(page);
		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			WcRowHeader *row;

			if (!ItemIdIsNormal(iid))
				continue;
			row = (WcRowHeader *) PageGetItem(page, iid);
			r->rows++;
			if (!wc_l0_row_ok(row, ItemIdGetLength(iid)))
				problem(r, blk, "malformed row version at offset %u", off);
		}
		blk = WcPageGetOpaque(page)->aux;
		UnlockReleaseBuffer(buf);
	}
	if (seen != gen->npages)
		problem(r, InvalidBlockNumber, "metapage says %u pages, chain has %u", gen->npages, seen);
}

/*
 * Report a segment's result.  Damaged segments are recorded in
 * widecol.damage (so that maintenance leaves the table alone); returns
 * whether the segment was sound.
 */
static bool
emit(ReturnSetInfo *rsinfo, Relation rel, const char *kind, int64 id, Report *r,
	 bool record)
{
	Datum		values[6];
	bool		nulls[6] = {0};

	values[0] = CStringGetTextDatum(kind);
	values[1] = Int64GetDatum(id);
	values[2] = Int64GetDatum(r->pages);
	values[3] = Int64GetDatum(r->rows);
	values[4] = BoolGetDatum(r->nproblems == 0);
	if (r->nproblems > MAX_PROBLEMS)
		appendStringInfo(&r->problems, "; ... %d more", r->nproblems - MAX_PROBLEMS);
	values[5] = CStringGetTextDatum(r->problems.data);
	nulls[5] = r->nproblems == 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	if (r->nproblems > 0 && record)
	{
		WcDamage	d = {kind, (uint64) id, r->first_block, r->problems.data, 0};

		wc_damage_record(rel, &d);
	}
	return r->nproblems == 0;
}

PG_FUNCTION_INFO_V1(widecol_verify);
Datum
widecol_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	WcMetaData	meta;
	WcManifest *m;
	bool		sound = true;
	/* a standby or a read-only transaction only reports */
	bool		record = !RecoveryInProgress() && !XactReadOnly;

	InitMaterializedSRF(fcinfo, 0);
	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	wc_meta_read(rel, &meta);
	m = wc_manifest_read(meta.storage_id, GetActiveSnapshot());

	for (uint32 g = 0; g < meta.ngens; g++)
	{
		Report		r = {0};

		if (wc_manifest_gen_retired(m, meta.gens[g].gen))
			continue;
		initStringInfo(&r.problems);
		verify_gen(rel, &meta.gens[g], &r);
		sound &= emit(rsinfo, rel, "level0", (int64) meta.gens[g].gen, &r, record);
	}
	for (int i = 0; i < m->nruns; i++)
	{
		Report		r = {0};

		initStringInfo(&r.problems);
		verify_run(rel, &m->runs[i], &r);
		sound &= emit(rsinfo, rel, "run", (int64) m->runs[i].run_id, &r, record);
	}
	/* nothing wrong any more (repaired, or restored): maintenance may resume */
	if (sound && record)
		wc_damage_clear(rel);
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}
