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
struct ZSTD_CCtx_s;				/* zstd.h's ZSTD_CCtx */
extern int	wc_zstd_setup_context(struct ZSTD_CCtx_s *cctx, int level);

/*
 * A codec a writer keeps trying on pages of one kind and keeps throwing
 * away (packed keys it does not shrink by a sixteenth, hex chunks whose
 * lz4 probe finds no repeats, plain zstd of a text column whose chunks go
 * in dictionary frames) is, after WC_PROBE_TRUST such pages in a
 * row, tried only on one page in WC_PROBE_EVERY; one success and it is
 * tried on every page again.  Only the writer's CPU changes: a page it
 * does not try is stored as the failed tries stored the pages before it.
 * (Ingest of device_daily_images rows: the lz4 of every key page and of
 * every hash chunk's probe was 3% of a COPY's CPU, all of it discarded.)
 */
#define WC_PROBE_TRUST	4
#define WC_PROBE_EVERY	16

static inline bool
wc_probe_due(uint32 misses)
{
	return misses < WC_PROBE_TRUST || misses % WC_PROBE_EVERY == 0;
}

/* After a page: the codec found something (or was tried and did not). */
static inline void
wc_probe_note(uint32 *misses, bool found)
{
	*misses = found ? 0 : *misses + 1;
}

#endif
