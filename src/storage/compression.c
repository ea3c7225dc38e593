/*
 * compression.c — compressing and decompressing page payloads, behind one
 * interface (storage/compression.h).
 *
 * Codecs: lz4 (the fast one: key pages of runs written on the ingest
 * path), zstd (entropy-coded: their value pages and every page compaction
 * writes; run format 5) and "stored as is".  zstd keeps one compression
 * and one decompression context per backend, made on first use: a context
 * costs more to make than a page costs to compress.
 */
#include "postgres.h"

#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_c_literalCompressionMode, see below */
#include <zstd.h>

#include "widecol.h"
#include "storage/compression.h"

/*
 * zstd levels of the runs written (storage/compression.h): compaction and
 * VACUUM FULL at level 1, flushes and bulk writes at fast level -5 with
 * entropy-coded literals.  0 = lz4.  The key pages of flushes and bulk
 * writes are lz4 unless wc_ingest_key_codec is zstd.
 */
int			wc_compaction_zstd_level = 1;
int			wc_ingest_zstd_level = -5;
int			wc_ingest_key_codec = WC_CODEC_LZ4;
int			wc_compaction_key_codec = WC_CODEC_LZ4;

static ZSTD_CCtx *zstd_cctx = NULL;
static ZSTD_DCtx *zstd_dctx = NULL;
static int	zstd_cctx_level = 0;	/* what zstd_cctx is set up for (0: nothing) */

static void
zstd_out_of_memory(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("Could not create a zstd %s context.", what)));
}

/*
 * zstd's fast levels (negative) skip ahead faster where nothing matches,
 * and by default also store literals raw; the rows' hashes and uuids are
 * hex text and random bytes that match nothing, and entropy-coding their
 * literals is where zstd's gain over lz4 comes from (Huffman packs a hex
 * digit into about 4 bits).  ZSTD_c_literalCompressionMode asks for
 * Huffman-coded literals at a fast level.  It is in zstd's experimental
 * API, whose numbers may change between versions, so it is used only
 * with the libzstd major.minor it was compiled against, and only if
 * that library accepts it; otherwise a negative level means level 1.
 * The format of the frames does not depend on it: any zstd decoder reads
 * them.
 */
static bool
zstd_fast_literals(ZSTD_CCtx *cctx)
{
	static int	ok = -1;

	if (ok < 0)
		ok = (ZSTD_versionNumber() / 100 == ZSTD_VERSION_NUMBER / 100 &&
			  !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode,
												   ZSTD_ps_enable)));
	return ok == 1;
}

/*
 * Another context (a run dictionary's, storage/dictionary.c) set up for
 * `level` as ours are: at a negative level, literals entropy-coded, or
 * level 1 where this libzstd cannot.  The level its dictionary must be
 * made for; -1000 (not a level) if the context refuses.
 */
int
wc_zstd_setup_context(ZSTD_CCtx *cctx, int level)
{
	if (level >= 0)
		return level;
	if (!zstd_fast_literals(cctx))
		return 1;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable)))
		return -1000;
	return level;
}

/* Set zstd_cctx up for `level` (see wc_ingest_zstd_level). */
static void
zstd_setup(int level)
{
	size_t		r;
	int			use = level;

	if (zstd_cctx_level == level)
		return;
	zstd_cctx_level = 0;
	ZSTD_CCtx_reset(zstd_cctx, ZSTD_reset_session_and_parameters);
	if (use < 0 && !zstd_fast_literals(zstd_cctx))
		use = 1;
	r = ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_compressionLevel, use);
	if (!ZSTD_isError(r) && use < 0)
		r = ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable);
	if (ZSTD_isError(r))
		elog(ERROR, "widecol: could not set zstd level %d: %s", use, ZSTD_getErrorName(r));
	zstd_cctx_level = level;
}

/* Room a compressed image of rawsize bytes may need, for any codec. */
Size
wc_compress_bound(Size rawsize)
{
	Size		bound = Max((Size) LZ4_compressBound((int) rawsize), rawsize);

	return Max(bound, ZSTD_compressBound(rawsize));
}

static int
zstd_compress(const char *raw, Size rawsize, char *buf, int level)
{
	size_t		clen;

	if (zstd_cctx == NULL && (zstd_cctx = ZSTD_createCCtx()) == NULL)
		zstd_out_of_memory("compression");
	zstd_setup(level);
	/* one frame; it records its content size, which the reader checks */
	clen = ZSTD_compress2(zstd_cctx, buf, ZSTD_compressBound(rawsize), raw, rawsize);
	if (ZSTD_isError(clen))
		return -1;
	return (int) clen;
}

/*
 * Compress `raw` with `codec` (zstd at `level`) for a payload of at most
 * `capacity` bytes: the compressed image (in buf, wc_compress_bound bytes)
 * if it is smaller by at least min_saving bytes and fits, else the raw
 * bytes if they fit (*used = WC_CODEC_NONE), else the compressed image if
 * it is smaller and fits, else NULL.  *len is the payload's length.  (A
 * page every read decodes is not worth a codec that saves little of it.)
 */
const char *
wc_compress(WcCodec codec, int level, const char *raw, Size rawsize, Size capacity,
			Size min_saving, char *buf, Size *len, WcCodec *used)
{
	int			clen = -1;
	bool		compressed_fits;

	Assert(codec != WC_CODEC_ZSTD || level != 0);
	if (codec == WC_CODEC_LZ4)
		clen = LZ4_compress_default(raw, buf, (int) rawsize,
									LZ4_compressBound((int) rawsize));
	else if (codec == WC_CODEC_ZSTD)
		clen = zstd_compress(raw, rawsize, buf, level);
	compressed_fits = codec != WC_CODEC_NONE &&
		clen > 0 && (Size) clen < rawsize && (Size) clen <= capacity;
	if (compressed_fits && (rawsize - clen >= min_saving || rawsize > capacity))
	{
		*len = clen;
		*used = codec;
		return buf;
	}
	if (rawsize <= capacity)
	{
		*len = rawsize;
		*used = WC_CODEC_NONE;
		return raw;
	}
	return NULL;
}

#define NONE_WRONG_SIZE "uncompressed payload of the wrong size"

/*
 * The rawsize bytes `len` bytes of `src` written with `codec` decode to:
 * src itself if they are stored as is (no copy), else dst, decompressed
 * there.  *problem as wc_decompress's.
 */
const char *
wc_decompressed(WcCodec codec, const char *src, Size len, char *dst, Size rawsize,
				const char **problem)
{
	if (codec == WC_CODEC_NONE)
	{
		*problem = (len == rawsize) ? NULL : NONE_WRONG_SIZE;
		return src;
	}
	*problem = wc_decompress(codec, src, len, dst, rawsize);
	return dst;
}

/*
 * Decompress `len` bytes of `src`, written with `codec`, into exactly
 * `rawsize` bytes at dst.  NULL, or what is wrong (the caller reports it
 * as corruption: a codec id or size the payload cannot have).
 */
const char *
wc_decompress(WcCodec codec, const char *src, Size len, char *dst, Size rawsize)
{
	switch (codec)
	{
		case WC_CODEC_NONE:
			if (len != rawsize)
				return NONE_WRONG_SIZE;
			memcpy(dst, src, len);
			return NULL;
		case WC_CODEC_LZ4:
			if (LZ4_decompress_safe(src, dst, (int) len, (int) rawsize) != (int) rawsize)
				return "lz4 decompression failed";
			return NULL;
		case WC_CODEC_ZSTD:
			{
				size_t		n;

				if (zstd_dctx == NULL && (zstd_dctx = ZSTD_createDCtx()) == NULL)
					zstd_out_of_memory("decompression");
				/* the frame records its size: it must be exactly rawsize */
				if (ZSTD_getFrameContentSize(src, len) != (unsigned long long) rawsize)
					return "zstd frame of the wrong size";
				n = ZSTD_decompressDCtx(zstd_dctx, dst, rawsize, src, len);
				if (ZSTD_isError(n) || n != rawsize)
					return "zstd decompression failed";
				return NULL;
			}
		case WC_CODEC_HEX:
		case WC_CODEC_ZSTD_DICT:
		case WC_CODEC_HEADS:
			break;				/* column chunks only (storage/columns.c) */
	}
	return "unknown compression codec";
}

/* The codec's name, for widecol.verify and error messages. */
const char *
wc_codec_name(WcCodec codec)
{
	switch (codec)
	{
		case WC_CODEC_LZ4:
			return "lz4";
		case WC_CODEC_NONE:
			return "none";
		case WC_CODEC_ZSTD:
			return "zstd";
		case WC_CODEC_HEX:
			return "hex";
		case WC_CODEC_ZSTD_DICT:
			return "zstd_dict";
		case WC_CODEC_HEADS:
			return "heads";
	}
	return "unknown";
}
