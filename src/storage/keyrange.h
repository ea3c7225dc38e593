/*
 * storage/keyrange.h — a run's key-column ranges (run format 4): the least
 * and greatest encoded value of each partition-key column and of the first
 * clustering column.  See "Key-column ranges" in src/README.md.
 */
#ifndef WC_STORAGE_KEYRANGE_H
#define WC_STORAGE_KEYRANGE_H

#include "lib/stringinfo.h"
#include "storage/tableinfo.h"

/* Parsed ranges; the pointers point into the serialized bytes. */
typedef struct WcKeyRanges
{
	int			ncols;			/* partition columns, then maybe one clustering */
	const char *min[WC_MAX_KEY_COLUMNS];
	const char *max[WC_MAX_KEY_COLUMNS];
	uint16		minlen[WC_MAX_KEY_COLUMNS];
	uint16		maxlen[WC_MAX_KEY_COLUMNS];
} WcKeyRanges;

/* Ranges being built from the keys of a run's versions, in any order. */
typedef struct WcKeyRangeBuilder
{
	int			ncols;
	bool		any;			/* a key was added */
	StringInfoData min[WC_MAX_KEY_COLUMNS];
	StringInfoData max[WC_MAX_KEY_COLUMNS];
} WcKeyRangeBuilder;

extern void wc_key_ranges_begin(WcKeyRangeBuilder *b, const WcTableInfo *info);
extern void wc_key_ranges_add(WcKeyRangeBuilder *b, const WcTableInfo *info,
							  const char *key, int keylen);
extern void wc_key_ranges_serialize(const WcKeyRangeBuilder *b, StringInfo out);
extern bool wc_key_ranges_parse(const char *data, int len, WcKeyRanges *out);
extern int	wc_key_split(const WcTableInfo *info, const char *pk, int pklen, uint16 *offs);
extern bool wc_key_ranges_exclude_split(const WcKeyRanges *r, const char *pk,
										const uint16 *offs, int n);
extern bool wc_key_ranges_exclude_partition(const WcKeyRanges *r, const WcTableInfo *info,
											const char *pk, int pklen);
extern int	wc_key_ranges_bound(const WcKeyRanges *r, const WcTableInfo *info,
								const char *pk, int pklen, bool upper, char *out);

#endif
