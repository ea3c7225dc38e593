/*
 * imagetags.c — the image store's tag helpers: widecol.distinct_tags(tags)
 * and widecol.image_dimensions(device_id, tags).
 *
 * Why C: the store's images_by_tag and daily_counts definitions run for
 * every statement on images.  Written in SQL (SELECT DISTINCT over unnest,
 * a LATERAL UNION ALL) they cost an aggregate, an append and four more plan
 * nodes per statement, set up anew each time; for a one-image transaction
 * that set-up was the largest part of the store's write path.  These two
 * functions give the same rows from one function scan.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "widecol.h"
#include "api/api.h"

/*
 * The distinct non-NULL elements of a text array, flattened, in the order
 * they first appear; *n is their number.  Equality is that of the
 * collation, as DISTINCT's would be (bytes, for a deterministic one).
 */
static Datum *
distinct_elements(ArrayType *arr, Oid collation, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	bool		bytewise = !OidIsValid(collation) || get_collation_isdeterministic(collation);

	if (ARR_ELEMTYPE(arr) != TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("widecol: tags must be a text array")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
	*n = 0;
	for (int i = 0; i < nelems; i++)
	{
		text	   *t;
		bool		seen = false;

		if (nulls[i])
			continue;
		t = DatumGetTextPP(elems[i]);
		/* tags per image are few: a quadratic scan beats hashing them */
		for (int j = 0; j < *n && !seen; j++)
		{
			text	   *u = DatumGetTextPP(elems[j]);

			if (bytewise)
				seen = VARSIZE_ANY_EXHDR(t) == VARSIZE_ANY_EXHDR(u) &&
					memcmp(VARDATA_ANY(t), VARDATA_ANY(u), VARSIZE_ANY_EXHDR(t)) == 0;
			else
				seen = DatumGetBool(DirectFunctionCall2Coll(texteq, collation,
															PointerGetDatum(t),
															PointerGetDatum(u)));
		}
		if (!seen)
			elems[(*n)++] = PointerGetDatum(t);
		CHECK_FOR_INTERRUPTS();
	}
	return elems;
}

/*
 * widecol.distinct_tags(tags text[]) RETURNS text[]: the distinct non-NULL
 * tags in the order they first appear; an empty array for NULL.
 */
PG_FUNCTION_INFO_V1(widecol_distinct_tags);
Datum
widecol_distinct_tags(PG_FUNCTION_ARGS)
{
	Datum	   *tags;
	int			n;

	if (PG_ARGISNULL(0))
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));
	tags = distinct_elements(PG_GETARG_ARRAYTYPE_P(0), PG_GET_COLLATION(), &n);
	PG_RETURN_ARRAYTYPE_P(construct_array(tags, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * widecol.image_dimensions(device_id text, tags text[])
 *   RETURNS TABLE (dimension text, value text):
 * what an image is counted under in an image store's daily_counts:
 * ('total', ''), ('device', device_id) and ('tag', t) for each distinct
 * non-NULL tag (equal bytes are one tag).  No device row for a NULL
 * device_id.
 */
PG_FUNCTION_INFO_V1(widecol_image_dimensions);
Datum
widecol_image_dimensions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = CStringGetTextDatum("total");
	values[1] = CStringGetTextDatum("");
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	if (!PG_ARGISNULL(0))
	{
		values[0] = CStringGetTextDatum("device");
		values[1] = PG_GETARG_DATUM(0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (!PG_ARGISNULL(1))
	{
		int			n;
		/* bytes equal, as the "C" collation of daily_counts' keys has it */
		Datum	   *tags = distinct_elements(PG_GETARG_ARRAYTYPE_P(1), InvalidOid, &n);

		values[0] = CStringGetTextDatum("tag");
		for (int i = 0; i < n; i++)
		{
			values[1] = tags[i];
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}
