/*
 * storage/dictionary.h — a run's zstd dictionary and the column chunks
 * compressed with it in frames of a few values (run format 9).
 *
 * A point lookup reads one value of a column chunk, but a chunk compressed
 * as one zstd frame has to be decoded whole: for a page's 110 object paths,
 * 5-6 µs, the largest single cost of a lookup by key.  Compaction trains a
 * dictionary on the first chunks of a run it writes (ZDICT, as RocksDB does
 * per SST file) and compresses the chunks after that in frames of
 * WC_DICT_FRAME_VALUES values with it: a lookup decodes one frame (about
 * 1.5 µs) for about 9% more bytes than one frame per chunk (a frame alone,
 * without the dictionary, costs 25-50% more).  Only chunks of short
 * varlenas (one header byte: no alignment between values) are framed, so
 * a frame's values can be walked without the rest of the chunk.
 */
#ifndef WC_STORAGE_DICTIONARY_H
#define WC_STORAGE_DICTIONARY_H

#include "widecol.h"
#include "utils/rel.h"

#define WC_DICT_FRAME_VALUES	16
#define WC_DICT_MAX_BYTES		(16 * 1024)
#define WC_DICT_TRAIN_BYTES		(256 * 1024)	/* samples before training */

extern bool wc_compaction_zstd_dictionary;	/* widecol.compaction_zstd_dictionary */
extern bool wc_ingest_zstd_dictionary;	/* widecol.ingest_zstd_dictionary */

/* Where a run's dictionary is: after its key ranges in the header page. */
typedef struct WcRunDict
{
	BlockNumber first;			/* its first page (WC_PAGE_RUN_DICT) */
	uint32		npages;
	uint32		len;			/* bytes; 0: the run has none */
} WcRunDict;

/* A run's dictionary, as a value page's reader finds it. */
typedef struct WcDictRef
{
	Relation	rel;
	uint64		run_id;
	WcRunDict	d;
} WcDictRef;

/* ---- writing ---- */
typedef struct WcDictBuilder WcDictBuilder;

extern WcDictBuilder *wc_dict_builder_create(int level);
extern WcDictBuilder *wc_dict_builder_borrow(const WcDictRef *ref, int level);
extern bool wc_dict_encode(WcDictBuilder *b, const char *src, uint32 rawlen, char *out,
						   Size room, Size *outlen);
extern void wc_dict_mark_used(WcDictBuilder *b);
extern const char *wc_dict_bytes(WcDictBuilder *b, uint32 *len);

/* ---- reading ---- */
extern const char *wc_dict_decode(const WcDictRef *ref, const char *src, Size len,
								  char *dst, uint32 rawlen);
extern const char *wc_dict_decode_frame(const WcDictRef *ref, const char *src, Size len,
										uint32 value, char *dst, uint32 cap, uint32 *outlen,
										uint32 *skip, int32 *frame_in_dst);
extern const char *wc_dict_check(const WcDictRef *ref);

#endif
