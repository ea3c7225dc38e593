/*
 * storage/dictionary.c — a run's zstd dictionary; column chunks in frames
 * compressed with it (see dictionary.h).
 *
 * A framed chunk is: uint16 values per frame, uint16 frames, a uint16
 * length per frame, then the frames, each a zstd frame (content size in
 * its header, no dictionary id: the run has one dictionary).
 */
#include "postgres.h"

#include <zstd.h>
#include <zdict.h>

#include "utils/memutils.h"

#include "storage/cache.h"
#include "storage/compression.h"
#include "storage/dictionary.h"
#include "storage/page.h"
#include "storage/run.h"

bool		wc_compaction_zstd_dictionary = true;
bool		wc_ingest_zstd_dictionary = true;

#define TABLE_SIZE(nframes) ((Size) (2 + (nframes)) * sizeof(uint16))

static const char *read_dict_pages(const WcDictRef *ref, char **out, Size *outlen);

/*
 * Where the frames of a chunk of short varlenas end: bound[0] = 0 and
 * bound[f + 1] the end of frame f.  The number of frames, or -1 if the
 * chunk holds anything else (a value with a 4-byte header, padding).
 * bound needs room for rawlen / WC_DICT_FRAME_VALUES + 2 entries.
 */
static int
frame_bounds(const char *src, uint32 rawlen, uint32 *bound)
{
	uint32		pos = 0;
	int			nvalues = 0;
	int			nframes = 0;

	bound[0] = 0;
	while (pos < rawlen)
	{
		uint32		size;

		if (!VARATT_IS_1B(&src[pos]) || VARATT_IS_1B_E(&src[pos]))
			return -1;
		size = VARSIZE_1B(&src[pos]);
		if (pos + size > rawlen)
			return -1;
		pos += size;
		if (++nvalues % WC_DICT_FRAME_VALUES == 0)
			bound[++nframes] = pos;
	}
	if (nvalues % WC_DICT_FRAME_VALUES != 0)
		bound[++nframes] = pos;
	return nframes;
}

/* ---------- writing ---------- */

struct WcDictBuilder
{
	int			level;
	StringInfoData samples;		/* frames of the chunks seen so far */
	size_t	   *sizes;
	int			nsizes;
	int			capsizes;
	bool		failed;			/* training failed: no dictionary this run */
	char	   *dict;
	size_t		dictlen;
	ZSTD_CDict *cdict;			/* zstd's memory: freed with the context */
	ZSTD_CCtx  *cctx;
	bool		used;			/* a chunk was framed with it */
};

static void
builder_release(void *arg)
{
	WcDictBuilder *b = (WcDictBuilder *) arg;

	ZSTD_freeCCtx(b->cctx);
	ZSTD_freeCDict(b->cdict);
	b->cctx = NULL;
	b->cdict = NULL;
}

/*
 * A builder for one run's dictionary, in the current memory context (the
 * run writer's); what zstd allocates is freed when that context goes, on
 * error too.
 */
static WcDictBuilder *
builder_new(int level)
{
	WcDictBuilder *b = palloc0(sizeof(WcDictBuilder));
	MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));

	b->level = level;
	cb->func = builder_release;
	cb->arg = b;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return b;
}

/* ... that trains its dictionary on the run's first chunks. */
WcDictBuilder *
wc_dict_builder_create(int level)
{
	WcDictBuilder *b = builder_new(level);

	initStringInfo(&b->samples);
	b->capsizes = 1024;
	b->sizes = palloc(sizeof(size_t) * b->capsizes);
	return b;
}

/*
 * Ready to compress with b->dict at b->level, literals entropy-coded at a
 * fast level as the run's other chunks are (without, frames of a flush's
 * run at level -5 took half as much room again as one plain frame, and
 * none was kept); on failure the run goes without.
 */
static void
make_cdict(WcDictBuilder *b)
{
	int			level;

	b->cctx = ZSTD_createCCtx();
	level = b->cctx ? wc_zstd_setup_context(b->cctx, b->level) : -1000;
	if (level != -1000)
		b->cdict = ZSTD_createCDict(b->dict, b->dictlen, level);
	if (b->cdict == NULL || b->cctx == NULL ||
		ZSTD_isError(ZSTD_CCtx_refCDict(b->cctx, b->cdict)) ||
		ZSTD_isError(ZSTD_CCtx_setParameter(b->cctx, ZSTD_c_dictIDFlag, 0)))
	{
		builder_release(b);
		b->failed = true;
	}
}

/* Train on the samples; on failure the run is written without a dictionary. */
static void
train(WcDictBuilder *b)
{
	size_t		n;

	b->dict = palloc(WC_DICT_MAX_BYTES);
	n = ZDICT_trainFromBuffer(b->dict, WC_DICT_MAX_BYTES, b->samples.data, b->sizes,
							  (unsigned) b->nsizes);
	pfree(b->samples.data);
	pfree(b->sizes);
	b->samples.data = NULL;
	b->sizes = NULL;
	if (ZDICT_isError(n))
	{
		elog(DEBUG1, "widecol: no zstd dictionary for this run: %s", ZDICT_getErrorName(n));
		b->failed = true;
		return;
	}
	b->dictlen = n;
	make_cdict(b);
}

/*
 * A chunk of one column's values, src[0, rawlen), in frames compressed
 * with the run's dictionary into out[0, room): false if it cannot be (not
 * short varlenas, no dictionary yet, no room).  Until the dictionary is
 * trained the chunks it is asked for are its samples.
 */
bool
wc_dict_encode(WcDictBuilder *b, const char *src, uint32 rawlen, char *out, Size room,
			   Size *outlen)
{
	uint32	   *bound;
	int			nframes;
	Size		o;
	bool		ok = true;

	if (b == NULL || b->failed)
		return false;
	bound = palloc(sizeof(uint32) * (rawlen / WC_DICT_FRAME_VALUES + 2));
	nframes = frame_bounds(src, rawlen, bound);
	if (nframes <= 0 || nframes > PG_UINT16_MAX)
	{
		pfree(bound);
		return false;
	}
	if (b->cdict == NULL)
	{
		for (int f = 0; f < nframes; f++)
		{
			if (b->nsizes == b->capsizes)
			{
				b->capsizes *= 2;
				b->sizes = repalloc(b->sizes, sizeof(size_t) * b->capsizes);
			}
			b->sizes[b->nsizes++] = bound[f + 1] - bound[f];
		}
		appendBinaryStringInfo(&b->samples, src, rawlen);
		if (b->samples.len >= WC_DICT_TRAIN_BYTES)
			train(b);
		if (b->cdict == NULL)
		{
			pfree(bound);
			return false;
		}
	}
	o = TABLE_SIZE(nframes);
	if (o > room)
		ok = false;
	else
	{
		uint16		head[2] = {WC_DICT_FRAME_VALUES, (uint16) nframes};

		memcpy(out, head, sizeof(head));
	}
	for (int f = 0; f < nframes && ok; f++)
	{
		size_t		n = ZSTD_compress2(b->cctx, out + o, room - o, src + bound[f],
									   bound[f + 1] - bound[f]);
		uint16		n16 = (uint16) n;

		if (ZSTD_isError(n) || n > PG_UINT16_MAX)
			ok = false;
		else
		{
			memcpy(out + sizeof(uint16) * (2 + f), &n16, sizeof(n16));
			o += n;
		}
	}
	pfree(bound);
	if (ok)
		*outlen = o;
	return ok;
}

/* A value page keeps chunks framed with it: the run's extent gets the dictionary. */
void
wc_dict_mark_used(WcDictBuilder *b)
{
	b->used = true;
}

/* The run's dictionary, if a page kept chunks framed with it (else NULL). */
const char *
wc_dict_bytes(WcDictBuilder *b, uint32 *len)
{
	if (b == NULL || !b->used)
		return NULL;
	*len = (uint32) b->dictlen;
	return b->dict;
}

/*
 * A builder that compresses with the dictionary of another run of the
 * table (ref) from the first chunk on, for the run of a flush or a bulk
 * write: training would cost such a run a sixth of its write time (256 kB
 * of samples, 0.13-0.15 s), and the table's newest dictionary was trained on
 * the same columns.  The bytes are copied into the new run's own extent
 * (wc_dict_bytes), so it stays readable alone after the run it borrowed
 * from is merged away.  NULL if that dictionary cannot be read: the
 * damage is for whoever reads that run (its reads, verify), not for this
 * write, which goes without one.
 */
WcDictBuilder *
wc_dict_builder_borrow(const WcDictRef *ref, int level)
{
	WcDictBuilder *b;
	char	   *buf;
	Size		len;
	const char *problem = read_dict_pages(ref, &buf, &len);

	if (problem == NULL && ZDICT_getDictID(buf, len) == 0)
		problem = "run dictionary: not a zstd dictionary";
	if (problem)
	{
		elog(DEBUG1, "widecol: no zstd dictionary borrowed from run " UINT64_FORMAT ": %s",
			 ref->run_id, problem);
		return NULL;
	}
	b = builder_new(level);
	b->dict = buf;
	b->dictlen = len;
	make_cdict(b);
	return b;
}

/* ---------- reading ---------- */

typedef struct DictKey
{
	RelFileNode node;
	uint64		run_id;
} DictKey;

typedef struct DictEntry
{
	ZSTD_DDict *ddict;			/* zstd's memory, freed when dropped */
} DictEntry;

static WcCache *dict_cache = NULL;
static ZSTD_DCtx *dctx = NULL;

static void
release_dict(void *entry)
{
	DictEntry  *e = (DictEntry *) entry;

	ZSTD_freeDDict(e->ddict);
	e->ddict = NULL;
}

/*
 * The bytes of the run's dictionary, read from its pages and checked as
 * any run page (type, run, checksum), palloc'd into *out.  NULL or what is
 * wrong.
 */
static const char *
read_dict_pages(const WcDictRef *ref, char **out, Size *outlen)
{
	WcRunDict	d = ref->d;
	char	   *buf;
	Size		o = 0;

	/* a key page read without its run's reader does not know where it is */
	if (d.len == 0 && !wc_run_dict_location(ref->rel, ref->run_id, &d))
		return "column layout: a chunk in frames of a run no manifest lists";
	if (d.len == 0)
		return "column layout: a chunk in frames in a run without a dictionary";
	if (d.len > WC_DICT_MAX_BYTES ||
		d.npages != (d.len + WC_PAYLOAD_CAPACITY - 1) / WC_PAYLOAD_CAPACITY)
		return "run dictionary: invalid size";
	buf = palloc(d.npages * WC_PAYLOAD_CAPACITY);
	for (uint32 p = 0; p < d.npages; p++)
	{
		WcPageOpaqueData op;
		Size		len = 0;
		const char *problem = wc_read_run_page_soft(ref->rel, d.first + p, WC_PAGE_RUN_DICT,
													ref->run_id, buf + o, &len, &op, NULL);

		if (problem)
		{
			pfree(buf);
			return psprintf("run dictionary (block %u): %s", d.first + p, problem);
		}
		o += len;
	}
	if (o != d.len)
	{
		pfree(buf);
		return psprintf("run dictionary: %zu bytes where the run header says %u",
						o, d.len);
	}
	*out = buf;
	*outlen = o;
	return NULL;
}

/*
 * The run's dictionary, ready to decode with, kept by the backend (run
 * pages never change, and a run id is not reused within a storage).  NULL,
 * or what is wrong: its pages are read and checked as any run page.
 */
static const char *
run_ddict(const WcDictRef *ref, ZSTD_DDict **out)
{
	DictKey		key;
	DictEntry  *e;
	bool		found;
	char	   *buf;
	Size		o;
	ZSTD_DDict *ddict;
	const char *problem;

	if (ref == NULL || ref->rel == NULL)
		return "column layout: a chunk in frames read without its run";
	if (dict_cache == NULL)
		dict_cache = wc_cache_create("run dictionaries", sizeof(DictKey), sizeof(DictEntry),
									 &wc_run_page_cache_kb, 0, release_dict);
	if (dctx == NULL && (dctx = ZSTD_createDCtx()) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a zstd decompression context.")));
	memset(&key, 0, sizeof(key));
	key.node = ref->rel->rd_node;
	key.run_id = ref->run_id;
	e = wc_cache_lookup(dict_cache, &key, &found);
	if (found && e->ddict)
	{
		*out = e->ddict;
		return NULL;
	}
	e->ddict = NULL;
	problem = read_dict_pages(ref, &buf, &o);
	if (problem)
		return problem;
	ddict = ZSTD_createDDict(buf, o);
	pfree(buf);
	if (ddict == NULL || ZSTD_getDictID_fromDDict(ddict) == 0)
	{
		ZSTD_freeDDict(ddict);
		return "run dictionary: not a zstd dictionary";
	}
	e->ddict = ddict;
	wc_cache_account(dict_cache, e, sizeof(DictEntry) + ZSTD_sizeof_DDict(ddict));
	wc_cache_shrink(dict_cache, e);
	*out = ddict;
	return NULL;
}

/* A framed chunk's table: its frames' count, values per frame, where they start. */
static const char *
read_table(const char *src, Size len, uint16 *per_frame, uint16 *nframes)
{
	uint16		head[2];
	Size		total;

	if (len < sizeof(head))
		return "column layout: short chunk in frames";
	memcpy(head, src, sizeof(head));
	*per_frame = head[0];
	*nframes = head[1];
	total = TABLE_SIZE(*nframes);
	if (*per_frame == 0 || *nframes == 0 || total > len)
		return "column layout: invalid frame table";
	for (int f = 0; f < *nframes; f++)
	{
		uint16		n;

		memcpy(&n, src + sizeof(uint16) * (2 + f), sizeof(n));
		total += n;
	}
	if (total != len)
		return "column layout: frames do not fill their chunk";
	return NULL;
}

static const char *
decode_one(ZSTD_DDict *ddict, const char *frame, Size flen, char *dst, Size cap, Size *out)
{
	size_t		n = ZSTD_decompress_usingDDict(dctx, dst, cap, frame, flen, ddict);

	if (ZSTD_isError(n))
		return psprintf("column layout: %s", ZSTD_getErrorName(n));
	*out = n;
	return NULL;
}

/* Every frame of a framed chunk, into exactly dst[0, rawlen).  NULL or what is wrong. */
const char *
wc_dict_decode(const WcDictRef *ref, const char *src, Size len, char *dst, uint32 rawlen)
{
	uint16		per_frame;
	uint16		nframes;
	ZSTD_DDict *ddict;
	const char *problem = read_table(src, len, &per_frame, &nframes);
	Size		in = TABLE_SIZE(nframes);
	Size		o = 0;

	if (problem == NULL)
		problem = run_ddict(ref, &ddict);
	for (int f = 0; f < nframes && problem == NULL; f++)
	{
		uint16		n;
		Size		got = 0;

		memcpy(&n, src + sizeof(uint16) * (2 + f), sizeof(n));
		problem = decode_one(ddict, src + in, n, dst + o, rawlen - o, &got);
		in += n;
		o += got;
	}
	if (problem == NULL && o != rawlen)
		problem = "column layout: frames of the wrong size";
	return problem;
}

/*
 * The frame of a framed chunk holding its value number `value` (0-based)
 * into dst (cap bytes), its size into *outlen, and how many values of the
 * frame come before that one into *skip.  *frame_in_dst: the frame dst
 * holds (-1: none); if it is that one, dst and *outlen are left as they
 * are.  NULL or what is wrong.
 */
const char *
wc_dict_decode_frame(const WcDictRef *ref, const char *src, Size len, uint32 value,
					 char *dst, uint32 cap, uint32 *outlen, uint32 *skip,
					 int32 *frame_in_dst)
{
	uint16		per_frame;
	uint16		nframes;
	ZSTD_DDict *ddict;
	const char *problem = read_table(src, len, &per_frame, &nframes);
	uint32		frame;
	Size		in;
	Size		got = 0;
	uint16		n;

	if (problem)
		return problem;
	frame = value / per_frame;
	*skip = value % per_frame;
	if (frame >= nframes)
		return "column layout: a value past its chunk's frames";
	if (*frame_in_dst == (int32) frame)
		return NULL;
	*frame_in_dst = -1;
	if ((problem = run_ddict(ref, &ddict)) != NULL)
		return problem;
	in = TABLE_SIZE(nframes);
	for (uint32 f = 0; f < frame; f++)
	{
		memcpy(&n, src + sizeof(uint16) * (2 + f), sizeof(n));
		in += n;
	}
	memcpy(&n, src + sizeof(uint16) * (2 + frame), sizeof(n));
	problem = decode_one(ddict, src + in, n, dst, cap, &got);
	*outlen = (uint32) got;
	if (problem == NULL)
		*frame_in_dst = (int32) frame;
	return problem;
}

/* Can the run's dictionary be read and used (verify)?  NULL or what is wrong. */
const char *
wc_dict_check(const WcDictRef *ref)
{
	ZSTD_DDict *ddict;

	if (ref->d.len == 0)
		return NULL;
	return run_ddict(ref, &ddict);
}
