/*
 * keyenc.c — order-preserving encoding of partition + clustering keys.
 *
 * memcmp order of the encoding equals SQL order of the values (byte order
 * for text, i.e. the "C" collation); DESC columns are complemented.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

#include "widecol.h"

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
