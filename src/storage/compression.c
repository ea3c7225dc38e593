/*
 * compression.c — compressing and decompressing page payloads, behind one
 * interface (storage/compression.h).
 */
#include "postgres.h"

#include <lz4.h>

#include "widecol.h"
#include "storage/compression.h"

/* Room a compressed image of rawsize bytes may need, for any codec. */
Size
wc_compress_bound(Size rawsize)
{
	return Max((Size) LZ4_compressBound((int) rawsize), rawsize);
}

/*
 * Compress `raw` with `codec` for a payload of at most `capacity` bytes:
 * the compressed image (in buf, wc_compress_bound bytes) if it is smaller
 * and fits, else the raw bytes if they fit (*used = WC_CODEC_NONE), else
 * NULL.  *len is the payload's length.
 */
const char *
wc_compress(WcCodec codec, const char *raw, Size rawsize, Size capacity,
			char *buf, Size *len, WcCodec *used)
{
	if (codec == WC_CODEC_LZ4)
	{
		int			clen = LZ4_compress_default(raw, buf, (int) rawsize,
												LZ4_compressBound((int) rawsize));

		if (clen > 0 && (Size) clen < rawsize && (Size) clen <= capacity)
		{
			*len = clen;
			*used = WC_CODEC_LZ4;
			return buf;
		}
	}
	if (rawsize <= capacity)
	{
		*len = rawsize;
		*used = WC_CODEC_NONE;
		return raw;
	}
	return NULL;
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
				return "uncompressed payload of the wrong size";
			memcpy(dst, src, len);
			return NULL;
		case WC_CODEC_LZ4:
			if (LZ4_decompress_safe(src, dst, (int) len, (int) rawsize) != (int) rawsize)
				return "lz4 decompression failed";
			return NULL;
	}
	return "unknown compression codec";
}
