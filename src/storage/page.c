/*
 * page.c — what every widecol page shares: its special space, its checks,
 * its checksum, a FREE page, a new page at the end of the relation; and the
 * note the read path leaves when a page fails its checks (for maintenance,
 * which records damaged tables: maintenance/damage.c).
 */
#include "postgres.h"

#include <fcntl.h>
#include <isa-l/crc.h>

#include "access/xlog.h"
#include "common/relpath.h"
#include "port/pg_crc32c.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/wait_event.h"

#include "widecol.h"
#include "storage/metapage.h"
#include "storage/page.h"

/*
 * CRC-32C of a run page's payload and identity.  The payload's part by
 * ISA-L, which folds with carry-less multiplies: 0.15 us for 8 kB in the
 * CPU's cache against 0.82 for PostgreSQL's one crc32 instruction at a
 * time (0.86 against 1.6 from memory), and every read of a run page checks
 * one.  The same CRC, so pages written before check the same.
 */
uint32
wc_page_crc(Page page)
{
	WcPageOpaque op = WcPageGetOpaque(page);
	pg_crc32c	crc;
	Size		len = ((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData);

	INIT_CRC32C(crc);
	crc = crc32_iscsi((unsigned char *) PageGetContents(page), (int) len, crc);
	COMP_CRC32C(crc, &op->segment, sizeof(op->segment));
	COMP_CRC32C(crc, &op->count, sizeof(op->count));
	COMP_CRC32C(crc, &op->aux, sizeof(op->aux));
	FIN_CRC32C(crc);
	return crc;
}

/* a GUC of bufpage.c that PostgreSQL 15's headers do not declare */
extern PGDLLIMPORT bool ignore_checksum_failure;

/*
 * Do PostgreSQL's data checksums already vouch for a run page in shared
 * buffers?  With them on, every page read from storage is verified before
 * it becomes valid there (a page that fails raises an error and stays
 * out), so a query's reads skip the second checksum over the same bytes:
 * the CRC of each key and value page they decode.  Not while
 * ignore_checksum_failure lets damaged pages in (then a damaged value page
 * would decode into wrong values, 004_corruption.pl).  widecol.verify()
 * and the other reads of whole pages check the CRC always.
 */
bool
wc_page_crc_covered(void)
{
	return DataChecksumsEnabled() && !ignore_checksum_failure;
}

void
wc_check_page(Relation rel, Buffer buf, uint16 expected_type)
{
	Page		page = BufferGetPage(buf);

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) ||
		WcPageGetOpaque(page)->type != expected_type)
	{
		wc_note_corruption(rel, expected_type == WC_PAGE_META ? "metapage" : "level0", 0,
						   BufferGetBlockNumber(buf));
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("widecol: unexpected page in block %u of relation \"%s\"",
						BufferGetBlockNumber(buf), RelationGetRelationName(rel)),
				 errdetail("Expected page type %d, found %d.", expected_type,
						   PageIsNew(page) ? 0 : WcPageGetOpaque(page)->type)));
	}
}

/* An empty page of type FREE. */
void
wc_page_init_free(Page page)
{
	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	WcPageGetOpaque(page)->type = WC_PAGE_FREE;
}

/*
 * Ask the kernel for blocks [first, first + n) of the relation's main fork
 * in one request per 1 GB segment (posix_fadvise WILLNEED through
 * FilePrefetch): it reads a range in a few large reads where a
 * PrefetchBuffer per block would ask for each block by itself.  Advice
 * only: nothing waits for it, and a file that cannot be opened is skipped.
 */
void
wc_read_ahead(Relation rel, BlockNumber first, BlockNumber n)
{
	char	   *path = relpath(RelationGetSmgr(rel)->smgr_rnode, MAIN_FORKNUM);

	while (n > 0)
	{
		BlockNumber segno = first / RELSEG_SIZE;
		BlockNumber start = first % RELSEG_SIZE;
		BlockNumber count = Min(n, RELSEG_SIZE - start);
		char	   *segpath = segno == 0 ? path : psprintf("%s.%u", path, segno);
		File		file = PathNameOpenFile(segpath, O_RDONLY | PG_BINARY);

		if (file >= 0)
		{
			(void) FilePrefetch(file, (off_t) start * BLCKSZ, (int) Min((uint64) count * BLCKSZ, PG_INT32_MAX),
								WAIT_EVENT_DATA_FILE_PREFETCH);
			FileClose(file);
		}
		if (segpath != path)
			pfree(segpath);
		first += count;
		n -= count;
	}
	pfree(path);
}

/*
 * A new, zeroed, exclusively locked page at the end of the relation.  It is
 * locked before anyone else can see it (RBM_ZERO_AND_LOCK): a zeroed page
 * nobody holds is one whose writer failed, free for reuse (see "Leaked
 * pages" in src/README.md).
 */
Buffer
wc_extend_page(Relation rel, BufferAccessStrategy strategy)
{
	Buffer		buf;

	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK, strategy);
	UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
}

/*
 * A page of a run's extent, taken before its contents are written: it
 * carries the run id, so that the pages of a writer that fails are found
 * again by it.  Not WAL-logged: the page is written whole, logged, soon after.
 */
void
wc_stamp_extent_page(Page page, uint64 run_id)
{
	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	WcPageGetOpaque(page)->type = WC_PAGE_RUN_EXTENT;
	WcPageGetOpaque(page)->segment = run_id;
}

/* What the last corruption error of this backend was about. */
static struct
{
	bool		valid;
	Oid			relid;
	RelFileNode node;
	const char *segment;
	uint64		id;
	BlockNumber block;
}			last;

void
wc_note_corruption(Relation rel, const char *segment, uint64 id, BlockNumber blk)
{
	last.valid = true;
	last.relid = RelationGetRelid(rel);
	last.node = rel->rd_node;
	last.segment = segment;
	last.id = id;
	last.block = blk;
}

/* The corruption noted for relid since the last call, if any. */
bool
wc_take_corruption(Oid relid, WcCorruption *out)
{
	bool		ok = last.valid && last.relid == relid;

	if (ok)
	{
		out->segment = last.segment;
		out->id = last.id;
		out->block = last.block;
	}
	last.valid = false;
	return ok;
}
