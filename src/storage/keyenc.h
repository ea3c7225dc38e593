/*
 * storage/keyenc.h — the order-preserving key encoding and its decoders.
 */
#ifndef WC_STORAGE_KEYENC_H
#define WC_STORAGE_KEYENC_H

#include "storage/tableinfo.h"
#include "lib/stringinfo.h"

extern void wc_encode_key(Relation rel, WcTableInfo *info, Datum *values,
						  bool *isnull, StringInfo buf, int *pklen);
extern void wc_encode_rowid(uint64 rowid, StringInfo buf);
extern void wc_encode_column(StringInfo buf, const WcKeyColumn *col, Datum value);
extern int	wc_key_component_len(const WcKeyColumn *col, const char *p, const char *end);
extern const char *wc_key_problem(WcTableInfo *info, const char *key, int keylen, int pklen);
extern char *wc_describe_partition(Relation rel, WcTableInfo *info, const char *key, int pklen);
extern void wc_decode_key_into(WcTableInfo *info, const char *key, int keylen,
							   Datum *values, bool *isnull);

/* Decodes the keys of a read's rows, the partition columns once per partition. */
typedef struct WcKeyDecoder
{
	MemoryContext cxt;			/* holds the buffers */
	char	   *pk;				/* the partition key decoded last */
	int			pklen;
	int			pkcap;
	char	   *pkarena;		/* its by-reference values */
	int			pkarena_cap;
	char	   *rowarena;		/* the current row's clustering values */
	int			rowarena_cap;
	Datum		values[WC_MAX_KEY_COLUMNS];	/* its partition columns */
} WcKeyDecoder;

extern void wc_key_decoder_init(WcKeyDecoder *d, MemoryContext parent);
extern void wc_key_decode_cols(WcKeyDecoder *d, WcTableInfo *info, const char *key,
							   int keylen, int pklen, bool clustering, Datum *keyvals);
extern void wc_key_decode(WcKeyDecoder *d, WcTableInfo *info, const char *key,
						  int keylen, int pklen, Datum *values, bool *isnull);

#endif
