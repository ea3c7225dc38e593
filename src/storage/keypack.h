/*
 * storage/keypack.h — the packed form of a run's key block (run format 10).
 *
 * A key block in memory is rows (WcRowHeader, key, padding to MAXALIGN)
 * followed by their offsets.  Most of a header is predictable from the row
 * before it (same transaction, no expiry, the next tuple offset), so a key
 * page stores its rows packed: a tag byte saying which fields differ from
 * the prediction, varints for the rest, and each key as the bytes it does
 * not share with the previous key.  About 30% fewer bytes for keys a
 * codec cannot shrink (random uuids), so more key pages stay in shared
 * buffers (src/README.md, "Packed key blocks").
 */
#ifndef WIDECOL_KEYPACK_H
#define WIDECOL_KEYPACK_H

#include "postgres.h"

/* in WcKeyPageHeader.flags: the key block is packed; its packed length
 * (uint32) follows the value references */
#define WC_KEYS_PACKED		0x0010

extern Size wc_keys_pack(const char *rows, const uint32 *offsets, int nrows,
						 Size rowbytes, char *out);
extern const char *wc_keys_unpack(const char *packed, Size plen, int nrows,
								  char *dst, Size rawsize,
								  const char *lo, int lolen, const char *hi, int hilen,
								  int *first, int *unpacked);

#endif
