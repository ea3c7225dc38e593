/*
 * storage/keypack.c — pack and unpack a run's key block (run formats 10, 11).
 *
 * A packed row is a tag byte, then:
 *   xid (4 bytes)            if TAG_XID: it differs from the previous row's
 *   cid (varint)             if TAG_CID: it differs from the previous row's
 *   flags (varint)           if TAG_FLAGS: not 0
 *   keylen, pklen (varint)   if TAG_KEYLEN, TAG_PKLEN: they differ
 *   expire_at (zigzag)       if TAG_EXPIRE: not 0; minus write_ts
 *   tupoff (zigzag)          if TAG_TUPOFF: minus the predicted offset (the
 *                            previous tuple's end; a row without a tuple:
 *                            its key part, as the writer stores it)
 *   write_ts (zigzag)        minus the previous row's
 *   extra (varint)           len - sizeof(WcRowHeader) - keylen
 *   shared (varint)          bytes of the key equal to the previous key's
 *   the rest of the key
 * The first row is predicted from a frozen row of empty key written at 0.
 * Offsets are not stored: rows are MAXALIGNed one after the other.
 *
 * Format 11 (WC_KEYS_STEPS): the first row of each step of WC_KEYS_STEP
 * rows after the first step is predicted from the block's first row, not
 * from the row before it, so it can be read without the rows before it;
 * after the rows, a WcKeysStep per such step says where it starts, packed
 * and laid out.  A lookup reads the first row of a few steps (binary
 * search) and lays out one or two steps, instead of following the rows up
 * to its key: about a fifth of a cached lookup's CPU, for about 2% more
 * key bytes (src/README.md, "Steps in packed key blocks").
 */
#include "postgres.h"

#include "access/transam.h"
#include "storage/keypack.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

#define TAG_XID		0x01
#define TAG_CID		0x02
#define TAG_FLAGS	0x04
#define TAG_KEYLEN	0x08
#define TAG_PKLEN	0x10
#define TAG_EXPIRE	0x20
#define TAG_TUPOFF	0x40
#define TAG_ALL		0x7F

#define MAX_PACKED_ROW_OVERHEAD 64	/* tag, xid and nine varints, rounded up */

static inline char *
put_varint(char *p, uint64 v)
{
	while (v >= 0x80)
	{
		*p++ = (char) (v | 0x80);
		v >>= 7;
	}
	*p++ = (char) v;
	return p;
}

static inline uint64
zigzag(int64 v)
{
	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

static inline int64
unzigzag(uint64 v)
{
	return (int64) (v >> 1) ^ -(int64) (v & 1);
}

/* false if the varint runs past end or over 64 bits */
static bool
get_varint_checked(const char **pp, const char *end, uint64 *out)
{
	const unsigned char *p = (const unsigned char *) *pp;
	uint64		v = 0;

	for (int shift = 0; shift < 64; shift += 7)
	{
		if ((const char *) p >= end)
			return false;
		v |= (uint64) (*p & 0x7F) << shift;
		if ((*p++ & 0x80) == 0)
		{
			*out = v;
			*pp = (const char *) p;
			return true;
		}
	}
	return false;
}

/* the same; away from the end a varint is read without checking it */
static inline bool
get_varint(const char **pp, const char *end, uint64 *out)
{
	const unsigned char *p = (const unsigned char *) *pp;
	uint64		v;

	if (unlikely(end - *pp < 10))
		return get_varint_checked(pp, end, out);
	v = *p++;
	if (likely(v < 0x80))
	{
		*out = v;
		*pp = (const char *) p;
		return true;
	}
	v &= 0x7F;
	for (int shift = 7; shift < 64; shift += 7)
	{
		uint64		b = *p++;

		v |= (b & 0x7F) << shift;
		if (b < 0x80)
		{
			*out = v;
			*pp = (const char *) p;
			return true;
		}
	}
	return false;
}

/*
 * Keys are short: copied in words of eight bytes, up to seven past the
 * end (callers leave room and clear the padding after), because gcc turns
 * a memcpy of unknown length into "rep movsq", which costs more than the
 * copy (a third of the unpacking of uuid keys).
 */
static inline void
copy_words(char *dst, const char *src, Size n)
{
	for (Size i = 0; i < n; i += 8)
		memcpy(dst + i, src + i, 8);
}

static inline uint16
shared_prefix(const char *a, uint16 alen, const char *b, uint16 blen)
{
	uint16		n = Min(alen, blen);
	uint16		i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* What a row is predicted from (keypack.h). */
typedef WcKeysPrediction Prediction;

static const Prediction first_row = {FrozenTransactionId, FirstCommandId, 0, 0, 0, 0, NULL};

/* the row's tuple offset, if it follows the previous tuple */
static inline int64
predicted_tupoff(const Prediction *pr, const WcRowHeader *row, Size keypart)
{
	return row->len > keypart ? pr->next_at : (int64) keypart;
}

static inline void
follow_row(Prediction *pr, const WcRowHeader *row, Size keypart)
{
	pr->xid = row->xid;
	pr->cid = row->cid;
	pr->keylen = row->keylen;
	pr->pklen = row->pklen;
	pr->write_ts = row->write_ts;
	if (row->len > keypart)
		pr->next_at = (int64) row->tupoff + MAXALIGN(row->len - keypart);
	pr->key = WcRowKey(row);
}

/*
 * Rows a bounded unpack lays out between two looks at where it is (the
 * last row of each step is compared with the upper bound, the first row of
 * each step with the lower bound): the rows of a format 11 step.
 */
#define UNPACK_STEP WC_KEYS_STEP
#define MAX_STEPS	(WC_MAX_ROWS_PER_BLOCK / UNPACK_STEP + 1)

static inline int
step_count(int nrows)
{
	return (nrows + UNPACK_STEP - 1) / UNPACK_STEP;
}

/* the packed rows' steps after the first, or 0 if they are not in steps */
static inline Size
table_bytes(int nrows, bool steps)
{
	return steps && nrows > UNPACK_STEP ? sizeof(WcKeysStep) * (step_count(nrows) - 1) : 0;
}

/* rows as wc_keys_pack packs them; *too_far: a step starts past a uint16 */
static Size
pack_rows(const char *rows, const uint32 *offsets, int nrows, Size rowbytes,
		  char *out, bool steps, bool *too_far)
{
	char	   *p = out;
	Prediction	pr = first_row;
	Prediction	base = first_row;
	Size		off = 0;
	WcKeysStep	table[MAX_STEPS];
	Size		tablelen = table_bytes(nrows, steps);

	*too_far = false;
	if (nrows > WC_MAX_ROWS_PER_BLOCK)
		return 0;
	for (int i = 0; i < nrows; i++)
	{
		const WcRowHeader *row = (const WcRowHeader *) (rows + off);
		Size		keypart;
		int64		predicted;
		uint16		shared;
		char	   *tag;

		if (offsets[i] != off || off + sizeof(WcRowHeader) > rowbytes)
			return 0;
		if (steps && i > 0 && i % UNPACK_STEP == 0)
		{
			if (p - out > PG_UINT16_MAX || off > PG_UINT16_MAX)
			{
				*too_far = true;
				return 0;
			}
			table[i / UNPACK_STEP - 1].packed = (uint16) (p - out);
			table[i / UNPACK_STEP - 1].row = (uint16) off;
			pr = base;
		}
		keypart = WcRowTupleOffset(row->keylen);
		if (off + keypart > rowbytes || row->len < keypart ||
			row->blockoff != 0 || (row->flags & WC_ROW_IN_BLOCK) ||
			p - out + MAX_PACKED_ROW_OVERHEAD + row->keylen > rowbytes)
			return 0;

		tag = p++;
		*tag = 0;
		if (row->xid != pr.xid)
		{
			*tag |= TAG_XID;
			memcpy(p, &row->xid, sizeof(TransactionId));
			p += sizeof(TransactionId);
		}
		if (row->cid != pr.cid)
		{
			*tag |= TAG_CID;
			p = put_varint(p, row->cid);
		}
		if (row->flags != 0)
		{
			*tag |= TAG_FLAGS;
			p = put_varint(p, row->flags);
		}
		if (row->keylen != pr.keylen)
		{
			*tag |= TAG_KEYLEN;
			p = put_varint(p, row->keylen);
		}
		if (row->pklen != pr.pklen)
		{
			*tag |= TAG_PKLEN;
			p = put_varint(p, row->pklen);
		}
		if (row->expire_at != 0)
		{
			*tag |= TAG_EXPIRE;
			p = put_varint(p, zigzag((int64) ((uint64) row->expire_at - (uint64) row->write_ts)));
		}
		predicted = predicted_tupoff(&pr, row, keypart);
		if (row->tupoff != predicted)
		{
			*tag |= TAG_TUPOFF;
			p = put_varint(p, zigzag((int64) row->tupoff - predicted));
		}
		p = put_varint(p, zigzag((int64) ((uint64) row->write_ts - (uint64) pr.write_ts)));
		p = put_varint(p, row->len - sizeof(WcRowHeader) - row->keylen);
		shared = pr.key ? shared_prefix(pr.key, pr.keylen, WcRowKey(row), row->keylen) : 0;
		p = put_varint(p, shared);
		memcpy(p, WcRowKey(row) + shared, row->keylen - shared);
		p += row->keylen - shared;
		follow_row(&pr, row, keypart);
		if (i == 0)
			base = pr;
		off += keypart;
	}
	if (off != rowbytes || p - out + tablelen > rowbytes)
		return 0;
	memcpy(p, table, tablelen);
	return p - out + tablelen;
}

/*
 * Pack the nrows rows of a key block (rowbytes of rows, at `offsets`) into
 * out, which has room for rowbytes.  Returns the packed length, or 0 if
 * the rows are not laid out as the reader will lay them out again or
 * packing would not make them smaller (the block is then stored as is).
 * *steps: asked for in steps (format 11); false on return if they are not
 * (a step would start past where a WcKeysStep can say).
 */
Size
wc_keys_pack(const char *rows, const uint32 *offsets, int nrows,
			 Size rowbytes, char *out, bool *steps)
{
	bool		too_far;
	Size		n = pack_rows(rows, offsets, nrows, rowbytes, out, *steps, &too_far);

	if (too_far)
	{
		*steps = false;
		n = pack_rows(rows, offsets, nrows, rowbytes, out, false, &too_far);
	}
	return n;
}

/* One packed row read (parse_row): its header as laid out, and its key as
 * the bytes it shares with the previous key and the rest. */
typedef struct PackedRow
{
	WcRowHeader h;
	Size		keypart;
	uint16		shared;
	const char *suffix;			/* keylen - shared bytes */
} PackedRow;

/*
 * Read the packed row at *pp into out, predicted from pr; NULL or what is
 * wrong.  Only what unpacking itself relies on is checked here: what a
 * row's fields mean (pklen, flags) wc_decode_block checks, as for unpacked
 * blocks.
 */
static pg_attribute_always_inline const char *
parse_row(const char **pp, const char *end, const Prediction *pr, PackedRow *out)
{
	const char *p = *pp;
	WcRowHeader *h = &out->h;
	uint8		tag;
	uint64		v,
				flags = 0,
				expire = 0,
				tupdelta = 0,
				extra,
				shared;
	int64		at;

	h->xid = pr->xid;
	h->cid = pr->cid;
	h->keylen = pr->keylen;
	h->pklen = pr->pklen;
	if (p >= end)
		return "packed key block ends early";
	tag = (uint8) *p++;
	if (tag & ~TAG_ALL)
		return "invalid packed key row";
	if (tag & TAG_XID)
	{
		if (end - p < (ptrdiff_t) sizeof(TransactionId))
			return "packed key block ends early";
		memcpy(&h->xid, p, sizeof(TransactionId));
		p += sizeof(TransactionId);
	}
	if ((tag & TAG_CID) && !get_varint(&p, end, &v))
		return "invalid packed key row";
	else if (tag & TAG_CID)
		h->cid = (CommandId) v;
	if ((tag & TAG_FLAGS) && !get_varint(&p, end, &flags))
		return "invalid packed key row";
	if (tag & TAG_KEYLEN)
	{
		if (!get_varint(&p, end, &v) || v > WC_MAX_KEY_SIZE)
			return "invalid packed key row";
		h->keylen = (uint16) v;
	}
	if (tag & TAG_PKLEN)
	{
		if (!get_varint(&p, end, &v) || v > WC_MAX_KEY_SIZE)
			return "invalid packed key row";
		h->pklen = (uint16) v;
	}
	if ((tag & TAG_EXPIRE) && !get_varint(&p, end, &expire))
		return "invalid packed key row";
	if ((tag & TAG_TUPOFF) && !get_varint(&p, end, &tupdelta))
		return "invalid packed key row";
	if (!get_varint(&p, end, &v) || !get_varint(&p, end, &extra) ||
		!get_varint(&p, end, &shared))
		return "invalid packed key row";
	if (flags > PG_UINT16_MAX ||
		extra > PG_UINT32_MAX - sizeof(WcRowHeader) - h->keylen ||
		shared > Min(h->keylen, pr->keylen) ||
		end - p < (ptrdiff_t) (h->keylen - shared))
		return "invalid packed key row";
	out->keypart = WcRowTupleOffset(h->keylen);
	h->write_ts = (int64) ((uint64) pr->write_ts + (uint64) unzigzag(v));
	h->expire_at = (tag & TAG_EXPIRE) ?
		(int64) ((uint64) h->write_ts + (uint64) unzigzag(expire)) : 0;
	h->len = (uint32) (sizeof(WcRowHeader) + h->keylen + extra);
	h->flags = (uint16) flags;
	h->blockoff = 0;
	at = predicted_tupoff(pr, h, out->keypart) + unzigzag(tupdelta);
	if (at < PG_INT32_MIN || at > PG_INT32_MAX)
		return "invalid packed key row";
	h->tupoff = (int32) at;
	out->shared = (uint16) shared;
	out->suffix = p;
	*pp = p + (h->keylen - shared);
	return NULL;
}

/* Where step s (>= 1) of a format 11 block starts. */
static inline WcKeysStep
step_at(const WcKeysCursor *c, int s)
{
	WcKeysStep	st;

	memcpy(&st, c->table + (s - 1) * sizeof(WcKeysStep), sizeof(st));
	return st;
}

/*
 * Format 11: the row at c->row starts a step (not the first): it is
 * predicted from the block's first row, put into *pr, and it must be
 * where the step table says (whole-page decodings and a lazy read's first
 * layout check that; later layouts have no table).  NULL or what is wrong.
 */
static inline const char *
restart_step(const WcKeysCursor *c, WcKeysPrediction *pr)
{
	if (!c->stepped || c->row == 0 || c->row % UNPACK_STEP != 0)
		return NULL;
	if (c->table && (c->p != c->origin + step_at(c, c->row / UNPACK_STEP).packed ||
					 c->off != step_at(c, c->row / UNPACK_STEP).row))
		return "packed key steps do not match their rows";
	*pr = c->base;
	return NULL;
}

/* Where step s (>= 1) starts, if that is inside the block. */
static const char *
checked_step(const WcKeysCursor *c, int s, WcKeysStep *st)
{
	*st = step_at(c, s);
	if (st->packed >= c->end - c->origin || st->row >= c->rowsend)
		return "invalid packed key step";
	return NULL;
}

/*
 * Format 11: what every step after the first starts from, the block's
 * first row, into c->base (its key where the packed rows are: nothing of
 * it is shared with first_row).
 */
static const char *
read_base(WcKeysCursor *c)
{
	const char *p = c->origin;
	PackedRow	pk;
	const char *problem = parse_row(&p, c->end, &first_row, &pk);

	if (problem)
		return problem;
	c->base = first_row;
	follow_row(&c->base, &pk.h, pk.keypart);
	c->base.key = pk.suffix;
	return NULL;
}

/*
 * Format 11: put c at the first row of the step before the first one whose
 * first row is >= lo (the last step if there is none), reading the first
 * rows of a few steps (binary search); skip_below goes on from there.
 */
static const char *
seek_step(WcKeysCursor *c, const char *lo, int lolen)
{
	char		key[WC_MAX_KEY_SIZE + 8];
	int			from = 1,
				to = step_count(c->nrows);	/* the first step >= lo is in [from, to] */
	WcKeysStep	st;
	const char *problem;

	while (from < to)
	{
		int			mid = (from + to) / 2;
		const char *p;
		PackedRow	pk;

		if ((problem = checked_step(c, mid, &st)) != NULL)
			return problem;
		p = c->origin + st.packed;
		if ((problem = parse_row(&p, c->end, &c->base, &pk)) != NULL)
			return problem;
		memcpy(key, c->base.key, pk.shared);
		memcpy(key + pk.shared, pk.suffix, pk.h.keylen - pk.shared);
		if (wc_compare_keys(key, pk.h.keylen, lo, lolen) >= 0)
			to = mid;
		else
			from = mid + 1;
	}
	if (from > 1)
	{
		if ((problem = checked_step(c, from - 1, &st)) != NULL)
			return problem;
		c->p = c->origin + st.packed;
		c->off = st.row;
		c->row = (from - 1) * UNPACK_STEP;
		c->pr = c->base;
	}
	return NULL;
}

/*
 * A forward read's rows below lo, from c on (the step seek_step put it at;
 * format 10, which has no steps, the block's first row), followed without
 * being laid out: no forward read from lo looks at them.  A lookup by key
 * then lays out its row and the one after (lay_out's exact_hi), not the
 * step of 32 rows around it: about 5k of a cached lookup's 100k
 * instructions (stop 45).  On return c
 * is at the first row >= lo (or past the last row), and c->pr.key points
 * at that row's shared prefix: in key (WC_MAX_KEY_SIZE + 8 bytes, the
 * caller's), or in the packed rows.
 */
static const char *
skip_below(WcKeysCursor *c, const char *lo, int lolen, char *key)
{
	const char *end = c->end;
	int			nrows = c->nrows;

	while (c->row < nrows)
	{
		WcKeysPrediction pr = c->pr;
		const char *p = c->p;
		PackedRow	pk;
		const char *problem;

		if ((problem = restart_step(c, &pr)) != NULL ||
			(problem = parse_row(&p, end, &pr, &pk)) != NULL)
			return problem;
		if (c->off + pk.keypart > c->rowsend)
			return "packed key rows overrun their block";
		/* the shared prefix stays where it is: lay_out reads it from there */
		if (pr.key != key && pk.shared > 0)
			memcpy(key, pr.key, pk.shared);
		memcpy(key + pk.shared, pk.suffix, pk.h.keylen - pk.shared);
		if (wc_compare_keys(key, pk.h.keylen, lo, lolen) >= 0)
			return NULL;
		follow_row(&pr, &pk.h, pk.keypart);
		pr.key = key;
		c->pr = pr;
		c->p = p;
		c->off += pk.keypart;
		c->row++;
	}
	return NULL;
}

/*
 * Lay out the rows from c on into dst: up to the block's end, or to the
 * end of a step whose last row is past hi (no later row is in the read's
 * range; with exact_hi, to that row), or, when min_rows >= 0 (a lazy
 * read), to the end of the first step that makes at least min_rows:
 * c->pending says rows are left for the read to ask for
 * (wc_keys_unpack_more).  *unpacked is the number of rows laid out from
 * the block's first.
 */
static const char *
lay_out(WcKeysCursor *c, char *dst, const char *hi, int hilen, int min_rows,
		bool exact_hi, int *unpacked)
{
	/* in locals: stores into dst would reload them (-fno-strict-aliasing) */
	const char *end = c->end;
	Size		rowsend = c->rowsend;
	int			nrows = c->nrows;
	uint32	   *offsets = (uint32 *) (dst + rowsend);
	int			start = c->row;

	c->pending = false;
	for (int i = c->row; i < nrows; i++)
	{
		WcRowHeader *row = (WcRowHeader *) (dst + c->off);
		PackedRow	pk;
		const char *problem;
		uint16		keylen,
					shared;

		/* c->row is i: it moves on with each row laid out */
		if ((problem = restart_step(c, &c->pr)) != NULL ||
			(problem = parse_row(&c->p, end, &c->pr, &pk)) != NULL)
			return problem;
		keylen = pk.h.keylen;
		shared = pk.shared;
		if (c->off + pk.keypart > rowsend)
			return "packed key rows overrun their block";
		*row = pk.h;
		if (likely(c->off + pk.keypart + 8 <= rowsend && end - pk.suffix >= keylen - shared + 8))
		{
			static const char zeros[8] = {0};

			/*
			 * the words past the key land in padding or the next row; the
			 * padding (under 8 bytes) is cleared by one word, not memset
			 */
			copy_words(WcRowKey(row), c->pr.key, shared);
			copy_words(WcRowKey(row) + shared, pk.suffix, keylen - shared);
			memcpy(WcRowKey(row) + keylen, zeros, 8);
		}
		else
		{
			if (shared > 0)
				memcpy(WcRowKey(row), c->pr.key, shared);
			memcpy(WcRowKey(row) + shared, pk.suffix, keylen - shared);
			memset(WcRowKey(row) + keylen, 0, pk.keypart - sizeof(WcRowHeader) - keylen);
		}
		offsets[i] = (uint32) c->off;
		follow_row(&c->pr, row, pk.keypart);
		c->off += pk.keypart;
		c->row = i + 1;
		if (i + 1 == nrows || ((i + 1) % UNPACK_STEP != 0 && !exact_hi))
			continue;
		if (hi && wc_compare_keys(WcRowKey(row), Min(keylen, hilen), hi, hilen) > 0)
		{
			*unpacked = i + 1;
			return NULL;
		}
		if ((i + 1) % UNPACK_STEP != 0)
			continue;
		if (min_rows >= 0 && i + 1 - start >= min_rows)
		{
			*unpacked = i + 1;
			c->pending = true;
			return NULL;
		}
	}
	if (c->p != end || c->off != rowsend)
		return "packed key block does not match its rows";
	*unpacked = nrows;
	return NULL;
}

/*
 * Rows a lazy read lays out when it asks for more: a step first (a read of
 * the first rows of a partition, LIMIT, rarely needs more), then twice as
 * many each time, up to this (a long read costs few calls).
 */
#define UNPACK_MORE_MAX (8 * UNPACK_STEP)

/*
 * Unpack plen bytes of packed rows into dst, as wc_decode_block expects a
 * decompressed key block: nrows rows, then their offsets, rawsize bytes in
 * all.  NULL or what is wrong (the rows must fill exactly that).
 *
 * With lo and hi (a forward read's bounds, compared as the merge's
 * below_lo and above_hi do), the rows laid out may be only the ones from
 * *first to *unpacked: the unpacking follows the rows without laying them
 * out up to the read's first row, the first at or past lo (no row before
 * it is in the read's range: seek_step, skip_below), and stops once the
 * last row of a step is past hi (no row after it is).  With more too, it
 * lays out from there to the end of that row's step, or to the first row
 * past hi, with more->pending if rows are left: a lookup by
 * key lays out its row and the next, a read of the first rows of a
 * partition (LIMIT) a step or two, and a longer read asks for the rest as
 * it gets there (wc_keys_unpack_more, from *more, with [more->p,
 * more->end) moved where the caller keeps it).  Without more, the rows
 * are laid out to the end or to hi's step.  The rows not laid out are not
 * checked past what following them needs.
 */
const char *
wc_keys_unpack(const char *packed, Size plen, int nrows, bool steps, char *dst,
			   Size rawsize, const char *lo, int lolen, const char *hi, int hilen,
			   int *first, int *unpacked, WcKeysCursor *more)
{
	WcKeysCursor local;
	WcKeysCursor *c = more ? more : &local;
	char		key[WC_MAX_KEY_SIZE + 8];	/* skip_below's */
	const char *problem = NULL;
	Size		tablelen = table_bytes(nrows, steps);

	if (rawsize < (Size) nrows * sizeof(uint32) || nrows > WC_MAX_ROWS_PER_BLOCK ||
		plen <= tablelen)
		return "invalid packed key block";
	c->pr = first_row;
	c->base = first_row;
	c->stepped = tablelen > 0;
	c->origin = packed;
	c->table = c->stepped ? packed + plen - tablelen : NULL;
	c->p = packed;
	c->off = 0;
	c->row = 0;
	c->end = packed + plen - tablelen;
	c->rowsend = rawsize - (Size) nrows * sizeof(uint32);
	c->nrows = nrows;
	c->pending = false;
	c->more_rows = UNPACK_STEP;
	if (c->stepped)
		problem = read_base(c);
	if (problem == NULL && lo && c->stepped)
		problem = seek_step(c, lo, lolen);
	if (problem == NULL && lo)
		problem = skip_below(c, lo, lolen, key);
	if (problem)
		return problem;
	*first = c->row;
	/* a lazy read's cursor then points at the last row laid out, in dst */
	return lay_out(c, dst, hi, hilen, more ? 1 : -1, lo && more, unpacked);
}

/*
 * Move what a pending cursor still reads of its packed rows to `at`, where
 * the caller keeps them: fewer bytes than the packed block's (the rows
 * laid out are not moved), and 8 past them are read.  Format 11 keeps the
 * block's first key there too (its steps start from it).
 */
void
wc_keys_cursor_keep(WcKeysCursor *c, char *at)
{
	Size		rest = c->end - c->p;
	Size		used = 0;

	Assert(c->pending);
	if (c->stepped)
	{
		memcpy(at, c->base.key, c->base.keylen);
		c->base.key = at;
		used = c->base.keylen;
	}
	memcpy(at + used, c->p, rest);
	c->p = at + used;
	c->end = c->p + rest;
	c->origin = NULL;
	c->table = NULL;			/* the steps were checked up to here */
}

/*
 * Lay out more rows of a block whose unpacking stopped with rows pending
 * (c as wc_keys_unpack or the last call left it, dst the same block):
 * c->more_rows more, or up to hi's step, or to the end.  *unpacked as
 * for wc_keys_unpack.
 */
const char *
wc_keys_unpack_more(WcKeysCursor *c, char *dst, const char *hi, int hilen, int *unpacked)
{
	int			rows = c->more_rows;

	Assert(c->pending);
	c->more_rows = Min(2 * c->more_rows, UNPACK_MORE_MAX);
	return lay_out(c, dst, hi, hilen, rows, false, unpacked);
}
