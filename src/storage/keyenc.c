/*
 * keyenc.c — order-preserving encoding of partition + clustering keys.
 *
 * memcmp order of the encoding equals SQL order of the values (byte order
 * for text, i.e. the "C" collation); DESC columns are complemented.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

#include "widecol.h"
#include "storage/keyenc.h"
#include "storage/tableinfo.h"

bool
wc_type_is_supported(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
			return true;
		default:
			return false;
	}
}

const char *
wc_supported_types_list(void)
{
	return "smallint, integer, bigint, boolean, date, timestamp, timestamptz, uuid, text, varchar, bytea";
}

static void
append_uint_be(StringInfo buf, uint64 v, int nbytes)
{
	char		b[8];

	for (int i = nbytes - 1; i >= 0; i--)
	{
		b[i] = (char) (v & 0xFF);
		v >>= 8;
	}
	appendBinaryStringInfo(buf, b, nbytes);
}

/* Signed integers: flip the sign bit so that memcmp order = numeric order. */
static void
append_int(StringInfo buf, int64 v, int nbytes)
{
	uint64		u = (uint64) v ^ (UINT64CONST(1) << (nbytes * 8 - 1));

	if (nbytes < 8)
		u &= (UINT64CONST(1) << (nbytes * 8)) - 1;
	append_uint_be(buf, u, nbytes);
}

/* Bytes, 0x00 escaped as 00 FF, terminated by 00 00: prefix-free. */
static void
append_bytes(StringInfo buf, const char *p, int len)
{
	const char *end = p + len;

	while (p < end)
	{
		const char *z = memchr(p, 0, end - p);
		int			n = z ? (int) (z - p) : (int) (end - p);

		appendBinaryStringInfo(buf, p, n);
		p += n;
		if (z)
		{
			appendBinaryStringInfo(buf, "\0\xff", 2);
			p++;
		}
	}
	appendBinaryStringInfo(buf, "\0\0", 2);
}

static void
encode_value(StringInfo buf, Oid typid, Datum value)
{
	switch (typid)
	{
		case INT2OID:
			append_int(buf, DatumGetInt16(value), 2);
			break;
		case INT4OID:
		case DATEOID:
			append_int(buf, DatumGetInt32(value), 4);
			break;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			append_int(buf, DatumGetInt64(value), 8);
			break;
		case BOOLOID:
			appendStringInfoChar(buf, DatumGetBool(value) ? 1 : 0);
			break;
		case UUIDOID:
			appendBinaryStringInfo(buf, (char *) DatumGetUUIDP(value)->data,
								   UUID_LEN);
			break;
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
			{
				struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));

				append_bytes(buf, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
				break;
			}
		default:
			elog(ERROR, "widecol: unsupported key type %u", typid);
	}
}

/* Encode one key column's value (complemented for DESC). */
void
wc_encode_column(StringInfo buf, const WcKeyColumn *col, Datum value)
{
	int			start = buf->len;

	encode_value(buf, col->typid, value);
	if (col->desc)
		for (int j = start; j < buf->len; j++)
			buf->data[j] = ~buf->data[j];
}

static uint64
read_uint_be(const unsigned char *p, int nbytes)
{
	uint64		v = 0;

	for (int i = 0; i < nbytes; i++)
		v = (v << 8) | p[i];
	return v;
}

static int64
read_int(const unsigned char *p, int nbytes)
{
	uint64		u = read_uint_be(p, nbytes) ^ (UINT64CONST(1) << (nbytes * 8 - 1));

	/* sign-extend */
	if (nbytes < 8 && (u & (UINT64CONST(1) << (nbytes * 8 - 1))))
		u |= ~((UINT64CONST(1) << (nbytes * 8)) - 1);
	return (int64) u;
}

/*
 * Decode one (ascending) key component at *p into a Datum; advances *p.
 * Returns false on malformed input.
 */
/* Carve len bytes (aligned) off a caller's buffer sized by wc_key_decode. */
static char *
arena_alloc(char **arena, Size len)
{
	char	   *p = (char *) MAXALIGN(*arena);

	*arena = p + len;
	return p;
}

static bool
decode_value(Oid typid, const unsigned char **p, const unsigned char *end, Datum *out,
			 char **arena)
{
	const unsigned char *q = *p;

	switch (typid)
	{
		case INT2OID:
			if (end - q < 2)
				return false;
			*out = Int16GetDatum((int16) read_int(q, 2));
			*p = q + 2;
			return true;
		case INT4OID:
		case DATEOID:
			if (end - q < 4)
				return false;
			*out = Int32GetDatum((int32) read_int(q, 4));
			*p = q + 4;
			return true;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			if (end - q < 8)
				return false;
			*out = Int64GetDatum(read_int(q, 8));
			*p = q + 8;
			return true;
		case BOOLOID:
			if (end - q < 1)
				return false;
			*out = BoolGetDatum(*q != 0);
			*p = q + 1;
			return true;
		case UUIDOID:
			{
				pg_uuid_t  *u;

				if (end - q < UUID_LEN)
					return false;
				u = arena ? (pg_uuid_t *) arena_alloc(arena, sizeof(pg_uuid_t))
					: palloc(sizeof(pg_uuid_t));
				memcpy(u->data, q, UUID_LEN);
				*out = UUIDPGetDatum(u);
				*p = q + UUID_LEN;
				return true;
			}
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
			{
				/* size the result from the escaped length, copy runs between zeros */
				const unsigned char *z;
				text	   *t;
				char	   *dst;

				t = arena ? (text *) arena_alloc(arena, VARHDRSZ + (end - q))
					: (text *) palloc(VARHDRSZ + (end - q));
				dst = VARDATA(t);
				for (;;)
				{
					z = memchr(q, 0, end - q);
					if (z == NULL || end - z < 2)
						return false;
					memcpy(dst, q, z - q);
					dst += z - q;
					q = z;
					if (q[1] == 0)
						break;
					*dst++ = '\0';		/* escaped zero byte */
					q += 2;
				}
				*p = q + 2;
				SET_VARSIZE(t, dst - (char *) t);
				*out = PointerGetDatum(t);
				return true;
			}
	}
	return false;
}

/* Length of one encoded component at p (complemented when desc), or -1. */
static int
component_len(Oid typid, const unsigned char *p, const unsigned char *end, bool desc)
{
	unsigned char z = desc ? 0xFF : 0x00;
	const unsigned char *q = p;

	switch (typid)
	{
		case INT2OID:
			return end - p >= 2 ? 2 : -1;
		case INT4OID:
		case DATEOID:
			return end - p >= 4 ? 4 : -1;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return end - p >= 8 ? 8 : -1;
		case BOOLOID:
			return end - p >= 1 ? 1 : -1;
		case UUIDOID:
			return end - p >= UUID_LEN ? UUID_LEN : -1;
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
			while (end - q >= 2)
			{
				if (*q != z)
					q++;
				else if (q[1] == z)
					return (int) (q + 2 - p);	/* terminator */
				else
					q += 2;		/* escaped zero */
			}
			return -1;
	}
	return -1;
}

/*
 * Length of key column col's component at p (before end), or -1: encodings
 * are self-delimiting, so a key splits into its columns without decoding.
 */
int
wc_key_component_len(const WcKeyColumn *col, const char *p, const char *end)
{
	return component_len(col->typid, (const unsigned char *) p,
						 (const unsigned char *) end, col->desc);
}

/*
 * Decode key columns [from, to) starting at p into out[from..to) (indexed
 * by key column); by-reference values go into *arena when it is given, else
 * are palloc'd.  Returns where the next column starts.
 */
static const unsigned char *
decode_columns(WcTableInfo *info, int from, int to, const unsigned char *p,
			   const unsigned char *end, Datum *out, char **arena)
{
	unsigned char buf[WC_MAX_KEY_SIZE];

	for (int i = from; i < to; i++)
	{
		const WcKeyColumn *col = &info->cols[i];
		int			len = component_len(col->typid, p, end, col->desc);
		const unsigned char *c = p;

		if (len < 0 || len > WC_MAX_KEY_SIZE)
			elog(ERROR, "widecol: malformed key (column %d)", i + 1);
		if (col->desc)
		{
			for (int j = 0; j < len; j++)
				buf[j] = ~p[j];
			c = buf;
		}
		if (!decode_value(col->typid, &c, c + len, &out[i], arena))
			elog(ERROR, "widecol: malformed key (column %d)", i + 1);
		p += len;
	}
	return p;
}

/* Key column values (by key column) into values/isnull (by attribute). */
static void
scatter(WcTableInfo *info, int from, int to, const Datum *keyvals, Datum *values, bool *isnull)
{
	for (int i = from; i < to; i++)
	{
		values[info->cols[i].attnum - 1] = keyvals[i];
		isnull[info->cols[i].attnum - 1] = false;
	}
}

/*
 * Decode every key column of an encoded key into values/isnull (indexed by
 * attribute number - 1).  By-reference values are palloc'd in the current
 * memory context.  Rows store their key columns only in the key (the tuple
 * has NULLs there), so readers rebuild them from it.
 */
void
wc_decode_key_into(WcTableInfo *info, const char *key, int keylen,
				   Datum *values, bool *isnull)
{
	Datum		keyvals[WC_MAX_KEY_COLUMNS];
	int			n = info->npk + info->nck;

	decode_columns(info, 0, n, (const unsigned char *) key,
				   (const unsigned char *) key + keylen, keyvals, NULL);
	scatter(info, 0, n, keyvals, values, isnull);
}

/* Room for the decoded columns of `len` key bytes: each value is at most
 * its encoding plus a varlena header, aligned. */
#define DECODED_SIZE(len, ncols) ((len) + (ncols) * (VARHDRSZ + MAXIMUM_ALIGNOF) + MAXIMUM_ALIGNOF)

static char *
grow(MemoryContext cxt, char *buf, int *cap, int need)
{
	if (need <= *cap)
		return buf;
	*cap = Max(need, 2 * *cap);
	if (buf)
		pfree(buf);
	return MemoryContextAlloc(cxt, *cap);
}

/* A decoder whose buffers live in a child of `parent` (delete d->cxt to free). */
void
wc_key_decoder_init(WcKeyDecoder *d, MemoryContext parent)
{
	memset(d, 0, sizeof(*d));
	d->cxt = AllocSetContextCreate(parent, "widecol key decoder", ALLOCSET_SMALL_SIZES);
	d->pklen = -1;
}

/*
 * Decode the key columns of consecutive rows of a read into keyvals (by
 * key column): the partition columns, and the clustering columns too when
 * `clustering`.  Rows come in key order, so most share the previous row's
 * partition: its columns are decoded once per partition.  Values stay
 * valid until the decoder's next row (as a heap scan's tuple stays valid
 * while its buffer is pinned); nothing is palloc'd per row.
 */
void
wc_key_decode_cols(WcKeyDecoder *d, WcTableInfo *info, const char *key, int keylen,
				   int pklen, bool clustering, Datum *keyvals)
{
	const unsigned char *p = (const unsigned char *) key;
	char	   *arena;

	if (pklen != d->pklen || memcmp(key, d->pk, pklen) != 0)
	{
		d->pk = grow(d->cxt, d->pk, &d->pkcap, Max(pklen, 1));
		memcpy(d->pk, key, pklen);
		d->pklen = -1;			/* until decoded */
		d->pkarena = grow(d->cxt, d->pkarena, &d->pkarena_cap, DECODED_SIZE(pklen, info->npk));
		arena = d->pkarena;
		decode_columns(info, 0, info->npk, p, p + pklen, d->values, &arena);
		d->pklen = pklen;
	}
	memcpy(keyvals, d->values, sizeof(Datum) * info->npk);
	if (!clustering)
		return;
	d->rowarena = grow(d->cxt, d->rowarena, &d->rowarena_cap,
					   DECODED_SIZE(keylen - pklen, info->nck));
	arena = d->rowarena;
	decode_columns(info, info->npk, info->npk + info->nck, p + pklen, p + keylen,
				   keyvals, &arena);
}

/* wc_key_decode_cols of every key column, into values/isnull by attribute. */
void
wc_key_decode(WcKeyDecoder *d, WcTableInfo *info, const char *key, int keylen,
			  int pklen, Datum *values, bool *isnull)
{
	Datum		keyvals[WC_MAX_KEY_COLUMNS];

	wc_key_decode_cols(d, info, key, keylen, pklen, true, keyvals);
	scatter(info, 0, info->npk + info->nck, keyvals, values, isnull);
}

/* "(v1, v2)" for the partition key prefix of a key, for messages. */
char *
wc_describe_partition(Relation rel, WcTableInfo *info, const char *key, int pklen)
{
	const unsigned char *p = (const unsigned char *) key;
	const unsigned char *end = p + pklen;
	StringInfoData out;

	initStringInfo(&out);
	appendStringInfoChar(&out, '(');
	for (int i = 0; i < info->npk; i++)
	{
		Datum		d;
		Oid			outfunc;
		bool		isvarlena;

		if (!decode_value(info->cols[i].typid, &p, end, &d, NULL))
		{
			appendStringInfoString(&out, "?");
			break;
		}
		getTypeOutputInfo(info->cols[i].typid, &outfunc, &isvarlena);
		if (i > 0)
			appendStringInfoString(&out, ", ");
		appendStringInfoString(&out, OidOutputFunctionCall(outfunc, d));
	}
	appendStringInfoChar(&out, ')');
	return out.data;
}

/*
 * Encode the key of a row given its values.  NULL key values are refused:
 * key columns are NOT NULL by definition.
 */
void
wc_encode_key(Relation rel, WcTableInfo *info, Datum *values, bool *isnull,
			  StringInfo buf, int *pklen)
{
	int			ncols = info->npk + info->nck;

	*pklen = 0;
	for (int i = 0; i < ncols; i++)
	{
		WcKeyColumn *col = &info->cols[i];
		int			start = buf->len;

		if (isnull[col->attnum - 1])
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("null value in key column \"%s\" of relation \"%s\"",
							NameStr(TupleDescAttr(RelationGetDescr(rel), col->attnum - 1)->attname),
							RelationGetRelationName(rel)),
					 errhint("Columns of widecol.partition_key and widecol.clustering_key cannot be null.")));
		encode_value(buf, col->typid, values[col->attnum - 1]);
		if (col->desc)
		{
			for (int j = start; j < buf->len; j++)
				buf->data[j] = ~buf->data[j];
		}
		if (i == info->npk - 1)
			*pklen = buf->len;
	}
	if (buf->len > WC_MAX_KEY_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("key of a row in relation \"%s\" is %d bytes, more than the maximum of %d",
						RelationGetRelationName(rel), buf->len, WC_MAX_KEY_SIZE),
				 errhint("Use shorter key values; store long values in non-key columns.")));
}

void
wc_encode_rowid(uint64 rowid, StringInfo buf)
{
	append_uint_be(buf, rowid, 8);
}

/*
 * Does an encoded key decode?  Every key column in turn, the partition
 * columns ending exactly at pklen, nothing left over, booleans 0 or 1,
 * text valid in the database encoding.  For verify, which must not trust
 * what readers would decode.  NULL, or what is wrong.
 */
const char *
wc_key_problem(WcTableInfo *info, const char *key, int keylen, int pklen)
{
	const unsigned char *p = (const unsigned char *) key;
	const unsigned char *end = p + keylen;
	unsigned char buf[WC_MAX_KEY_SIZE];

	if (WcTableIsKeyless(info))
		return (keylen == 8 && pklen == 0) ? NULL : "malformed row id";
	if (keylen > WC_MAX_KEY_SIZE || pklen > keylen || (info->npk == 0 && pklen != 0))
		return "malformed key (lengths)";
	for (int i = 0; i < info->npk + info->nck; i++)
	{
		const WcKeyColumn *col = &info->cols[i];
		int			len = component_len(col->typid, p, end, col->desc);
		const unsigned char *c = buf;
		Datum		d;

		if (len < 0)
			return psprintf("malformed key (column %d)", i + 1);
		for (int j = 0; j < len; j++)
			buf[j] = col->desc ? ~p[j] : p[j];
		if (!decode_value(col->typid, &c, buf + len, &d, NULL) || c != buf + len)
			return psprintf("malformed key (column %d)", i + 1);
		if (col->typid == BOOLOID && buf[0] > 1)
			return psprintf("malformed key (column %d)", i + 1);
		if ((col->typid == TEXTOID || col->typid == VARCHAROID) &&
			!pg_verifymbstr(VARDATA_ANY(DatumGetPointer(d)),
							VARSIZE_ANY_EXHDR(DatumGetPointer(d)), true))
			return psprintf("invalid text in key (column %d)", i + 1);
		p += len;
		if (i == info->npk - 1 && (const char *) p - key != pklen)
			return "partition key length differs from its columns";
	}
	if (p != end)
		return "bytes after the last key column";
	return NULL;
}
