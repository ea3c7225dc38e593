/*
 * keyrange.c — a run's key-column ranges: per partition-key column and for
 * the first clustering column, the least and greatest encoded value of the
 * run's versions.  A partition read skips a run whose ranges exclude its
 * partition (no bloom probe, no index descent), and a merge opens a run
 * only once its first possible key is reached (src/README.md, "Key-column
 * ranges").  Encoded columns are self-delimiting and compare as bytes, so
 * no value is decoded.
 *
 * Serialized: ncols (1 byte), then per column min and max, each as a
 * uint16 length and the bytes.
 */
#include "postgres.h"

#include "widecol.h"
#include "storage/keyenc.h"
#include "storage/keyrange.h"
#include "storage/row.h"

/* Columns a table's runs keep ranges for: 0 for tables without a key. */
static int
range_columns(const WcTableInfo *info)
{
	if (WcTableIsKeyless(info))
		return 0;
	return info->npk + Min(info->nck, 1);
}

void
wc_key_ranges_begin(WcKeyRangeBuilder *b, const WcTableInfo *info)
{
	b->ncols = range_columns(info);
	b->any = false;
	for (int i = 0; i < b->ncols; i++)
	{
		initStringInfo(&b->min[i]);
		initStringInfo(&b->max[i]);
	}
}

static void
set_bytes(StringInfo s, const char *p, int len)
{
	resetStringInfo(s);
	appendBinaryStringInfo(s, p, len);
}

/* Widen the ranges to take in one more key. */
void
wc_key_ranges_add(WcKeyRangeBuilder *b, const WcTableInfo *info,
				  const char *key, int keylen)
{
	const char *p = key;
	const char *end = key + keylen;

	for (int i = 0; i < b->ncols; i++)
	{
		int			len = wc_key_component_len(&info->cols[i], p, end);

		if (len < 0)
			elog(ERROR, "widecol: malformed key (column %d)", i + 1);
		if (!b->any || wc_compare_keys(p, len, b->min[i].data, b->min[i].len) < 0)
			set_bytes(&b->min[i], p, len);
		if (!b->any || wc_compare_keys(p, len, b->max[i].data, b->max[i].len) > 0)
			set_bytes(&b->max[i], p, len);
		p += len;
	}
	b->any = true;
}

static void
put_bytes(StringInfo out, const StringInfoData *s)
{
	uint16		len = (uint16) s->len;

	appendBinaryStringInfo(out, (const char *) &len, sizeof(len));
	appendBinaryStringInfo(out, s->data, s->len);
}

/* The serialized ranges; nothing when there are none (no key, no row). */
void
wc_key_ranges_serialize(const WcKeyRangeBuilder *b, StringInfo out)
{
	uint8		n = (uint8) b->ncols;

	if (b->ncols == 0 || !b->any)
		return;
	appendBinaryStringInfo(out, (const char *) &n, 1);
	for (int i = 0; i < b->ncols; i++)
	{
		put_bytes(out, &b->min[i]);
		put_bytes(out, &b->max[i]);
	}
}

static bool
get_bytes(const char **p, const char *end, const char **bytes, uint16 *len)
{
	if (end - *p < (long) sizeof(uint16))
		return false;
	memcpy(len, *p, sizeof(uint16));
	*p += sizeof(uint16);
	if (*len > WC_MAX_KEY_SIZE || end - *p < *len)
		return false;
	*bytes = *p;
	*p += *len;
	return true;
}

/* Parse serialized ranges; false when they are malformed. */
bool
wc_key_ranges_parse(const char *data, int len, WcKeyRanges *out)
{
	const char *p = data;
	const char *end = data + len;

	if (len < 1)
		return false;
	out->ncols = (uint8) *p++;
	if (out->ncols < 1 || out->ncols > WC_MAX_KEY_COLUMNS)
		return false;
	for (int i = 0; i < out->ncols; i++)
		if (!get_bytes(&p, end, &out->min[i], &out->minlen[i]) ||
			!get_bytes(&p, end, &out->max[i], &out->maxlen[i]))
			return false;
	return p == end;
}

/*
 * Where the columns of partition key pk start: offs[i] for column i, and
 * offs[n] its end.  The number of columns, or -1 if pk does not split.
 */
int
wc_key_split(const WcTableInfo *info, const char *pk, int pklen, uint16 *offs)
{
	const char *end = pk + pklen;
	int			off = 0;

	for (int i = 0; i < info->npk; i++)
	{
		int			len = wc_key_component_len(&info->cols[i], pk + off, end);

		if (len < 0)
			return -1;
		offs[i] = off;
		off += len;
	}
	offs[info->npk] = off;
	return info->npk;
}

/*
 * Can the run hold no version of partition pk (split by wc_key_split): is
 * one of its columns outside the run's range for that column?
 */
bool
wc_key_ranges_exclude_split(const WcKeyRanges *r, const char *pk, const uint16 *offs, int n)
{
	if (n < 0 || r->ncols < n)
		return false;
	for (int i = 0; i < n; i++)
	{
		const char *p = pk + offs[i];
		int			len = offs[i + 1] - offs[i];

		if (wc_compare_keys(p, len, r->min[i], r->minlen[i]) < 0 ||
			wc_compare_keys(p, len, r->max[i], r->maxlen[i]) > 0)
			return true;
	}
	return false;
}

/* The same for a partition key not split yet. */
bool
wc_key_ranges_exclude_partition(const WcKeyRanges *r, const WcTableInfo *info,
								const char *pk, int pklen)
{
	uint16		offs[WC_MAX_KEY_COLUMNS + 1];

	return wc_key_ranges_exclude_split(r, pk, offs, wc_key_split(info, pk, pklen, offs));
}

/*
 * The first possible key of partition pk in the run (pk ‖ least first
 * clustering column) or, with upper, the prefix every key of it is at or
 * below (pk ‖ greatest first clustering column), into out (room for
 * pklen + WC_MAX_KEY_SIZE bytes).  Its length, or -1 without a clustering
 * column range.
 */
int
wc_key_ranges_bound(const WcKeyRanges *r, const WcTableInfo *info,
					const char *pk, int pklen, bool upper, char *out)
{
	int			c = info->npk;

	if (info->nck == 0 || r->ncols <= c)
		return -1;
	memcpy(out, pk, pklen);
	if (upper)
		memcpy(out + pklen, r->max[c], r->maxlen[c]);
	else
		memcpy(out + pklen, r->min[c], r->minlen[c]);
	return pklen + (upper ? r->maxlen[c] : r->minlen[c]);
}
