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
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "api/api.h"
#include "maintenance/damage.h"
#include "storage/bloom.h"
#include "storage/keyenc.h"
#include "storage/keyrange.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/row.h"
#include "storage/columns.h"
#include "storage/compression.h"
#include "storage/keypack.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

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
	if (!WcRunBloomBlocked(hdr))
		return wc_bloom_test(payload.data, hash, false);
	/* a damaged block is reported once, for its page (check_index_and_bloom) */
	return wc_bloom_block_problem(payload.data, len, hash, true) != NULL ||
		wc_bloom_test(payload.data, hash, true);
}

/* What verifying one run has seen so far. */
typedef struct RunCheck
{
	Relation	rel;
	WcTableInfo *info;
	WcRunSummary *run;
	Report	   *r;
	BlockNumber nblocks;
	WcRunHeader hdr;
	char	   *hdrkeys;		/* min key, then max key */
	StringInfoData hdrranges;	/* format 4: the header's key-column ranges */
	WcKeyRangeBuilder ranges;	/* the same, from the rows */
	BlockNumber *valuedir;		/* the value directory's entries */
	uint32		nvaluedir;
	uint32		nvalues_seen;	/* value pages the key pages referred to */
	BlockNumber lastvalue;
	bool		resync;			/* a key page failed: its value pages are unknown */
	uint32		bad_key_pages;	/* key pages that failed (their rows unseen) */
	BlockNumber bad_value;		/* the value page that failed last */
	WcBlock		block;
	char	   *prev;			/* header and key of the previous row */
	Size		prevcap;
	WcRowHeader *prevrow;
	bool		first_row;
	char		lastpk[WC_MAX_KEY_SIZE];
	int			lastpklen;
	int64		tombstones;
	int64		external;		/* versions with values out of line */
	int64		partitions;
	int64		datapages;
} RunCheck;

/* Format 4: the key-column ranges after the keys; false if they do not fit. */
static bool
header_ranges(RunCheck *c, const char *payload, Size len)
{
	Size		off = sizeof(WcRunHeader) + c->hdr.min_key_len + c->hdr.max_key_len;
	uint32		rlen;

	initStringInfo(&c->hdrranges);
	if (c->hdr.version < 4)
		return true;
	if (off + sizeof(rlen) > len)
		return false;
	memcpy(&rlen, payload + off, sizeof(rlen));
	if (off + sizeof(rlen) + rlen > len)
		return false;
	appendBinaryStringInfo(&c->hdrranges, payload + off + sizeof(rlen), rlen);
	return true;
}

/*
 * Run step(arg) in a subtransaction.  NULL if it succeeded; else the error
 * it raised, with the subtransaction rolled back (whatever the error: a
 * caller that takes some errors and rethrows others, nested in another
 * such call, must leave only its own level behind).
 */
static ErrorData *
in_subtransaction(void (*step) (void *), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		step(arg);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

typedef struct PageRead
{
	RunCheck   *c;
	BlockNumber blk;
	uint16		type;
	char	   *payload;
	Size	   *len;
	WcPageOpaqueData *op;
	const char *problem;
} PageRead;

static void
page_read_step(void *arg)
{
	PageRead   *pr = arg;

	pr->problem = wc_read_run_page_soft(pr->c->rel, pr->blk, pr->type, pr->c->run->run_id,
										pr->payload, pr->len, pr->op, NULL);
}

/*
 * wc_read_run_page_soft in a subtransaction: a page PostgreSQL itself
 * refuses on its way into shared buffers (a data checksum that fails, a
 * short read) becomes that page's problem, and verify goes on with the
 * run's other pages instead of ending the run's check there.  For the
 * pages verify reads once each (header, index, key, value, bloom pages);
 * a bloom probe per partition key reads unguarded.
 */
static const char *
guarded_read(RunCheck *c, BlockNumber blk, uint16 type, char *payload, Size *len,
			 WcPageOpaqueData *op)
{
	PageRead	pr = {c, blk, type, payload, len, op, NULL};
	ErrorData  *edata = in_subtransaction(page_read_step, &pr);

	if (edata == NULL)
		return pr.problem;
	if (edata->sqlerrcode != ERRCODE_DATA_CORRUPTED)
		ReThrowError(edata);
	return edata->message;
}

/* The run's header page; false if nothing more can be checked. */
static bool
check_header(RunCheck *c)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	WcRunHeader *hdr = &c->hdr;
	const char *p;

	if (c->run->header_block >= c->nblocks)
	{
		problem(c->r, c->run->header_block, "run header past the end of the relation");
		return false;
	}
	p = guarded_read(c, c->run->header_block, WC_PAGE_RUN_HEADER, payload.data, &len, &op);
	c->r->pages++;
	if (p || len < sizeof(WcRunHeader))
	{
		problem(c->r, c->run->header_block, "run header: %s", p ? p : "too short");
		return false;
	}
	memcpy(hdr, payload.data, sizeof(WcRunHeader));
	if (sizeof(WcRunHeader) + hdr->min_key_len + hdr->max_key_len <= len)
	{
		c->hdrkeys = palloc(hdr->min_key_len + hdr->max_key_len + 1);
		memcpy(c->hdrkeys, payload.data + sizeof(WcRunHeader), hdr->min_key_len + hdr->max_key_len);
	}
	if (hdr->magic != WC_RUN_MAGIC || hdr->run_id != c->run->run_id ||
		hdr->leaf_first + hdr->nleaf_pages > c->nblocks ||
		hdr->bloom_first + hdr->nbloom_pages > c->nblocks ||
		hdr->valuedir_first + hdr->nvaluedir_pages > c->nblocks ||
		hdr->nvalue_pages > hdr->ndata_pages ||
		hdr->version < WC_RUN_VERSION_MIN || hdr->version > WC_RUN_VERSION ||
		sizeof(WcRunHeader) + hdr->min_key_len + hdr->max_key_len > len ||
		!header_ranges(c, payload.data, len) ||
		!wc_run_header_dict(payload.data, len, hdr, &c->block.dict) ||
		(c->block.dict.len > 0 && c->block.dict.first + c->block.dict.npages > c->nblocks))
	{
		problem(c->r, c->run->header_block, "run header fields are inconsistent");
		return false;
	}
	return true;
}

/*
 * The run's dictionary (format 9): its pages read and checked, and zstd
 * takes it.  Value pages that use a damaged one are reported as well.
 */
static void
check_dict(RunCheck *c)
{
	WcDictRef	ref = {c->rel, c->run->run_id, c->block.dict};
	const char *p;

	if (ref.d.len == 0)
		return;
	c->r->pages += ref.d.npages;
	p = wc_dict_check(&ref);
	if (p)
		problem(c->r, ref.d.first, "%s", p);
}

/* The value directory: every value page, in the order key pages refer to them. */
static void
read_value_dir(RunCheck *c)
{
	c->valuedir = palloc(sizeof(BlockNumber) * Max(c->hdr.nvalue_pages, 1));
	for (uint32 d = 0; d < c->hdr.nvaluedir_pages; d++)
	{
		BlockNumber vblks[WC_VALUEDIR_ENTRIES];
		uint32		got;
		const char *p;

		c->r->pages++;
		p = wc_read_value_dir_soft(c->rel, &c->hdr, d, vblks, &got);
		if (p == NULL && c->nvaluedir + got > c->hdr.nvalue_pages)
			p = "more entries than the run has value pages";
		if (p)
		{
			problem(c->r, c->hdr.valuedir_first + d, "value directory: %s", p);
			continue;
		}
		memcpy(c->valuedir + c->nvaluedir, vblks, got * sizeof(BlockNumber));
		c->nvaluedir += got;
	}
	if (c->nvaluedir != c->hdr.nvalue_pages)
		problem(c->r, InvalidBlockNumber, "value directory lists %u value pages, summary says %u",
				c->nvaluedir, c->hdr.nvalue_pages);
}

/*
 * A page's codec must be one its run's format has: zstd since format 5
 * (a codec id no build writes is reported by the decoder).  NULL or what
 * is wrong.
 */
static const char *
codec_problem(RunCheck *c, uint16 flags)
{
	if (WcFlagsCodec(flags) == WC_CODEC_ZSTD && c->hdr.version < WC_RUN_VERSION_ZSTD)
		return psprintf("zstd page in a run of format %u", c->hdr.version);
	if ((flags & WC_VALUES_COLUMNS) && c->hdr.version < WC_RUN_VERSION_COLUMNS)
		return psprintf("value page in column layout in a run of format %u", c->hdr.version);
	return NULL;
}

/* ... of a key page's key block */
static const char *
key_codec_problem(RunCheck *c, uint16 flags)
{
	if ((flags & WC_KEYS_PACKED) && c->hdr.version < WC_RUN_VERSION_PACKED)
		return psprintf("packed key block in a run of format %u", c->hdr.version);
	if ((flags & WC_KEYS_STEPS) && c->hdr.version < WC_RUN_VERSION_STEPS)
		return psprintf("packed key block in steps in a run of format %u", c->hdr.version);
	return codec_problem(c, flags);
}

/* The value pages of the decoded key page dblk (the first may be the last one's too). */
static void
check_value_pages(RunCheck *c, BlockNumber dblk)
{
	PGAlignedBlock vpayload;
	WcPageOpaqueData op;
	Size		len;

	for (int v = 0; v < c->block.nvalues; v++)
	{
		BlockNumber vblk = c->block.values[v].blkno;
		const char *p;

		if (vblk != c->lastvalue && c->resync)
		{
			/*
			 * after a key page that failed, go on from this page's place in
			 * the directory (the pages skipped were that page's), rather
			 * than report every value page after it as out of place
			 */
			uint32		at = c->nvalues_seen;

			while (at < c->nvaluedir && c->valuedir[at] != vblk)
				at++;
			if (at < c->nvaluedir)
			{
				c->datapages += at - c->nvalues_seen;
				c->r->pages += at - c->nvalues_seen;
				c->nvalues_seen = at;
			}
		}
		c->resync = false;
		if (vblk != c->lastvalue)
		{
			if (c->nvalues_seen >= c->nvaluedir || c->valuedir[c->nvalues_seen] != vblk)
				problem(c->r, dblk, "value page %u is not next in the value directory", vblk);
			c->nvalues_seen++;
			c->datapages++;
			c->r->pages++;
			c->lastvalue = vblk;
		}
		if (c->block.value_loaded[v] || vblk == c->bad_value)
			continue;			/* shared with the key page before, checked */
		p = (vblk >= c->nblocks) ? "value page past the end of the relation" :
			guarded_read(c, vblk, WC_PAGE_RUN_VALUES, vpayload.data, &len, &op);
		if (p == NULL)
			p = codec_problem(c, op.flags);
		if (p == NULL)
			p = wc_decode_values(vpayload.data, len, &op, &c->block, v);
		if (p)
		{
			problem(c->r, vblk, "value page: %s", p);
			c->bad_value = vblk;	/* once, not again for the next key page */
		}
	}
}

/* The rows of the decoded key page dblk: order, bloom filter, counts. */
static void
check_rows(RunCheck *c, BlockNumber dblk, const WcIndexEntry *entry)
{
	WcRowHeader *first = WcBlockRow(&c->block, 0);

	if (wc_compare_keys(WcRowKey(first), first->keylen, entry->key, entry->keylen) != 0)
		problem(c->r, dblk, "first key differs from its index entry");
	for (int i = 0; i < c->block.nrows; i++)
	{
		WcRowHeader *row = WcBlockRow(&c->block, i);

		if (c->prevrow && wc_compare_rows(c->prevrow, row) >= 0)
			problem(c->r, dblk, "row %d is out of order", i + 1);
		if (c->first_row &&
			wc_compare_keys(WcRowKey(row), row->keylen, c->hdrkeys, c->hdr.min_key_len) != 0)
			problem(c->r, dblk, "first row differs from the run's min key");
		c->first_row = false;
		c->r->rows++;
		{
			const char *p = wc_key_problem(c->info, WcRowKey(row), row->keylen, row->pklen);

			if (p)
				problem(c->r, dblk, "%s in row %d", p, i + 1);
			else
				wc_key_ranges_add(&c->ranges, c->info, WcRowKey(row), row->keylen);
		}
		if (WcRowIsTombstone(row))
			c->tombstones++;
		if (row->flags & WC_ROW_EXTERNAL)
			c->external++;
		if (row->pklen > 0 &&
			(c->lastpklen < 0 || wc_compare_keys(WcRowKey(row), row->pklen, c->lastpk, c->lastpklen) != 0))
		{
			c->partitions++;
			memcpy(c->lastpk, WcRowKey(row), row->pklen);
			c->lastpklen = row->pklen;
			if (c->hdr.nbloom_pages > 0 && !bloom_has(c->rel, &c->hdr, c->lastpk, c->lastpklen, c->r))
				problem(c->r, dblk, "bloom filter misses partition of row %d", i + 1);
		}
		/* keep a copy: the next block overwrites the buffer */
		if (c->prevcap < row->len)
		{
			c->prevcap = Max(row->len, 256);
			c->prev = c->prev ? repalloc(c->prev, c->prevcap) : palloc(c->prevcap);
		}
		/* header and key are all the checks need */
		memcpy(c->prev, row, Min(row->len, WcRowTupleOffset(row->keylen)));
		c->prevrow = (WcRowHeader *) c->prev;
	}
}

static bool
same_key(const WcRowHeader *a, const WcRowHeader *b)
{
	return wc_compare_keys(WcRowKey(a), a->keylen, WcRowKey(b), b->keylen) == 0;
}

/*
 * A key page its leaf entry counts as settled (WC_LEAF_COUNTS): that many
 * rows, each frozen, live and the only version of its key (the previous
 * page's last row included), or partition deletes would count wrongly.
 */
static void
check_settled(RunCheck *c, BlockNumber dblk, uint32 count)
{
	const WcRowHeader *prev = c->prevrow;

	if (count == WC_UNSETTLED)
		return;
	if (count != (uint32) c->block.nrows)
	{
		problem(c->r, dblk, "leaf entry counts %u settled rows, the page holds %d",
				count, c->block.nrows);
		return;
	}
	for (int i = 0; i < c->block.nrows; i++)
	{
		const WcRowHeader *row = WcBlockRow(&c->block, i);

		if (!WcRowIsSettledLive(row) || (prev && same_key(prev, row)))
		{
			problem(c->r, dblk, "row %d of a page counted as settled is not", i + 1);
			return;
		}
		prev = row;
	}
}

/*
 * A leaf entry's value hint (run format 13): it names the key page's value
 * pages, and for the key of every row with a tuple (the only version of its
 * key on the page) the value page that tuple is in.  Reads only use hints
 * as advice, but a wrong one would cost every lookup of its keys a read.
 */
static void
check_hint(RunCheck *c, BlockNumber dblk, const WcIndexEntry *e)
{
	BlockNumber blocks[WC_MAX_VALUE_REFS];
	int			n;

	if (e->hint == NULL)
		return;
	n = wc_hint_pages(e->hint, blocks);
	if (n != c->block.nvalues)
	{
		problem(c->r, dblk, "value hint names %d value pages, the key page %d",
				n, c->block.nvalues);
		return;
	}
	for (int j = 0; j < n; j++)
		if (blocks[j] != c->block.values[j].blkno)
		{
			problem(c->r, dblk, "value hint names block %u for value page %d, where the key page names %u",
					blocks[j], j + 1, c->block.values[j].blkno);
			return;
		}
	for (int i = 0; i < c->block.nrows; i++)
	{
		const WcRowHeader *row = WcBlockRow(&c->block, i);
		int			v = wc_block_row_value_page(&c->block, row);

		if (v < 0 || (i > 0 && same_key(row, WcBlockRow(&c->block, i - 1))) ||
			(i + 1 < c->block.nrows && same_key(row, WcBlockRow(&c->block, i + 1))))
			continue;
		if (wc_hinted_value_page(e->hint, WcRowKey(row), row->keylen) != blocks[v])
		{
			problem(c->r, dblk, "value hint names the wrong value page for row %d", i + 1);
			return;
		}
	}
}

/* Leaves, and through them every key page and its value pages, in key order. */
static void
check_leaves(RunCheck *c)
{
	WcIndexEntry *entries = palloc(sizeof(WcIndexEntry) * WC_MAX_INDEX_ENTRIES);
	uint32	   *counts = palloc(sizeof(uint32) * WC_MAX_INDEX_ENTRIES);

	for (BlockNumber leaf = c->hdr.leaf_first; leaf < c->hdr.leaf_first + c->hdr.nleaf_pages; leaf++)
	{
		PGAlignedBlock lpayload;
		WcPageOpaqueData lop;
		Size		llen;
		const char *p;

		c->r->pages++;
		p = guarded_read(c, leaf, WC_PAGE_RUN_INDEX, lpayload.data, &llen, &lop);
		if (p == NULL && (lop.aux != 0 || !wc_parse_index_soft(lpayload.data, llen, lop.count, entries)))
			p = "malformed leaf index page";
		if (p == NULL)
			p = wc_leaf_counts_soft(lpayload.data, llen, lop.count, entries, lop.flags, counts);
		if (p == NULL)
			p = wc_leaf_hints_soft(lpayload.data, llen, lop.count, entries, lop.flags);
		if (p == NULL && c->hdr.version >= WC_RUN_VERSION_HINTS && !(lop.flags & WC_LEAF_HINTS))
			p = "leaf index page without value hints";
		if (p)
		{
			problem(c->r, leaf, "%s", p);
			continue;
		}
		for (uint32 e = 0; e < lop.count; e++)
		{
			BlockNumber dblk = entries[e].child;
			PGAlignedBlock payload;
			WcPageOpaqueData op;
			Size		len;

			c->datapages++;
			c->r->pages++;
			if (dblk >= c->nblocks)
			{
				problem(c->r, dblk, "data block past the end of the relation");
				continue;
			}
			p = guarded_read(c, dblk, WC_PAGE_RUN_DATA, payload.data, &len, &op);
			if (p == NULL && len >= sizeof(WcKeyPageHeader))
				p = key_codec_problem(c, ((WcKeyPageHeader *) payload.data)->flags);
			if (p == NULL)
				p = wc_decode_block(payload.data, len, &op, &c->block);
			if (p)
			{
				problem(c->r, dblk, "%s", p);
				c->prevrow = NULL;
				c->first_row = false;	/* if it was this page's, it is gone */
				c->resync = true;
				c->bad_key_pages++;
				continue;
			}
			check_hint(c, dblk, &entries[e]);
			check_value_pages(c, dblk);
			check_settled(c, dblk, counts[e]);
			check_rows(c, dblk, &entries[e]);
		}
	}
}

/* Upper index levels and the bloom filter: readable, checksums right. */
static void
check_index_and_bloom(RunCheck *c)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	const char *p;
	int			bad;

	for (BlockNumber b = c->hdr.leaf_first + c->hdr.nleaf_pages; b <= c->hdr.index_root; b++)
	{
		c->r->pages++;
		p = guarded_read(c, b, WC_PAGE_RUN_INDEX, payload.data, &len, &op);
		if (p)
			problem(c->r, b, "index page: %s", p);
	}
	for (BlockNumber b = c->hdr.bloom_first; b < c->hdr.bloom_first + c->hdr.nbloom_pages; b++)
	{
		c->r->pages++;
		p = guarded_read(c, b, WC_PAGE_RUN_BLOOM, payload.data, &len, &op);
		if (p)
			problem(c->r, b, "bloom page: %s", p);
		else if (WcRunBloomBlocked(&c->hdr) && len != WC_PAYLOAD_CAPACITY)
			problem(c->r, b, "bloom page of the wrong length");
		else if (WcRunBloomBlocked(&c->hdr) && (bad = wc_bloom_bad_block(payload.data)) >= 0)
			problem(c->r, b, "bloom page: block %d checksum mismatch", bad);
	}
}

/*
 * Key-column ranges (format 4): the header's are those of the rows, exactly,
 * and the manifest's the header's; a run of format 3 has none.
 */
static void
check_key_ranges(RunCheck *c)
{
	StringInfoData found;
	bytea	   *m = c->run->key_ranges;

	initStringInfo(&found);
	wc_key_ranges_serialize(&c->ranges, &found);
	if (c->hdr.version >= 4 &&
		(found.len != c->hdrranges.len || memcmp(found.data, c->hdrranges.data, found.len) != 0))
		problem(c->r, InvalidBlockNumber, "key-column ranges in the run header differ from its rows");
	if ((m == NULL) != (c->hdrranges.len == 0) ||
		(m && (VARSIZE_ANY_EXHDR(m) != c->hdrranges.len ||
			   memcmp(VARDATA_ANY(m), c->hdrranges.data, c->hdrranges.len) != 0)))
		problem(c->r, InvalidBlockNumber, "manifest key-column ranges differ from the run header");
	else if (m && c->run->ranges == NULL)
		problem(c->r, InvalidBlockNumber, "malformed key-column ranges");
}

/* The summary (header and manifest) must describe what is there. */
static void
check_summary(RunCheck *c)
{
	WcRunHeader *hdr = &c->hdr;
	WcRunSummary *run = c->run;
	Report	   *r = c->r;

	if (run->min_key == NULL || run->max_key == NULL ||
		wc_compare_keys(VARDATA_ANY(run->min_key), VARSIZE_ANY_EXHDR(run->min_key),
						c->hdrkeys, hdr->min_key_len) != 0 ||
		wc_compare_keys(VARDATA_ANY(run->max_key), VARSIZE_ANY_EXHDR(run->max_key),
						c->hdrkeys + hdr->min_key_len, hdr->max_key_len) != 0)
		problem(r, InvalidBlockNumber, "manifest key range differs from the run header");

	/*
	 * The counts and key ranges of the rows seen cannot match the summary
	 * when key pages failed: those are reported, not what follows from them
	 */
	if (c->bad_key_pages > 0)
		return;
	if (c->nvalues_seen != c->nvaluedir)
		problem(r, InvalidBlockNumber, "key pages refer to %u value pages, the directory lists %u",
				c->nvalues_seen, c->nvaluedir);
	if (r->rows != hdr->st.nrows || hdr->st.nrows != run->st.nrows)
		problem(r, InvalidBlockNumber, "summary says %lld rows (manifest %lld), found %lld",
				(long long) hdr->st.nrows, (long long) run->st.nrows, (long long) r->rows);
	if (c->tombstones != hdr->st.ntombstones)
		problem(r, InvalidBlockNumber, "summary says %lld tombstones, found %lld",
				(long long) hdr->st.ntombstones, (long long) c->tombstones);
	if (c->external != hdr->st.nexternal)
		problem(r, InvalidBlockNumber, "summary says %lld versions with values out of line, found %lld",
				(long long) hdr->st.nexternal, (long long) c->external);
	if (c->partitions != hdr->st.npartitions)
		problem(r, InvalidBlockNumber, "summary says %lld partitions, found %lld",
				(long long) hdr->st.npartitions, (long long) c->partitions);
	if (c->datapages != hdr->ndata_pages)
		problem(r, InvalidBlockNumber, "summary says %u data pages, found %lld",
				hdr->ndata_pages, (long long) c->datapages);
	if (c->prevrow &&
		wc_compare_keys(WcRowKey(c->prevrow), c->prevrow->keylen,
						c->hdrkeys + hdr->min_key_len, hdr->max_key_len) != 0)
		problem(r, InvalidBlockNumber, "last row differs from the run's max key");
	check_key_ranges(c);
}

/* Every page of a run, and its summary. */
static void
verify_run(Relation rel, WcRunSummary *run, Report *r)
{
	RunCheck	c = {0};

	c.rel = rel;
	c.info = wc_table_info(rel);
	c.run = run;
	c.r = r;
	c.nblocks = RelationGetNumberOfBlocks(rel);
	c.lastvalue = InvalidBlockNumber;
	c.bad_value = InvalidBlockNumber;
	c.first_row = true;
	c.lastpklen = -1;
	wc_key_ranges_begin(&c.ranges, c.info);
	if (!check_header(&c))
		return;
	c.block.rel = rel;
	c.block.run_id = run->run_id;
	c.block.dict_run = run->run_id;
	check_dict(&c);
	read_value_dir(&c);
	check_leaves(&c);
	check_index_and_bloom(&c);
	check_summary(&c);
}

static void
verify_gen(Relation rel, const WcL0Gen *gen, Report *r)
{
	WcTableInfo *info = wc_table_info(rel);
	BlockNumber blk = gen->head;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	uint32		seen = 0;
	bool		seen_tail = gen->head == InvalidBlockNumber;
	PGAlignedBlock copy;

	while (blk != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page = (Page) copy.data;
		const char *p;

		if (blk == WC_META_BLOCK || blk >= nblocks || ++seen > gen->npages)
		{
			problem(r, blk, "level-0 chain leaves the relation or loops");
			return;
		}
		buf = ReadBuffer(rel, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(copy.data, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		r->pages++;
		if (blk == gen->tail && seen != gen->npages)
			problem(r, blk, "level-0 chain skips pages");
		seen_tail |= blk == gen->tail;
		if ((p = wc_l0_page_problem(page, gen->gen)) != NULL)
		{
			problem(r, blk, "%s (generation %llu)", p, (unsigned long long) gen->gen);
			return;				/* its link to the next page is not to be trusted */
		}
		for (OffsetNumber off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
		{
			WcRowHeader *row;

			r->rows++;
			if ((p = wc_l0_item_problem(page, off, &row)) == NULL)
				p = wc_key_problem(info, WcRowKey(row), row->keylen, row->pklen);
			if (p)
				problem(r, blk, "%s at offset %u", p, off);
		}
		blk = WcPageGetOpaque(page)->aux;
	}
	if (!seen_tail)
		problem(r, InvalidBlockNumber, "level-0 chain ends before its tail (block %u)", gen->tail);
	if (seen != gen->npages)
		problem(r, InvalidBlockNumber, "metapage says %u pages, chain has %u", gen->npages, seen);
}

/*
 * Check one segment (a run, or a level-0 generation) in a subtransaction:
 * an error on the way (a page PostgreSQL itself refuses, a check the read
 * path makes and this file does not) becomes a problem of that segment,
 * and verify goes on with the next one.  Cancels and other errors go on.
 */
typedef struct SegmentCheck
{
	Relation	rel;
	WcRunSummary *run;
	const WcL0Gen *gen;
	Report	   *r;
} SegmentCheck;

static void
segment_step(void *arg)
{
	SegmentCheck *sc = arg;

	if (sc->run)
		verify_run(sc->rel, sc->run, sc->r);
	else
		verify_gen(sc->rel, sc->gen, sc->r);
}

static void
verify_guarded(Relation rel, WcRunSummary *run, const WcL0Gen *gen, Report *r)
{
	SegmentCheck sc = {rel, run, gen, r};
	ErrorData  *edata = in_subtransaction(segment_step, &sc);
	WcCorruption note;

	if (edata == NULL)
		return;
	if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_INTERNAL_ERROR)
		ReThrowError(edata);
	problem(r, wc_take_corruption(RelationGetRelid(rel), &note) ? note.block : InvalidBlockNumber,
			"%s", edata->message);
	FreeErrorData(edata);
}

/*
 * Report a segment's result.  Damaged segments are recorded in
 * widecol.damage (so that maintenance leaves the table alone); returns
 * whether the segment was sound.
 */
static bool
emit(ReturnSetInfo *rsinfo, Relation rel, const char *kind, int64 id, Report *r,
	 bool record, bool partition)
{
	Datum		values[6];
	bool		nulls[6] = {0};

	/* through a partitioned table: which partition's segment */
	values[0] = CStringGetTextDatum(partition ?
									psprintf("%s %s", RelationGetRelationName(rel), kind) : kind);
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

/*
 * A range tombstone's manifest row: a partition key of the table's
 * partition columns (its encodings walked as a key is), bounds in order.
 */
static void
verify_range_tombstone(Relation rel, const WcRangeTombstone *rt, Report *r)
{
	r->rows = rt->nrows;
	if (rt->pklen == 0)
		problem(r, InvalidBlockNumber, "range tombstone without a partition key");
	if (rt->lo && rt->hi &&
		wc_compare_keys(rt->lo, Min(rt->lolen, rt->hilen), rt->hi, Min(rt->lolen, rt->hilen)) > 0)
		problem(r, InvalidBlockNumber, "range tombstone bounds out of order");
	if (rt->write_ts <= 0)
		problem(r, InvalidBlockNumber, "range tombstone without a write time");
}

/* Every segment of one widecol table, a row each. */
static void
verify_table(ReturnSetInfo *rsinfo, Relation rel, bool partition)
{
	WcMetaData	meta;
	WcManifest *m;
	bool		sound = true;
	/* a standby or a read-only transaction only reports */
	bool		record = !RecoveryInProgress() && !XactReadOnly;

	m = wc_visible_manifest(rel, &meta);

	for (uint32 g = 0; g < meta.ngens; g++)
	{
		Report		r = {0};

		if (wc_manifest_gen_retired(m, meta.gens[g].gen))
			continue;
		initStringInfo(&r.problems);
		verify_guarded(rel, NULL, &meta.gens[g], &r);
		sound &= emit(rsinfo, rel, "level0", (int64) meta.gens[g].gen, &r, record, partition);
	}
	for (int i = 0; i < m->nruns; i++)
	{
		Report		r = {0};

		initStringInfo(&r.problems);
		verify_guarded(rel, &m->runs[i], NULL, &r);
		sound &= emit(rsinfo, rel, "run", (int64) m->runs[i].run_id, &r, record, partition);
	}
	for (int i = 0; i < m->nrts; i++)
	{
		Report		r = {0};

		initStringInfo(&r.problems);
		verify_range_tombstone(rel, &m->rts[i], &r);
		sound &= emit(rsinfo, rel, "range_tombstone", (int64) m->rts[i].id, &r, record, partition);
	}
	/* nothing wrong any more (repaired, or restored): maintenance may resume */
	if (sound && record)
		wc_damage_clear(rel);
}

PG_FUNCTION_INFO_V1(widecol_verify);
Datum
widecol_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *members;
	ListCell   *lc;
	bool		partitioned = get_rel_relkind(PG_GETARG_OID(0)) == RELKIND_PARTITIONED_TABLE;

	InitMaterializedSRF(fcinfo, 0);
	members = wc_widecol_members(fcinfo);
	foreach(lc, members)
	{
		Relation	rel = wc_open_widecol_oid(fcinfo, lfirst_oid(lc), AccessShareLock, false);

		verify_table(rsinfo, rel, partitioned);
		table_close(rel, AccessShareLock);
	}
	return (Datum) 0;
}
