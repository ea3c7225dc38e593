/*
 * storage/compression.h — the one seam between page payloads and codecs.
 *
 * A run page (key block or value page) records its codec in the low bits
 * of its flags; lz4 is codec 0 and "stored as is" codec 1, which is what
 * the earlier RAW flag meant, so pages written before the seam read the
 * same; zstd is codec 2, in runs of format 5 on (src/README.md, "Codecs").
 * A writer picks zstd's level: widecol.ingest_zstd_level for flushes and
 * bulk writes, widecol.compaction_zstd_level for compaction and VACUUM
 * FULL (0 = lz4); and per page kind the codec: flushes and bulk writes
 * write key pages with lz4 unless widecol.ingest_key_codec = zstd (they
 * are what reads of runs not compacted yet decode most), compaction unless
 * widecol.compaction_key_codec = zstd (every seek decodes one).
 */
#ifndef WC_STORAGE_COMPRESSION_H
#define WC_STORAGE_COMPRESSION_H

#include "widecol.h"

typedef enum WcCodec
{
	WC_CODEC_LZ4 = 0,
	WC_CODEC_NONE = 1,			/* stored as is */
	WC_CODEC_ZSTD = 2,			/* run format 5 on */
	WC_CODEC_HEX = 3,			/* column chunks only, run format 8 on: short
								 * text values of lowercase hex digits, two
								 * digits a byte (storage/columns.c) */
	WC_CODEC_ZSTD_DICT = 4,		/* column chunks only, run format 9 on: zstd
								 * frames of a few values with the run's
								 * dictionary (storage/dictionary.h) */
	WC_CODEC_HEADS = 5			/* the tuple headers' chunk only, run format
								 * 12 on: one header shared by every tuple,
								 * and each tuple's length (storage/columns.c) */
} WcCodec;

#define WC_CODEC_MASK		0x000F	/* of a page's (or key block's) flags */
#define WcFlagsCodec(flags) ((WcCodec) ((flags) & WC_CODEC_MASK))

extern Size wc_compress_bound(Size rawsize);
extern int	wc_compaction_zstd_level;
extern int	wc_ingest_zstd_level;
extern int	wc_ingest_key_codec;	/* WC_CODEC_LZ4 or WC_CODEC_ZSTD */
extern int	wc_compaction_key_codec;	/* the same, for compaction */

extern const char *wc_compress(WcCodec codec, int level, const char *raw, Size rawsize, Size capacity,
							   Size min_saving,
							   char *buf, Size *len, WcCodec *used);
extern const char *wc_decompress(WcCodec codec, const char *src, Size len,
								 char *dst, Size rawsize);
extern const char *wc_decompressed(WcCodec codec, const char *src, Size len,
								   char *dst, Size rawsize, const char **problem);
extern const char *wc_codec_name(WcCodec codec);

#endif
