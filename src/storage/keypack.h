/*
 * storage/keypack.h — the packed form of a run's key block (run formats 10
 * and 11).
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

/*
 * with WC_KEYS_PACKED (run format 11): the rows are in steps of
 * WC_KEYS_STEP, each step's first row predicted from the block's first
 * row rather than the row before it, and a table of where each step after
 * the first starts (WcKeysStep) follows the packed rows; a read seeking a
 * key finds its step by binary search instead of following every row
 * before it
 */
#define WC_KEYS_STEPS		0x0020
#define WC_KEYS_STEP		32

typedef struct WcKeysStep
{
	uint16		packed;			/* the step's first packed row: its offset */
	uint16		row;			/* ... and where it is laid out */
} WcKeysStep;

/*
 * What a packed row is predicted from: the row before it.  The packer and
 * the unpacker follow the rows the same way, so they predict alike.
 */
typedef struct WcKeysPrediction
{
	TransactionId xid;
	CommandId	cid;
	uint16		keylen;
	uint16		pklen;
	int64		write_ts;
	int64		next_at;		/* where the previous tuple ended */
	const char *key;			/* the previous key (keylen bytes) */
} WcKeysPrediction;

/*
 * Where an unpacking is: the prediction of the next row, the packed rows
 * still to read, where the next row goes.  An unpacking that stopped early
 * with rows to come (pending) goes on from here (wc_keys_unpack_more) once
 * the packed bytes it still reads are where the caller keeps them
 * (wc_keys_cursor_keep); pending is false otherwise.
 */
typedef struct WcKeysCursor
{
	WcKeysPrediction pr;
	WcKeysPrediction base;		/* after the first row (key in the packed
								 * rows): what each step starts from */
	bool		stepped;		/* the rows are in steps (WC_KEYS_STEPS) */
	const char *origin;			/* while unpacking: the packed rows, */
	const char *table;			/* ... and their steps (NULL: none, or not
								 * kept by a lazy read) */
	const char *p;				/* the next packed row */
	Size		off;			/* where the next row is laid out */
	int			row;
	const char *end;
	Size		rowsend;
	int			nrows;
	bool		pending;		/* stopped early, rows to come */
	int			more_rows;		/* what the next wc_keys_unpack_more lays out */
} WcKeysCursor;

extern Size wc_keys_pack(const char *rows, const uint32 *offsets, int nrows,
						 Size rowbytes, char *out, bool *steps);
extern const char *wc_keys_unpack(const char *packed, Size plen, int nrows, bool steps,
								  char *dst, Size rawsize,
								  const char *lo, int lolen, const char *hi, int hilen,
								  int *first, int *unpacked, WcKeysCursor *more);
extern void wc_keys_cursor_keep(WcKeysCursor *c, char *at);
extern const char *wc_keys_unpack_more(WcKeysCursor *c, char *dst, const char *hi,
									   int hilen, int *unpacked);

#endif
