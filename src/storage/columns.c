/*
 * storage/columns.c — value pages in column layout (see columns.h).
 *
 * The tuples of a value page are minimal tuples, each at a MAXALIGNed
 * offset, with zeroed padding (runwrite.c).  In column layout chunk 0
 * holds, per tuple, its t_len, t_infomask2, t_infomask, t_hoff and null
 * bitmap; chunk 1 + a the stored bytes of column a of every tuple that has
 * a value there, each placed as heap_fill_tuple places a value (short and
 * external varlenas unaligned, everything else at its alignment, zeroes
 * between).  Putting the values back into tuples by the same rule gives
 * the same bytes; the writer checks that it does before it uses the layout.
 */
#include "postgres.h"

#include <lz4.h>

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "utils/memutils.h"

#include "storage/columns.h"

int			wc_compaction_value_layout = WC_LAYOUT_COLUMNS;
int			wc_ingest_value_layout = WC_LAYOUT_COLUMNS;

/* chunk 0, per tuple: t_len, t_infomask2, t_infomask, t_hoff, bitmap */
#define HDR_FIXED (sizeof(uint32) + 2 * sizeof(uint16) + sizeof(uint8))
#define MAX_CHUNK_RAW (4 * 64 * 1024)
#define WC_COLUMNS_SMALL_CHUNK 2048

/* test only: every page rebuilt and compared, the per-tuple check's verdict an ERROR if it differs */
bool		wc_debug_check_columns = false;

/* pages of a run rebuilt and compared whole: the first few, then one in 16 */
#define WC_COLUMNS_VERIFY_FIRST 4
#define WC_COLUMNS_VERIFY_EVERY 16

typedef struct ColumnInfo
{
	int16		attlen;
	char		attalign;
	bool		byval;
} ColumnInfo;

/* Where a value goes at `off` (in a tuple's data or a chunk). */
static inline uint32
place_value(uint32 off, const ColumnInfo *c, const char *value)
{
	if (c->attlen == -2 || (c->attlen == -1 && VARATT_IS_1B(value)))
		return off;
	return att_align_nominal(off, c->attalign);
}

/* Where the value stored at `off` of `data` starts (as deforming finds it). */
static inline uint32
find_value(uint32 off, const ColumnInfo *c, const char *data)
{
	if (c->attlen == -1)
		return att_align_pointer(off, c->attalign, -1, data + off);
	return att_align_nominal(off, c->attalign);
}

/*
 * Size of the value at data[pos] (pos < len) of a column, 0 if it does not
 * fit in data[0, len) (corrupt input stops here, never reads past len).
 */
static inline uint32
value_size(const ColumnInfo *c, const char *data, uint32 pos, uint32 len)
{
	const char *p = data + pos;
	uint32		avail = len - pos;
	uint32		size;

	if (c->attlen > 0)
		size = c->attlen;
	else if (c->attlen == -1)
	{
		if ((VARATT_IS_1B_E(p) && avail < 2) || (!VARATT_IS_1B(p) && avail < 4))
			return 0;
		size = VARSIZE_ANY(p);
	}
	else
	{
		const char *end = memchr(p, '\0', avail);

		if (end == NULL)
			return 0;
		size = end - p + 1;
	}
	return size > avail ? 0 : size;
}

/*
 * The next value of a column at or after *pos of data[0, len): *pos set to
 * where it starts; its size, 0 if there is none or it does not fit.
 */
static inline uint32
next_value(const ColumnInfo *c, const char *data, uint32 len, uint32 *pos)
{
	if (*pos >= len)
		return 0;
	*pos = find_value(*pos, c, data);
	if (*pos >= len)
		return 0;
	return value_size(c, data, *pos, len);
}

/*
 * The value number n (0-based) of data[0, len), walking the values before
 * it: *pos set to where it starts; its size, 0 if it is not there.
 */
static inline uint32
nth_value(const ColumnInfo *c, const char *data, uint32 len, uint32 n, uint32 *pos)
{
	uint32		size = 0;

	*pos = 0;
	for (uint32 j = 0; j <= n; j++)
	{
		*pos += size;
		if ((size = next_value(c, data, len, pos)) == 0)
			break;
	}
	return size;
}

/* Do the column's values lie back to back (fixed width, a multiple of the alignment)? */
static inline bool
back_to_back(const ColumnInfo *c)
{
	return c->attlen > 0 && att_align_nominal(c->attlen, c->attalign) == c->attlen;
}

/*
 * Value k of data[0, len) holding a column's values: at its index times
 * the width if they lie back to back, else walked to; its size, 0 if it is
 * not there.
 */
static inline uint32
kth_value(const ColumnInfo *c, const char *data, uint32 len, uint32 k, uint32 *pos)
{
	if (!back_to_back(c))
		return nth_value(c, data, len, k, pos);
	*pos = k * (uint32) c->attlen;
	return *pos + c->attlen <= len ? c->attlen : 0;
}

/* A tuple's entry in chunk 0. */
typedef struct TupleHead
{
	uint32		len;
	uint16		infomask2;
	uint16		infomask;
	uint8		hoff;
	int			natts;
	const bits8 *bits;			/* NULL: no nulls */
} TupleHead;

/*
 * Read the entry at *hpos of chunk 0 (hdr[0, hdrlen)) and move past it:
 * false if it runs past the chunk or cannot be the header of a tuple of at
 * most `ncols` columns and `room` bytes.
 */
static bool
read_tuple_head(const char *hdr, uint32 hdrlen, uint32 *hpos, int ncols, Size room,
				TupleHead *th)
{
	uint32		p = *hpos;

	if (p + HDR_FIXED > hdrlen)
		return false;
	memcpy(&th->len, hdr + p, sizeof(uint32));
	memcpy(&th->infomask2, hdr + p + 4, sizeof(uint16));
	memcpy(&th->infomask, hdr + p + 6, sizeof(uint16));
	th->hoff = (uint8) hdr[p + 8];
	p += HDR_FIXED;
	th->natts = th->infomask2 & HEAP_NATTS_MASK;
	th->bits = NULL;
	if (th->infomask & HEAP_HASNULL)
	{
		if (p + BITMAPLEN(th->natts) > hdrlen)
			return false;
		th->bits = (const bits8 *) (hdr + p);
		p += BITMAPLEN(th->natts);
	}
	*hpos = p;
	return th->natts <= ncols && th->len <= room && th->len >= SizeofMinimalTupleHeader &&
		th->hoff >= SizeofHeapTupleHeader + (th->bits ? BITMAPLEN(th->natts) : 0) &&
		th->hoff - MINIMAL_TUPLE_OFFSET <= th->len;
}

/*
 * Shared tuple headers (WC_CODEC_HEADS, run format 12).  The tuples of a
 * value page nearly always differ only in length: the same columns, NULL
 * in the same places (the key columns, which the key stores).  Chunk 0 is
 * then that header once and the tuples' lengths:
 *   uint16 t_infomask2, uint16 t_infomask, uint8 t_hoff,
 *   uint8 bitmap bytes (0: no NULLs), uint8 how the lengths are stored,
 *   the null bitmap, then the lengths:
 *     HEADS_SAME_LEN:  one uint16, every tuple's
 *     HEADS_BYTE_LEN:  a uint16 base, then a byte per tuple added to it
 *     HEADS_SHORT_LEN: a uint16 per tuple
 * read without lz4 and without parsing a header per tuple when a page is
 * opened (src/README.md, "Shared tuple headers").  Decoded (decode_chunk)
 * it is every tuple's header one after the other, as chunk 0 is otherwise.
 */
#define HEADS_FIXED (2 * sizeof(uint16) + 3 * sizeof(uint8))
#define HEADS_SAME_LEN	0
#define HEADS_BYTE_LEN	1
#define HEADS_SHORT_LEN 2

typedef struct SharedHeads
{
	uint16		infomask2;
	uint16		infomask;
	uint8		hoff;
	uint8		mode;			/* HEADS_*_LEN */
	uint16		base;			/* SAME_LEN: the length; BYTE_LEN: added to each */
	int			natts;
	const bits8 *bits;			/* NULL: no NULLs */
	const char *lens;			/* BYTE_LEN: a byte each; SHORT_LEN: a uint16 each */
} SharedHeads;

/* Bytes of the lengths of n tuples stored as `mode`. */
static inline Size
heads_lens_size(uint8 mode, int n)
{
	return mode == HEADS_SAME_LEN ? sizeof(uint16) :
		mode == HEADS_BYTE_LEN ? sizeof(uint16) + n : sizeof(uint16) * n;
}

/* Chunk 0 of ntuples tuples as shared headers, src[0, len): NULL or what is wrong. */
static const char *
read_heads(const char *src, Size len, int ntuples, int ncols, SharedHeads *sh)
{
	uint8		nbits;
	Size		o;

	if (len < HEADS_FIXED)
		return "column layout: short shared tuple header";
	memcpy(&sh->infomask2, src, sizeof(uint16));
	memcpy(&sh->infomask, src + 2, sizeof(uint16));
	sh->hoff = (uint8) src[4];
	nbits = (uint8) src[5];
	sh->mode = (uint8) src[6];
	sh->natts = sh->infomask2 & HEAP_NATTS_MASK;
	o = HEADS_FIXED + nbits;
	if (sh->mode > HEADS_SHORT_LEN || ntuples <= 0 ||
		o + heads_lens_size(sh->mode, ntuples) != len ||
		(nbits != 0) != ((sh->infomask & HEAP_HASNULL) != 0) ||
		(nbits != 0 && nbits != BITMAPLEN(sh->natts)) || sh->natts > ncols ||
		sh->hoff < SizeofHeapTupleHeader + nbits)
		return "column layout: invalid shared tuple header";
	sh->bits = nbits ? (const bits8 *) (src + HEADS_FIXED) : NULL;
	sh->base = 0;
	if (sh->mode != HEADS_SHORT_LEN)
	{
		memcpy(&sh->base, src + o, sizeof(uint16));
		o += sizeof(uint16);
	}
	sh->lens = src + o;
	return NULL;
}

static inline uint32
head_len(const SharedHeads *sh, int i)
{
	uint16		l;

	if (sh->mode == HEADS_SAME_LEN)
		return sh->base;
	if (sh->mode == HEADS_BYTE_LEN)
		return (uint32) sh->base + (uint8) sh->lens[i];
	memcpy(&l, sh->lens + sizeof(uint16) * i, sizeof(l));
	return l;
}

/* Can a tuple of this length have the shared header (and fit `room`)? */
static inline bool
head_len_ok(const SharedHeads *sh, uint32 len, Size room)
{
	return len <= room && len >= SizeofMinimalTupleHeader &&
		sh->hoff - MINIMAL_TUPLE_OFFSET <= len;
}

/*
 * Chunk 0, hdr[0, hdrlen) holding ntuples headers, as shared headers into
 * out (room bytes): false if the tuples differ in more than their length
 * or it takes more room.
 */
static bool
share_heads(const char *hdr, uint32 hdrlen, int ntuples, int ncols, char *out, Size room,
			Size *outlen)
{
	uint32		hpos = 0;
	TupleHead	first = {0};
	uint32		minlen = PG_UINT32_MAX;
	uint32		maxlen = 0;
	uint8		nbits;
	uint8		mode;
	Size		o;

	if (ntuples <= 0 || !read_tuple_head(hdr, hdrlen, &hpos, ncols, PG_UINT32_MAX, &first))
		return false;
	nbits = first.bits ? BITMAPLEN(first.natts) : 0;
	hpos = 0;
	for (int i = 0; i < ntuples; i++)
	{
		TupleHead	th = {0};

		if (!read_tuple_head(hdr, hdrlen, &hpos, ncols, PG_UINT32_MAX, &th) ||
			th.infomask2 != first.infomask2 || th.infomask != first.infomask ||
			th.hoff != first.hoff || th.len > PG_UINT16_MAX ||
			(nbits && memcmp(th.bits, first.bits, nbits) != 0))
			return false;
		minlen = Min(minlen, th.len);
		maxlen = Max(maxlen, th.len);
	}
	if (hpos != hdrlen)
		return false;
	mode = minlen == maxlen ? HEADS_SAME_LEN :
		maxlen - minlen <= PG_UINT8_MAX ? HEADS_BYTE_LEN : HEADS_SHORT_LEN;
	o = HEADS_FIXED + nbits;
	if (o + heads_lens_size(mode, ntuples) > room)
		return false;
	memcpy(out, &first.infomask2, sizeof(uint16));
	memcpy(out + 2, &first.infomask, sizeof(uint16));
	out[4] = (char) first.hoff;
	out[5] = (char) nbits;
	out[6] = (char) mode;
	if (nbits)
		memcpy(out + HEADS_FIXED, first.bits, nbits);
	if (mode != HEADS_SHORT_LEN)
	{
		uint16		base = (uint16) minlen;

		memcpy(out + o, &base, sizeof(base));
		o += sizeof(base);
	}
	if (mode != HEADS_SAME_LEN)
	{
		hpos = 0;
		for (int i = 0; i < ntuples; i++)
		{
			TupleHead	th = {0};
			uint16		l;

			(void) read_tuple_head(hdr, hdrlen, &hpos, ncols, PG_UINT32_MAX, &th);
			if (mode == HEADS_BYTE_LEN)
				out[o++] = (char) (uint8) (th.len - minlen);
			else
			{
				l = (uint16) th.len;
				memcpy(out + o, &l, sizeof(l));
				o += sizeof(l);
			}
		}
	}
	*outlen = o;
	return true;
}

/* Shared headers, src[0, len), back into a header per tuple: dst[0, rawlen). */
static const char *
unshare_heads(const char *src, Size len, char *dst, uint32 rawlen)
{
	SharedHeads sh;
	uint32		each;
	uint32		o = 0;
	int			ntuples;

	/* every tuple's header takes the same room: their number follows */
	if (len < HEADS_FIXED)
		return "column layout: short shared tuple header";
	each = HDR_FIXED + (uint8) src[5];
	if (rawlen % each != 0)
		return "column layout: shared tuple headers of the wrong size";
	ntuples = (int) (rawlen / each);
	if (read_heads(src, len, ntuples, MaxTupleAttributeNumber, &sh) != NULL)
		return "column layout: invalid shared tuple header";
	for (int i = 0; i < ntuples; i++)
	{
		uint32		l = head_len(&sh, i);

		memcpy(dst + o, &l, sizeof(uint32));
		memcpy(dst + o + 4, &sh.infomask2, sizeof(uint16));
		memcpy(dst + o + 6, &sh.infomask, sizeof(uint16));
		dst[o + 8] = (char) sh.hoff;
		if (sh.bits)
			memcpy(dst + o + HDR_FIXED, sh.bits, each - HDR_FIXED);
		o += each;
	}
	return NULL;
}

/* One tuple of the row layout, checked. */
typedef struct TupleView
{
	uint32		len;
	int			natts;
	bool		hasnulls;
	const bits8 *bits;
	const char *data;			/* the column values */
	uint32		datalen;
} TupleView;

static bool
view_tuple(const char *raw, Size rawsize, Size off, int maxnatts, TupleView *t)
{
	MinimalTuple mt = (MinimalTuple) (raw + off);
	HeapTupleHeader tup = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
	uint32		hoff;

	if (off + SizeofMinimalTupleHeader > rawsize)
		return false;
	t->len = mt->t_len;
	t->natts = HeapTupleHeaderGetNatts(tup);
	t->hasnulls = (mt->t_infomask & HEAP_HASNULL) != 0;
	hoff = mt->t_hoff;
	if (t->len > rawsize - off || t->natts > maxnatts ||
		hoff < SizeofHeapTupleHeader + (t->hasnulls ? BITMAPLEN(t->natts) : 0) ||
		hoff - MINIMAL_TUPLE_OFFSET > t->len)
		return false;
	t->bits = mt->t_bits;
	t->data = (const char *) tup + hoff;
	t->datalen = t->len - (hoff - MINIMAL_TUPLE_OFFSET);
	return true;
}

/*
 * Walk the values of a tuple: calls `fn` for every column that has one,
 * with where it is.  false if a value runs past the tuple.
 */
typedef void (*ValueFn) (void *arg, int attnum, const char *value, uint32 size);

static pg_attribute_always_inline bool
walk_values(const TupleView *t, const ColumnInfo *cols, ValueFn fn, void *arg)
{
	uint32		off = 0;

	for (int a = 0; a < t->natts; a++)
	{
		uint32		size;

		if (t->hasnulls && att_isnull(a, t->bits))
			continue;
		if ((size = next_value(&cols[a], t->data, t->datalen, &off)) == 0)
			return false;
		fn(arg, a, t->data + off, size);
		off += size;
	}
	return true;
}

/* pass 1 of the encoding: how long each chunk gets */
typedef struct SizeState
{
	const ColumnInfo *cols;
	uint32	   *len;			/* per column */
} SizeState;

static void
size_value(void *arg, int a, const char *value, uint32 size)
{
	SizeState  *s = arg;

	s->len[a] = place_value(s->len[a], &s->cols[a], value) + size;
}

/* wc_probe_due and wc_probe_note for column a of a memo's counters (NULL: none) */
static inline bool
column_probe_due(const uint32 *misses, int a)
{
	return misses == NULL || wc_probe_due(misses[a]);
}

static inline void
column_probe_note(uint32 *misses, int a, bool found)
{
	if (misses)
		wc_probe_note(&misses[a], found);
}

static inline bool
all_zero(const char *p, Size n)
{
	for (Size i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * pass 2: copy each value to its chunk, and check that the tuple is as
 * assemble() will rebuild it: each value where heap_fill_tuple puts it
 * after the one before, zeros between them (assemble starts from zeros).
 */
typedef struct CopyState
{
	const ColumnInfo *cols;
	char	  **chunk;
	uint32	   *pos;
	const char *data;			/* the tuple's values */
	uint32		doff;			/* where the next one may start */
	bool		canonical;
} CopyState;

static void
copy_value(void *arg, int a, const char *value, uint32 size)
{
	CopyState  *s = arg;
	uint32		at = place_value(s->pos[a], &s->cols[a], value);
	uint32		here = (uint32) (value - s->data);

	memcpy(s->chunk[a] + at, value, size);
	s->pos[a] = at + size;
	if (here != place_value(s->doff, &s->cols[a], value) ||
		!all_zero(s->data + s->doff, here - s->doff))
		s->canonical = false;
	s->doff = here + size;
}

/*
 * Is the tuple's header as assemble() rebuilds it from chunk 0: zeros
 * where the header has no field (MinimalTuple's padding, after the null
 * bitmap up to t_hoff), and its MAXALIGN padding zeros?
 */
static bool
canonical_head(const char *raw, Size rawsize, Size off, const TupleView *t)
{
	const char *mt = raw + off;
	Size		fields = offsetof(MinimalTupleData, t_bits) +
		(t->hasnulls ? BITMAPLEN(t->natts) : 0);
	Size		hoff = ((MinimalTuple) mt)->t_hoff - MINIMAL_TUPLE_OFFSET;
	Size		end = MAXALIGN(off + t->len);

	return all_zero(mt + offsetof(MinimalTupleData, mt_padding), MINIMAL_TUPLE_PADDING) &&
		hoff >= fields && all_zero(mt + fields, hoff - fields) &&
		end <= rawsize && all_zero(raw + off + t->len, end - off - t->len);
}

#define RETURN_PROBLEM(what) do { pfree(pos); return (what); } while (0)

/*
 * Put the tuples back together from decoded chunks: chunk 0 at hdr, column
 * a at chunk[a] (NULL for a column no tuple has).  NULL or what is wrong.
 */
static const char *
assemble(const char *hdr, uint32 hdrlen, char **chunk, const uint32 *chunklen,
		 const ColumnInfo *cols, int ncols, int ntuples, char *dst, Size rawsize)
{
	uint32		hpos = 0;
	Size		off = 0;
	uint32	   *pos = palloc0(sizeof(uint32) * Max(ncols, 1));

	memset(dst, 0, rawsize);
	for (int i = 0; i < ntuples; i++)
	{
		MinimalTuple mt = (MinimalTuple) (dst + off);
		HeapTupleHeader tup = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
		TupleHead	th = {0};
		char	   *data;
		uint32		doff = 0;

		if (!read_tuple_head(hdr, hdrlen, &hpos, ncols, rawsize - off, &th))
			RETURN_PROBLEM("column layout: invalid tuple header");
		mt->t_len = th.len;
		mt->t_infomask2 = th.infomask2;
		mt->t_infomask = th.infomask;
		mt->t_hoff = th.hoff;
		if (th.bits)
			memcpy(mt->t_bits, th.bits, BITMAPLEN(th.natts));
		data = (char *) tup + th.hoff;
		for (int a = 0; a < th.natts; a++)
		{
			const char *value;
			uint32		size;

			if (th.bits && att_isnull(a, th.bits))
				continue;
			if (chunk[a] == NULL ||
				(size = next_value(&cols[a], chunk[a], chunklen[a], &pos[a])) == 0)
				RETURN_PROBLEM("column layout: a column has fewer values than its tuples");
			value = chunk[a] + pos[a];
			doff = place_value(doff, &cols[a], value);
			if ((data - (char *) mt) + doff + size > th.len)
				RETURN_PROBLEM("column layout: values overrun their tuple");
			memcpy(data + doff, value, size);
			doff += size;
			pos[a] += size;
		}
		off = MAXALIGN(off + th.len);
		if (off > rawsize)
			RETURN_PROBLEM("column layout: tuples overrun the page");
	}
	if (off != rawsize || hpos != hdrlen)
		RETURN_PROBLEM("column layout: tuples do not fill the page");
	for (int a = 0; a < ncols; a++)
		if (chunk[a] != NULL && pos[a] != chunklen[a])
			RETURN_PROBLEM("column layout: a column has more values than its tuples");
	pfree(pos);
	return NULL;
}

/*
 * Hex-packed chunks (WC_CODEC_HEX, run format 8).  Content hashes, etags
 * and ids stored as hex text are half information: zstd gets its 2:1 from
 * Huffman-coding the digits, and decoding that was the largest single cost
 * of a point lookup (3.6 µs for a page's 110 sha-256 hashes; src/README.md,
 * "Hex-packed columns").  A chunk whose values are all short varlenas (one
 * header byte) of an even number of lowercase hex digits is stored as each
 * value's header byte followed by its digits two to a byte; anything else
 * is compressed as before.
 */
static const char hex_digits[] = "0123456789abcdef";
static uint16 hex_pairs[256];	/* byte -> its two digits (hex_unpack) */
static uint8 hex_nibbles[256];	/* character -> its digit's value, HEX_NOT if none */
static bool hex_tables_ready = false;

#define HEX_NOT 0x10			/* not a lowercase hex digit */

/* each byte's two digits, as they lie in memory, and each digit's value */
static inline void
init_hex_tables(void)
{
	if (hex_tables_ready)
		return;
	for (int b = 0; b < 256; b++)
	{
		char		pair[2] = {hex_digits[b >> 4], hex_digits[b & 0x0f]};

		memcpy(&hex_pairs[b], pair, 2);
		hex_nibbles[b] = HEX_NOT;
	}
	for (int d = 0; d < 16; d++)
		hex_nibbles[(uint8) hex_digits[d]] = (uint8) d;
	hex_tables_ready = true;
}

/*
 * Pack a chunk into dst (room for rawlen bytes); false if it does not
 * qualify.  Digits by table, a value's checked once (HEX_NOT or'ed in):
 * every page compaction writes packs its hashes, so this is per byte.
 */
static bool
hex_pack(const char *src, uint32 rawlen, char *dst, Size *len)
{
	uint32		i = 0;
	Size		o = 0;

	init_hex_tables();
	while (i < rawlen)
	{
		uint8		h = (uint8) src[i];
		uint32		size;
		uint8		bad = 0;
		const uint8 *digit;

		if (!VARATT_IS_1B(&src[i]) || VARATT_IS_1B_E(&src[i]))
			return false;
		size = VARSIZE_1B(&src[i]);
		if (size < 1 || (size - 1) % 2 != 0 || i + size > rawlen)
			return false;
		dst[o++] = (char) h;
		digit = (const uint8 *) src + i + 1;
		for (uint32 k = 0; k < size - 1; k += 2)
		{
			uint8		hi = hex_nibbles[digit[k]];
			uint8		lo = hex_nibbles[digit[k + 1]];

			bad |= hi | lo;
			dst[o++] = (char) ((hi << 4) | lo);
		}
		if (bad & HEX_NOT)
			return false;
		i += size;
	}
	*len = o;
	return true;
}

/*
 * Unpack a hex-packed chunk of len bytes into exactly rawlen at dst, or,
 * with dst NULL, compare what it unpacks to with `expect` (the writer's
 * check).  NULL, or what is wrong.
 */
static const char *
hex_unpack(const char *src, Size len, char *dst, uint32 rawlen, const char *expect)
{
	Size		i = 0;
	uint32		o = 0;
	char		v[VARATT_SHORT_MAX];
	char	   *out;

	init_hex_tables();
	while (i < len)
	{
		uint32		size;

		if (!VARATT_IS_1B(&src[i]) || VARATT_IS_1B_E(&src[i]))
			return "column layout: invalid hex-packed value";
		size = VARSIZE_1B(&src[i]);
		if (size < 1 || (size - 1) % 2 != 0 || i + 1 + (size - 1) / 2 > len || o + size > rawlen)
			return "column layout: invalid hex-packed value";
		/* a value into dst, or (the writer's check) into v to compare */
		out = dst ? dst + o : v;
		out[0] = src[i++];
		for (uint32 k = 1; k < size; k += 2)
			memcpy(out + k, &hex_pairs[(uint8) src[i++]], 2);
		if (dst == NULL && memcmp(v, expect + o, size) != 0)
			return "column layout: hex-packed chunk does not match";
		o += size;
	}
	if (o != rawlen)
		return "column layout: hex-packed chunk of the wrong size";
	return NULL;
}

/*
 * The tuples raw[0, rawsize) of a value page in column layout, each chunk
 * compressed with `codec` (zstd at `level`), into out: WC_COLUMNS_TOO_BIG
 * if they do not fit `capacity` bytes, WC_COLUMNS_UNSUITABLE if they cannot
 * be laid out by column (too many or too wide columns); the page is then
 * written as rows.  scratch: WC_COLUMNS_SCRATCH_SIZE bytes.
 * memo: what the writer learned from its pages before (NULL: nothing).
 */
WcColumnsResult
wc_columns_encode(TupleDesc desc, const char *raw, Size rawsize, WcCodec codec, int level,
				  bool hex_ok, bool heads_ok, WcDictBuilder *dict, WcColumnsMemo *memo,
				  Size capacity, char *scratch,
				  char *out, Size *outlen)
{
	int			ncols = 0;
	int			ntuples = 0;
	uint32		hdrlen = 0;
	ColumnInfo *cols;
	uint32	   *len;
	uint32	   *pos;
	char	  **chunk;
	char	   *hdr;
	Size		used;
	Size		maxraw;
	Size		dirlen;
	Size		o;
	TupleView	t;
	SizeState	ss;
	CopyState	cs;
	WcColumnsHeader h;
	WcColumnsResult result = WC_COLUMNS_UNSUITABLE;
	char	   *framed = NULL;	/* a chunk in frames (dictionary.h) */
	bool		framed_any = false;
	uint32	   *hex_probe_misses = memo ? memo->hex_probe_misses : NULL;
	uint32	   *plain_misses = memo ? memo->plain_misses : NULL;
	bool		verify = wc_debug_check_columns || memo == NULL ||
		memo->pages < WC_COLUMNS_VERIFY_FIRST ||
		memo->pages % WC_COLUMNS_VERIFY_EVERY == 0;

	if (memo)
	{
		memo->pages++;
		memo->frames_no_room = false;
	}

	cols = palloc(sizeof(ColumnInfo) * Max(desc->natts, 1));
	len = palloc0(sizeof(uint32) * Max(desc->natts, 1));
	pos = palloc0(sizeof(uint32) * Max(desc->natts, 1));
	chunk = palloc0(sizeof(char *) * Max(desc->natts, 1));
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		cols[a].attlen = att->attlen;
		cols[a].attalign = att->attalign;
		cols[a].byval = att->attbyval;
	}

	/* pass 1: check the tuples, size the chunks */
	ss.cols = cols;
	ss.len = len;
	for (Size off = 0; off < rawsize; off = MAXALIGN(off + t.len))
	{
		if (!view_tuple(raw, rawsize, off, desc->natts, &t) || !walk_values(&t, cols, size_value, &ss))
			goto done;
		ncols = Max(ncols, t.natts);
		hdrlen += HDR_FIXED + (t.hasnulls ? BITMAPLEN(t.natts) : 0);
		if (++ntuples > PG_UINT16_MAX)
			goto done;
	}
	dirlen = sizeof(WcColumnsHeader) + sizeof(WcColumnChunk) * (ncols + 1);
	if (ntuples == 0 || dirlen > capacity)
		goto done;

	/* the chunks, then room to check them and to compress the largest */
	used = MAXALIGN(hdrlen);
	maxraw = hdrlen;
	for (int a = 0; a < ncols; a++)
	{
		used += MAXALIGN(len[a]);
		maxraw = Max(maxraw, len[a]);
	}
	/* (readers refuse chunks much larger than the tuples: corrupt) */
	if (maxraw > MAX_CHUNK_RAW || used > 2 * rawsize + MAXIMUM_ALIGNOF * (ncols + 1) ||
		used + MAXALIGN(rawsize) + wc_compress_bound(maxraw) > WC_COLUMNS_SCRATCH_SIZE)
		goto done;
	memset(scratch, 0, used);
	hdr = scratch;
	o = MAXALIGN(hdrlen);
	for (int a = 0; a < ncols; a++)
	{
		chunk[a] = len[a] > 0 ? scratch + o : NULL;
		o += MAXALIGN(len[a]);
	}

	/* pass 2: fill them */
	cs.cols = cols;
	cs.chunk = chunk;
	cs.pos = pos;
	cs.canonical = true;
	hdrlen = 0;
	for (Size off = 0; off < rawsize; off = MAXALIGN(off + t.len))
	{
		const MinimalTuple mt = (MinimalTuple) (raw + off);

		(void) view_tuple(raw, rawsize, off, desc->natts, &t);
		if (!canonical_head(raw, rawsize, off, &t))
			cs.canonical = false;
		memcpy(hdr + hdrlen, &mt->t_len, sizeof(uint32));
		memcpy(hdr + hdrlen + 4, &mt->t_infomask2, sizeof(uint16));
		memcpy(hdr + hdrlen + 6, &mt->t_infomask, sizeof(uint16));
		hdr[hdrlen + 8] = (char) mt->t_hoff;
		hdrlen += HDR_FIXED;
		if (t.hasnulls)
		{
			memcpy(hdr + hdrlen, t.bits, BITMAPLEN(t.natts));
			hdrlen += BITMAPLEN(t.natts);
		}
		cs.data = t.data;
		cs.doff = 0;
		(void) walk_values(&t, cols, copy_value, &cs);
		if (!all_zero(t.data + cs.doff, t.datalen - cs.doff))
			cs.canonical = false;
		if (!cs.canonical && !wc_debug_check_columns)
			goto done;
	}

	/*
	 * The layout must give back exactly these bytes.  Each tuple was just
	 * checked to be as assemble() rebuilds it; on the first pages of a run
	 * and a sample of the rest (the whole check was 3% of a COPY's
	 * instructions) the page is rebuilt and compared as well, so that a
	 * flaw of the layout itself shows on any run it writes.  (Tests: the
	 * two checks must agree on every page.)
	 */
	if (verify)
	{
		bool		same = assemble(hdr, hdrlen, chunk, len, cols, ncols, ntuples,
									scratch + used, rawsize) == NULL &&
			memcmp(scratch + used, raw, rawsize) == 0;

		if (wc_debug_check_columns && same != cs.canonical)
			elog(ERROR, "widecol: the per-tuple check of the column layout %s a value page that %s byte for byte",
				 same ? "rejected" : "let through", same ? "rebuilds" : "does not rebuild");
		if (!same)
			goto done;
	}
	if (!cs.canonical)
		goto done;

	/* compress: header, directory, chunks */
compress:
	h.ntuples = ntuples;
	h.nchunks = ncols + 1;
	memcpy(out, &h, sizeof(h));
	o = dirlen;
	for (int c = 0; c <= ncols; c++)
	{
		WcColumnChunk d = {0};
		const char *src = c == 0 ? hdr : chunk[c - 1];
		uint32		rawlen = c == 0 ? hdrlen : len[c - 1];
		const char *z;
		Size		zlen = 0;
		Size		plen = 0;
		WcCodec		zused = WC_CODEC_NONE;

		if (rawlen > 0)
		{
			/* a small chunk decodes faster from lz4, without zstd's tables */
			WcCodec		cc = codec == WC_CODEC_ZSTD && rawlen < WC_COLUMNS_SMALL_CHUNK ?
				WC_CODEC_LZ4 : codec;
			Size		room = Min(capacity - o, PG_UINT16_MAX);
			char	   *zbuf = scratch + used + MAXALIGN(rawsize);
			bool		packed;
			bool		frameable;
			bool		repeats = false;

			/*
			 * A hex chunk packed, unless the codec finds much more to remove
			 * (values repeated): 110 packed sha-256 hashes unpack in 1.2-2 µs
			 * where zstd took 3.6.  Whether values repeat, lz4 tells at a
			 * fraction of zstd's cost: where it removes less than a tenth,
			 * zstd, which finds no more matches than lz4 and codes the
			 * digits about as tightly as packing does, cannot be 10% smaller,
			 * and the chunk is not compressed with it at all.
			 */
			packed = hex_ok && c > 0 && codec == WC_CODEC_ZSTD && cols[c - 1].attlen == -1 &&
				hex_pack(src, rawlen, scratch + used, &plen) && plen <= room &&
				(!verify || hex_unpack(scratch + used, plen, NULL, rawlen, src) == NULL);
			if (packed && column_probe_due(hex_probe_misses, c - 1))
			{
				Size		probe_len;
				WcCodec		probe;

				(void) wc_compress(WC_CODEC_LZ4, level, src, rawlen, rawlen, 0, zbuf, &probe_len, &probe);
				repeats = probe == WC_CODEC_LZ4 && probe_len * 10 < (Size) rawlen * 9;
			}
			if (packed)
				column_probe_note(hex_probe_misses, c - 1, repeats);
			/*
			 * A text chunk that may go in frames with the run's dictionary
			 * (below): where frames have won on the last pages of this
			 * column, they are tried first and plain zstd only on a sample
			 * of pages (compression.h, wc_probe_due).
			 */
			frameable = dict && c > 0 && cc == WC_CODEC_ZSTD && !packed &&
				cols[c - 1].attlen == -1;
			if (dict && c > 0 && framed == NULL)
				framed = palloc(capacity);
			z = NULL;
			/* shared headers, if they give back these headers exactly */
			if (c == 0 && heads_ok && share_heads(src, rawlen, ntuples, ncols, zbuf, room, &zlen) &&
				(!verify || (unshare_heads(zbuf, zlen, scratch + used, rawlen) == NULL &&
							 memcmp(scratch + used, src, rawlen) == 0)))
			{
				z = zbuf;
				zused = WC_CODEC_HEADS;
			}
			else if (frameable && !column_probe_due(plain_misses, c - 1) &&
					 wc_dict_encode(dict, src, rawlen, framed, room, &zlen))
			{
				/* frames keep winning in this column: plain zstd not tried */
				z = framed;
				zused = WC_CODEC_ZSTD_DICT;
				framed_any = true;
			}
			else if (!packed || repeats)
				z = wc_compress(cc, level, src, rawlen, room, 0, zbuf, &zlen, &zused);
			if (packed && (z == NULL || plen * 9 <= zlen * 10))
			{
				z = scratch + used;
				zlen = plen;
				zused = WC_CODEC_HEX;
			}
			else if (dict && c > 0 && zused == WC_CODEC_ZSTD && cols[c - 1].attlen == -1)
			{
				/*
				 * In frames with the run's dictionary (until it is trained,
				 * the chunk is one of its samples), unless that takes more
				 * than a third more room: a lookup then decodes one frame
				 * of 16 values, not the chunk (1.6-1.9 µs against 9-10 for
				 * the 105 object paths of bigdata.sh's pages, whose frames
				 * take 1.12-1.25 times the room: src/README.md).
				 */
				Size		flen;

				if (wc_dict_encode(dict, src, rawlen, framed, room, &flen) &&
					flen * 3 <= zlen * 4)
				{
					z = framed;
					zlen = flen;
					zused = WC_CODEC_ZSTD_DICT;
					framed_any = true;
				}
			}
			if (frameable)
				column_probe_note(plain_misses, c - 1, zused != WC_CODEC_ZSTD_DICT);
			if (z == NULL && framed_any)
			{
				/* frames take more room: without them, the page may fit */
				dict = NULL;
				framed_any = false;
				if (memo)
					memo->frames_no_room = true;
				goto compress;
			}
			if (z == NULL)
			{
				result = WC_COLUMNS_TOO_BIG;
				goto done;
			}
			memcpy(out + o, z, zlen);
		}
		d.codec = (uint8) zused;
		d.rawlen = rawlen;
		d.len = (uint16) zlen;
		if (c > 0)
		{
			d.attlen = cols[c - 1].attlen;
			d.attalign = cols[c - 1].attalign;
			d.byval = cols[c - 1].byval;
		}
		memcpy(out + sizeof(h) + sizeof(d) * c, &d, sizeof(d));
		o += zlen;
	}
	*outlen = o;
	result = WC_COLUMNS_OK;
	if (framed_any)
		wc_dict_mark_used(dict);
done:
	if (framed)
		pfree(framed);
	pfree(cols);
	pfree(len);
	pfree(pos);
	pfree(chunk);
	return result;
}

/* The header and directory of a payload; NULL or what is wrong. */
static const char *
read_directory(const char *payload, Size len, WcColumnsHeader *h, WcColumnChunk *dir,
			   uint32 *start)
{
	Size		o;

	if (len < sizeof(*h))
		return "column layout: short payload";
	memcpy(h, payload, sizeof(*h));
	o = sizeof(*h) + sizeof(WcColumnChunk) * h->nchunks;
	if (h->nchunks == 0 || h->nchunks > MaxTupleAttributeNumber + 1 || o > len)
		return "column layout: invalid directory";
	memcpy(dir, payload + sizeof(*h), sizeof(WcColumnChunk) * h->nchunks);
	for (int c = 0; c < h->nchunks; c++)
	{
		start[c] = o;
		o += dir[c].len;
		if (o > len || dir[c].rawlen > MAX_CHUNK_RAW ||
			(dir[c].rawlen == 0) != (dir[c].len == 0) ||
			(c > 0 && dir[c].codec == WC_CODEC_HEADS))
			return "column layout: invalid chunk";
		/* a column's description must be one a table column can have */
		if (c > 0 &&
			((dir[c].attlen <= 0 && dir[c].attlen != -1 && dir[c].attlen != -2) ||
			 (dir[c].attalign != TYPALIGN_CHAR && dir[c].attalign != TYPALIGN_SHORT &&
			  dir[c].attalign != TYPALIGN_INT && dir[c].attalign != TYPALIGN_DOUBLE) ||
			 (dir[c].byval && dir[c].attlen != 1 && dir[c].attlen != 2 &&
			  dir[c].attlen != 4 && dir[c].attlen != 8)))
			return "column layout: invalid column description";
	}
	if (o != len)
		return "column layout: chunks do not fill the payload";
	return NULL;
}

/* Does a payload in column layout hold a chunk in frames (needs its run's dictionary)? */
bool
wc_columns_use_frames(const char *payload, Size len)
{
	WcColumnsHeader h;
	WcColumnChunk d;

	if (len < sizeof(h))
		return false;
	memcpy(&h, payload, sizeof(h));
	for (int c = 0; c < h.nchunks && sizeof(h) + sizeof(d) * (c + 1) <= len; c++)
	{
		memcpy(&d, payload + sizeof(h) + sizeof(d) * c, sizeof(d));
		if (d.codec == WC_CODEC_ZSTD_DICT)
			return true;
	}
	return false;
}

static const char *
decode_chunk(const char *payload, const WcColumnChunk *d, uint32 start, char *dst,
			 const WcDictRef *dict)
{
	if (d->rawlen == 0)
		return NULL;
	if (d->codec == WC_CODEC_HEX)
		return hex_unpack(payload + start, d->len, dst, d->rawlen, NULL);
	if (d->codec == WC_CODEC_ZSTD_DICT)
		return wc_dict_decode(dict, payload + start, d->len, dst, d->rawlen);
	if (d->codec == WC_CODEC_HEADS)
		return unshare_heads(payload + start, d->len, dst, d->rawlen);
	return wc_decompress((WcCodec) d->codec, payload + start, d->len, dst, d->rawlen);
}

static char *assemble_buf = NULL;
static Size assemble_cap = 0;

/* Every tuple of a payload in column layout, into dst[0, rawsize). */
const char *
wc_columns_assemble(const char *payload, Size len, char *dst, Size rawsize,
					const WcDictRef *dict)
{
	WcColumnsHeader h;
	WcColumnChunk *dir;
	uint32	   *start;
	char	  **chunk;
	uint32	   *chunklen;
	ColumnInfo *cols;
	char	   *buf;
	Size		total = 0;
	const char *problem;

	if (len < sizeof(h))
		return "column layout: short payload";
	memcpy(&h, payload, sizeof(h));
	dir = palloc(sizeof(WcColumnChunk) * Max(h.nchunks, 1));
	start = palloc(sizeof(uint32) * Max(h.nchunks, 1));
	problem = read_directory(payload, len, &h, dir, start);
	if (problem)
	{
		pfree(dir);
		pfree(start);
		return problem;
	}
	for (int c = 0; c < h.nchunks; c++)
		total += MAXALIGN(dir[c].rawlen);
	if (total > 2 * rawsize + MAXIMUM_ALIGNOF * h.nchunks)
	{
		pfree(dir);
		pfree(start);
		return "column layout: chunks larger than their tuples";
	}
	/* decoded chunks go to a buffer the backend keeps (this runs per page) */
	if (total > assemble_cap)
	{
		if (assemble_buf)
			pfree(assemble_buf);
		assemble_buf = NULL;
		assemble_cap = 0;
		assemble_buf = MemoryContextAlloc(TopMemoryContext, Max(total, 128 * 1024));
		assemble_cap = Max(total, 128 * 1024);
	}
	buf = assemble_buf;
	chunk = palloc0(sizeof(char *) * h.nchunks);
	chunklen = palloc0(sizeof(uint32) * h.nchunks);
	cols = palloc0(sizeof(ColumnInfo) * h.nchunks);
	total = 0;
	for (int c = 0; c < h.nchunks && problem == NULL; c++)
	{
		chunk[c] = dir[c].rawlen > 0 || c == 0 ? buf + total : NULL;
		chunklen[c] = dir[c].rawlen;
		cols[c].attlen = dir[c].attlen;
		cols[c].attalign = dir[c].attalign;
		cols[c].byval = dir[c].byval != 0;
		problem = decode_chunk(payload, &dir[c], start[c], buf + total, dict);
		total += MAXALIGN(dir[c].rawlen);
	}
	if (problem == NULL)
		problem = assemble(chunk[0], chunklen[0], chunk + 1, chunklen + 1, cols + 1,
						   h.nchunks - 1, h.ntuples, dst, rawsize);
	pfree(chunk);
	pfree(chunklen);
	pfree(cols);
	pfree(dir);
	pfree(start);
	return problem;
}

/* ---------- lazy reads ---------- */

struct WcColumnsPage
{
	char	   *next;			/* free space of the state buffer */
	char	   *end;
	char	   *payload;
	int			ntuples;
	int			ncols;
	WcColumnChunk *dir;			/* [0] tuple headers, [1 + a] column a */
	uint32	   *start;
	uint32	   *tupoff;			/* each tuple's offset in the row layout */
	uint16	   *natts;
	const bits8 **bits;			/* NULL: no nulls */
	char	  **data;			/* per column, once decoded */
	int32	  **valoff;			/* per column and tuple: value offset, -1 null */
	uint16	   *stride;			/* per column: its width if every tuple has a
								 * value of it at index x width (no valoff) */
	int			min_natts;		/* the fewest columns a tuple has */
	bits8	   *common;			/* AND of the tuples' null bitmaps */
	/* the columns wc_columns_fetch_row fills, for the skip and range it had */
	const bool *want_skip;
	int			want_from;
	int			want_upto;
	int			nwant;
	int16	   *want;
	int			last;			/* the last tuple asked for (wc_columns_ordinal) */
	bool		point;			/* a seek's page: decode only the value asked */
	WcDictRef	dict;			/* its run's dictionary (chunks in frames) */
	struct PointColumn *pt;		/* per column, for point_value */
};

/*
 * What point_value keeps of a column: the tuple it found a value of last
 * and where; the index among the column's values of a tuple it counted
 * to (rows are read in order, forward or backward, so counting goes on
 * from there); a framed chunk's frame decoded last.
 */
typedef struct PointColumn
{
	int32		ord;			/* -1: none yet */
	char	   *at;
	int32		kord;			/* from 0: the first tuple's index is 0 */
	uint32		kval;
	int32		frame;			/* -1: none */
	uint32		framelen;
	char	   *framebuf;		/* ... or a hex-packed value, unpacked */
	uint32		hval;			/* a hex-packed chunk: a value walked to */
	uint32		hpos;			/* ... and where it starts */
	uint32		partial;		/* an lz4 chunk decoded only this far (0: whole
								 * or not at all) */
} PointColumn;

static void *
state_alloc(WcColumnsPage *cp, Size size)
{
	char	   *p = cp->next;

	size = MAXALIGN(size);
	if (size > (Size) (cp->end - p))
		return NULL;
	cp->next += size;
	return p;
}

/*
 * Bytes a state for this payload needs to decode every column (see
 * wc_columns_open), or 0 if its directory is invalid.
 */
Size
wc_columns_state_size(const char *payload, Size len)
{
	WcColumnsHeader h;
	WcColumnChunk d;
	Size		n;
	Size		size;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, payload, sizeof(h));
	if (h.nchunks == 0 || sizeof(h) + sizeof(WcColumnChunk) * (Size) h.nchunks > len)
		return 0;
	n = Max(h.ntuples, 1);
	size = MAXALIGN(sizeof(WcColumnsPage)) + MAXALIGN(len) +
		2 * MAXALIGN(sizeof(WcColumnChunk) * h.nchunks) +
		MAXALIGN(sizeof(uint32) * n) + MAXALIGN(sizeof(uint16) * n) +
		MAXALIGN(sizeof(bits8 *) * n) + 2 * MAXALIGN(sizeof(void *) * h.nchunks) +
		MAXALIGN(sizeof(PointColumn) * h.nchunks) + 2 * MAXALIGN(sizeof(uint16) * h.nchunks) +
		MAXALIGN(BITMAPLEN(h.nchunks));
	for (int c = 0; c < h.nchunks; c++)
	{
		memcpy(&d, payload + sizeof(h) + sizeof(d) * c, sizeof(d));
		size += MAXALIGN(Max(d.rawlen, 1));
		if (c > 0)
			size += MAXALIGN(sizeof(int32) * n);
		if (c > 0 && d.codec == WC_CODEC_HEX)
			size += MAXALIGN(VARATT_SHORT_MAX);	/* point_value's one value */
		if (c > 0 && d.codec == WC_CODEC_ZSTD_DICT)
			size += MAXALIGN(WC_DICT_FRAME_VALUES * VARATT_SHORT_MAX);	/* its frame */
	}
	return size;
}

/*
 * A page whose tuples share a header: each tuple's place from its length
 * alone; every tuple has the same columns, NULL in the same places.
 */
static bool
open_shared_heads(WcColumnsPage *cp, Size rawsize, const char **problem)
{
	SharedHeads sh;
	Size		off = 0;

	if ((*problem = read_heads(cp->payload + cp->start[0], cp->dir[0].len, cp->ntuples,
							   cp->ncols, &sh)) != NULL)
		return false;
	if ((uint64) cp->ntuples * (HDR_FIXED + (sh.bits ? BITMAPLEN(sh.natts) : 0)) !=
		cp->dir[0].rawlen)
	{
		*problem = "column layout: tuple headers do not match the page";
		return false;
	}
	cp->min_natts = sh.natts;
	if (sh.bits)
		memcpy(cp->common, sh.bits, BITMAPLEN(sh.natts));
	for (int i = 0; i < cp->ntuples; i++)
	{
		uint32		len = head_len(&sh, i);

		if (off > rawsize || !head_len_ok(&sh, len, rawsize - off))
		{
			*problem = "column layout: tuple headers do not match the page";
			return false;
		}
		cp->natts[i] = (uint16) sh.natts;
		cp->bits[i] = sh.bits;
		cp->tupoff[i] = off;
		off = MAXALIGN(off + len);
	}
	if (off != rawsize)
	{
		*problem = "column layout: tuple headers do not match the page";
		return false;
	}
	return true;
}

/*
 * Open a payload in column layout in `state` (`size` bytes, MAXALIGNed;
 * wc_columns_state_size says how many it needs): copies it and decodes the
 * tuple headers.  NULL with *problem set if it is corrupt, NULL alone if
 * it needs more room than the state has (the caller assembles the tuples
 * instead).  point: rows will be asked for one at a time (a seek's page),
 * so the first ask of a column decodes no more of it than that value needs
 * (point_value).
 */
WcColumnsPage *
wc_columns_open(char *state, Size size, const char *payload, Size len, Size rawsize,
				bool point, const WcDictRef *dict, const char **problem)
{
	WcColumnsPage *cp = (WcColumnsPage *) state;
	WcColumnsHeader h;
	char	   *hdr = NULL;
	uint32		hpos = 0;
	Size		off = 0;
	bool		bad = false;

	*problem = NULL;
	cp->next = state + MAXALIGN(sizeof(WcColumnsPage));
	cp->end = state + size;
	if ((cp->payload = state_alloc(cp, len)) == NULL)
		return NULL;
	memcpy(cp->payload, payload, len);
	if (len < sizeof(h))
	{
		*problem = "column layout: short payload";
		return NULL;
	}
	memcpy(&h, payload, sizeof(h));
	if ((cp->dir = state_alloc(cp, sizeof(WcColumnChunk) * Max(h.nchunks, 1))) == NULL ||
		(cp->start = state_alloc(cp, sizeof(uint32) * Max(h.nchunks, 1))) == NULL)
		return NULL;
	if ((*problem = read_directory(cp->payload, len, &h, cp->dir, cp->start)) != NULL)
		return NULL;
	cp->ntuples = h.ntuples;
	cp->ncols = h.nchunks - 1;
	cp->last = -1;
	if ((cp->dir[0].codec != WC_CODEC_HEADS &&
		 (hdr = state_alloc(cp, cp->dir[0].rawlen)) == NULL) ||
		(cp->tupoff = state_alloc(cp, sizeof(uint32) * cp->ntuples)) == NULL ||
		(cp->natts = state_alloc(cp, sizeof(uint16) * cp->ntuples)) == NULL ||
		(cp->bits = state_alloc(cp, sizeof(bits8 *) * cp->ntuples)) == NULL ||
		(cp->data = state_alloc(cp, sizeof(char *) * Max(cp->ncols, 1))) == NULL ||
		(cp->valoff = state_alloc(cp, sizeof(int32 *) * Max(cp->ncols, 1))) == NULL ||
		(cp->pt = state_alloc(cp, sizeof(PointColumn) * Max(cp->ncols, 1))) == NULL ||
		(cp->stride = state_alloc(cp, sizeof(uint16) * Max(cp->ncols, 1))) == NULL ||
		(cp->common = state_alloc(cp, BITMAPLEN(Max(cp->ncols, 1)))) == NULL ||
		(cp->want = state_alloc(cp, sizeof(int16) * Max(cp->ncols, 1))) == NULL)
		return NULL;
	cp->want_skip = NULL;
	cp->want_from = cp->want_upto = -1;
	memset(cp->data, 0, sizeof(char *) * Max(cp->ncols, 1));
	memset(cp->stride, 0, sizeof(uint16) * Max(cp->ncols, 1));
	memset(cp->common, 0xFF, BITMAPLEN(Max(cp->ncols, 1)));
	cp->min_natts = cp->ncols;
	memset(cp->valoff, 0, sizeof(int32 *) * Max(cp->ncols, 1));
	for (int a = 0; a < Max(cp->ncols, 1); a++)
	{
		PointColumn *pc = &cp->pt[a];

		pc->ord = pc->frame = -1;
		pc->kord = 0;
		pc->kval = pc->framelen = pc->hval = pc->hpos = pc->partial = 0;
		pc->at = pc->framebuf = NULL;
	}
	cp->point = point;
	if (dict)
		cp->dict = *dict;
	else
		memset(&cp->dict, 0, sizeof(cp->dict));
	if (cp->dir[0].codec == WC_CODEC_HEADS)
		return open_shared_heads(cp, rawsize, problem) ? cp : NULL;
	if ((*problem = decode_chunk(cp->payload, &cp->dir[0], cp->start[0], hdr, &cp->dict)) != NULL)
		return NULL;
	for (int i = 0; i < cp->ntuples && !bad; i++)
	{
		TupleHead	th = {0};

		bad = !read_tuple_head(hdr, cp->dir[0].rawlen, &hpos, cp->ncols, rawsize - off, &th);
		cp->natts[i] = th.natts;
		cp->bits[i] = th.bits;
		cp->tupoff[i] = off;
		/* which columns every tuple has a value of (decode_column) */
		cp->min_natts = Min(cp->min_natts, th.natts);
		if (th.bits)
			for (int j = 0; j < BITMAPLEN(th.natts); j++)
				cp->common[j] &= th.bits[j];
		off = MAXALIGN(off + th.len);
		bad |= off > rawsize;
	}
	if (bad || off != rawsize || hpos != cp->dir[0].rawlen)
	{
		*problem = "column layout: tuple headers do not match the page";
		return NULL;
	}
	return cp;
}

/* The tuple at offset tupoff of the row layout: its ordinal, or -1. */
int
wc_columns_ordinal(WcColumnsPage *cp, uint32 tupoff)
{
	int			lo = 0,
				hi = cp->ntuples - 1;

	/* rows are mostly read in order: the one after the last asked for */
	if (cp->last + 1 < cp->ntuples && cp->tupoff[cp->last + 1] == tupoff)
		return ++cp->last;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (cp->tupoff[mid] == tupoff)
			return cp->last = mid;
		if (cp->tupoff[mid] < tupoff)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Column a's chunk, decoded (once) into the state; NULL if no room or corrupt. */
static char *
column_data(WcColumnsPage *cp, int a, const char **problem)
{
	const WcColumnChunk *d = &cp->dir[a + 1];
	char	   *data = cp->data[a];

	if (data != NULL && cp->pt[a].partial == 0)
		return data;
	if (data == NULL && (data = state_alloc(cp, Max(d->rawlen, 1))) == NULL)
		return NULL;
	cp->pt[a].partial = 0;		/* a seek's first value decoded the start only */
	if ((*problem = decode_chunk(cp->payload, d, cp->start[a + 1], data, &cp->dict)) != NULL)
		return NULL;
	return cp->data[a] = data;
}

/*
 * Decode column a and find each tuple's value in it.  A fixed-width column
 * every tuple has a value of (most are: key columns are the ones stored
 * NULL) needs no offsets: tuple i's value is at i times its width.  A
 * report reading two int columns spent a fifth of its value fetching
 * placing them one by one.
 */
static bool
decode_column(WcColumnsPage *cp, int a, const char **problem)
{
	const WcColumnChunk *d = &cp->dir[a + 1];
	ColumnInfo	c = {d->attlen, d->attalign, d->byval != 0};
	char	   *data = column_data(cp, a, problem);
	bool		dense = a < cp->min_natts && !att_isnull(a, cp->common);
	int32	   *valoff;
	const uint16 *natts = cp->natts;	/* locals: see wc_columns_fetch_row */
	const bits8 **bits = cp->bits;
	int			ntuples = cp->ntuples;
	uint32		pos = 0;
	bool		bad = false;

	if (data == NULL)
		return false;
	if (dense && back_to_back(&c))
	{
		if (d->rawlen != (uint32) ntuples * (uint32) c.attlen)
		{
			*problem = "column layout: a column does not match its tuples";
			return false;
		}
		cp->stride[a] = (uint16) c.attlen;
		cp->valoff[a] = (int32 *) cp->stride;	/* decoded: not NULL, not read */
		return true;
	}
	if ((valoff = state_alloc(cp, sizeof(int32) * Max(ntuples, 1))) == NULL)
		return false;
	for (int i = 0; i < ntuples && !bad; i++)
	{
		uint32		size;

		valoff[i] = -1;
		if (!dense && (a >= natts[i] || (bits[i] && att_isnull(a, bits[i]))))
			continue;
		size = next_value(&c, data, d->rawlen, &pos);
		bad = size == 0;
		valoff[i] = pos;
		pos += size;
	}
	if (bad || pos != d->rawlen)
	{
		*problem = "column layout: a column does not match its tuples";
		return false;
	}
	cp->valoff[a] = valoff;
	return true;
}

/* Does tuple i have a value of column a (not null, not added after it)? */
static inline bool
has_value(const WcColumnsPage *cp, int a, int i)
{
	return a < cp->natts[i] && !(cp->bits[i] && att_isnull(a, cp->bits[i]));
}

/*
 * Value k of lz4 chunk a, decoding the chunk only as far as it: up to its
 * end for a fixed-width column, else from an estimate of where it ends,
 * twice as far each time the values walked run past what is decoded.  A
 * lookup reads one row of a page, on average half way into its chunks:
 * decoding five small chunks whole was 17% of a lookup reading every
 * column.  The chunk's buffer is marked partial; any later use of the
 * whole chunk decodes it again (column_data).  NULL with *problem set if
 * the chunk is corrupt, or alone if the state has no room.
 */
static char *
lz4_prefix_value(WcColumnsPage *cp, int a, const ColumnInfo *c, uint32 k, uint32 *pos,
				 uint32 *size, const char **problem)
{
	const WcColumnChunk *d = &cp->dir[a + 1];
	const char *src = cp->payload + cp->start[a + 1];
	char	   *data = state_alloc(cp, Max(d->rawlen, 1));
	uint32		target;

	if (data == NULL)
		return NULL;
	if (back_to_back(c))
		target = Min(d->rawlen, (k + 1) * (uint32) c->attlen);
	else
		target = Min(d->rawlen, (uint32) (((uint64) (k + 1) * d->rawlen) /
										  Max(cp->ntuples, 1)) * 5 / 4 + 64);
	for (;;)
	{
		int			n = LZ4_decompress_safe_partial(src, data, d->len, (int) target,
													(int) d->rawlen);

		if (n < 0 || (uint32) n > d->rawlen)
			break;
		if ((*size = kth_value(c, data, n, k, pos)) > 0)
		{
			cp->data[a] = data;
			cp->pt[a].partial = (uint32) n < d->rawlen ? (uint32) n : 0;
			return data;
		}
		if ((uint32) n < target || target == d->rawlen)
			break;				/* the whole chunk does not hold it */
		target = Min(d->rawlen, target * 2);
	}
	*problem = "column layout: a column does not match its tuples";
	return NULL;
}

/*
 * A seek's page: the value of column a of tuple `ordinal` (not null), found
 * without placing every value of the column: a hex-packed value is
 * unpacked alone, a fixed-width one is at its index times its width, any
 * other is found by walking the values before it.  NULL if the column has
 * been asked for another tuple (the caller decodes it whole), or with
 * *problem set if it is corrupt or the state has no room.  Lookups by key
 * read one row of a page: unpacking the page's 110 hashes for one was 3% of
 * a lookup's CPU.  A chunk in frames goes on a frame at a time instead: a
 * seek reading a few rows of a page (a device's 7 days, a keyset page)
 * decoded one frame for its first row and all of the page's frames for
 * the second, most of such a read's CPU.  The frame's values stay valid
 * as the page's do: until the read's next row.
 */
static const char *
point_value(WcColumnsPage *cp, int a, int ordinal, const char **problem)
{
	PointColumn *pc = &cp->pt[a];
	const WcColumnChunk *d = &cp->dir[a + 1];
	ColumnInfo	c = {d->attlen, d->attalign, d->byval != 0};
	uint32		k = 0;
	uint32		pos = 0;
	uint32		size = 0;
	const char *data;

	if (pc->ord == ordinal)
		return pc->at;
	/*
	 * another tuple: a framed chunk decodes the frame holding it, a
	 * hex-packed one unpacks its value; others are decoded whole
	 */
	if (pc->ord >= 0 && d->codec != WC_CODEC_ZSTD_DICT && d->codec != WC_CODEC_HEX)
		return NULL;
	/*
	 * its index among the column's values: the tuples before it that have
	 * one; every tuple, for a column none of the page's tuples lacks
	 */
	if (a < cp->min_natts && !att_isnull(a, cp->common))
		pc->kord = pc->kval = ordinal;
	for (; pc->kord < ordinal; pc->kord++)
		pc->kval += has_value(cp, a, pc->kord);
	for (; pc->kord > ordinal; pc->kord--)
		pc->kval -= has_value(cp, a, pc->kord - 1);
	k = pc->kval;
	if (d->codec == WC_CODEC_HEX)
	{
		const char *src = cp->payload + cp->start[a + 1];
		char	   *v;

		/*
		 * packed: a header byte, then (size - 1) / 2 bytes of digit pairs;
		 * walked from the value found last if it is not past this one
		 */
		if (pc->hval > k)
			pc->hval = pc->hpos = 0;
		pos = pc->hpos;
		for (uint32 j = pc->hval;; j++)
		{
			if (pos >= d->len || !VARATT_IS_1B(&src[pos]) || VARATT_IS_1B_E(&src[pos]))
				goto corrupt;
			size = VARSIZE_1B(&src[pos]);
			if (size < 1 || (size - 1) % 2 != 0 || pos + 1 + (size - 1) / 2 > d->len)
				goto corrupt;
			if (j == k)
				break;
			pos += 1 + (size - 1) / 2;
		}
		pc->hval = k;
		pc->hpos = pos;
		/* one value's room, unpacked into again for the next row's */
		if (pc->framebuf == NULL && (pc->framebuf = state_alloc(cp, VARATT_SHORT_MAX)) == NULL)
			goto no_room;
		v = pc->framebuf;
		init_hex_tables();
		v[0] = src[pos];
		for (uint32 o = 1, i = pos + 1; o < size; o += 2)
			memcpy(v + o, &hex_pairs[(uint8) src[i++]], 2);
		data = v;
		pos = 0;
	}
	else if (d->codec == WC_CODEC_ZSTD_DICT)
	{
		/*
		 * the frame of 16 values holding it (unless decoded last: a read of
		 * a few rows decodes their frames, not the page's), then the values
		 * before it there
		 */
		uint32		cap = WC_DICT_FRAME_VALUES * VARATT_SHORT_MAX;
		uint32		skip = 0;

		if (pc->framebuf == NULL && (pc->framebuf = state_alloc(cp, cap)) == NULL)
			goto no_room;
		if ((*problem = wc_dict_decode_frame(&cp->dict, cp->payload + cp->start[a + 1], d->len,
											 k, pc->framebuf, cap, &pc->framelen, &skip,
											 &pc->frame)) != NULL)
			return NULL;
		if ((size = nth_value(&c, pc->framebuf, pc->framelen, skip, &pos)) == 0)
			goto corrupt;
		data = pc->framebuf;
	}
	else if (d->codec == WC_CODEC_LZ4 && cp->data[a] == NULL && d->rawlen > 0)
	{
		if ((data = lz4_prefix_value(cp, a, &c, k, &pos, &size, problem)) == NULL)
			return NULL;
	}
	else
	{
		if ((data = column_data(cp, a, problem)) == NULL)
			return NULL;
		if ((size = kth_value(&c, data, d->rawlen, k, &pos)) == 0)
			goto corrupt;
	}
	pc->ord = ordinal;
	return pc->at = (char *) data + pos;

corrupt:
	*problem = "column layout: a column does not match its tuples";
	return NULL;
no_room:
	*problem = NULL;
	return NULL;
}

/*
 * Columns [from, upto) (0-based) of tuple `ordinal` into values/isnull:
 * those `skip` marks are NULL, those the tuple was written without (added
 * later) take their defaults.  Returns the first column not filled: upto,
 * or an earlier one if the state has no room to decode it, or with
 * *problem set if it is corrupt.  One call per row, not per column: this
 * runs for every row a report reads.
 */
int
wc_columns_fetch_row(WcColumnsPage *cp, int ordinal, TupleDesc desc, const bool *skip,
					 int from, int upto, Datum *values, bool *isnull, const char **problem)
{
	/* in locals: stores into values[] would reload them (-fno-strict-aliasing) */
	int			natts = cp->natts[ordinal];
	const bits8 *bits = cp->bits[ordinal];
	char	  **data = cp->data;
	int32	  **valoff = cp->valoff;
	const uint16 *stride = cp->stride;
	const int16 *want = cp->want;
	int			nwant;

	*problem = NULL;
	/*
	 * The columns not skipped, listed once a page: a report reading two of
	 * nine columns walks two, not nine, per row.  The skipped ones are NULL.
	 * Columns past the page's (added after its tuples were written) take
	 * their defaults below.
	 */
	if (cp->want_skip != skip || cp->want_from != from || cp->want_upto != upto)
	{
		cp->nwant = 0;
		for (int a = from; a < Min(upto, cp->ncols); a++)
			if (!skip[a])
				cp->want[cp->nwant++] = (int16) a;
		cp->want_skip = skip;
		cp->want_from = from;
		cp->want_upto = upto;
	}
	nwant = cp->nwant;
	memcpy(isnull + from, skip + from, upto - from);
	for (int a = Max(from, cp->ncols); a < upto; a++)
		if (!skip[a])
			values[a] = getmissingattr(desc, a + 1, &isnull[a]);
	for (int w = 0; w < nwant; w++)
	{
		int			a = want[w];
		Form_pg_attribute att;
		const char *p;

		if (a < natts && bits && att_isnull(a, bits))
		{
			values[a] = (Datum) 0;
			isnull[a] = true;
			continue;
		}
		if (a >= natts)
		{
			values[a] = getmissingattr(desc, a + 1, &isnull[a]);
			continue;
		}
		att = TupleDescAttr(desc, a);
		if (unlikely(valoff[a] == NULL))
		{
			const WcColumnChunk *d = &cp->dir[a + 1];

			/* the values are handed out as the table's column says they are */
			if (d->attlen != att->attlen || d->attalign != att->attalign ||
				(d->byval != 0) != att->attbyval)
			{
				*problem = "column layout: a column's description does not match the table";
				return a;
			}
			if (cp->point && (p = point_value(cp, a, ordinal, problem)) != NULL)
				goto fetch;
			if (*problem != NULL || !decode_column(cp, a, problem))
				return a;
		}
		p = data[a] + (stride[a] ? (uint32) ordinal * stride[a] : valoff[a][ordinal]);
fetch:
		values[a] = att->attbyval ? fetch_att(p, true, att->attlen) : PointerGetDatum(p);
		isnull[a] = false;
	}
	return upto;
}
