/*
 * storage/columns.h — value pages in column layout (run format 6).
 *
 * A value page normally holds its tuples as they are (minimal tuples,
 * MAXALIGNed, one after the other), compressed as one frame.  A report
 * that reads two int columns then decodes every byte of every tuple.  In
 * column layout (WC_VALUES_COLUMNS) the same tuples are stored as one
 * frame of tuple headers and one frame per column, each compressed on its
 * own: a read that knows which columns it needs (the widecol slot, told by
 * the plan) decodes only those frames, and anything else gets the tuples
 * back byte for byte (wc_columns_assemble), so the rest of widecol never
 * sees the difference.  Compaction writes this layout, and so do flushes
 * and bulk writes unless widecol.ingest_value_layout = rows (src/README.md,
 * "Value pages in column layout").
 */
#ifndef WC_STORAGE_COLUMNS_H
#define WC_STORAGE_COLUMNS_H

#include "access/tupdesc.h"
#include "storage/compression.h"
#include "storage/dictionary.h"

#define WC_VALUES_COLUMNS	0x0200	/* value page opaque flag */

/* widecol.compaction_value_layout */
typedef enum WcValueLayout
{
	WC_LAYOUT_ROWS,
	WC_LAYOUT_COLUMNS
} WcValueLayout;
extern int	wc_compaction_value_layout;
extern int	wc_ingest_value_layout;
extern bool wc_debug_check_columns;

/* the payload: this header, a directory entry per chunk, then the chunks */
typedef struct WcColumnsHeader
{
	uint16		ntuples;
	uint16		nchunks;		/* chunk 0: tuple headers; 1 + a: column a */
} WcColumnsHeader;

typedef struct WcColumnChunk
{
	uint8		codec;			/* WcCodec */
	char		attalign;		/* of the column (0 for chunk 0) */
	int16		attlen;
	uint16		len;			/* stored bytes */
	uint16		byval;			/* the column's values are passed by value */
	uint32		rawlen;			/* decoded bytes */
} WcColumnChunk;

#define WC_COLUMNS_SCRATCH_SIZE (6 * 64 * 1024)
/*
 * What a run writer carries from one value page to the next: pages it
 * encoded (the first pages, then one in WC_COLUMNS_VERIFY_EVERY, are
 * decoded again and compared byte for byte: columns.c, "the layout must
 * give back exactly these bytes"), and per column, hex chunks in a row
 * whose values did not repeat and text chunks in a row that went in
 * frames with the run's dictionary rather than plain zstd (compression.h,
 * wc_probe_due).
 */
typedef struct WcColumnsMemo
{
	uint32		pages;
	uint32	   *hex_probe_misses;
	uint32	   *plain_misses;
	bool		frames_no_room;	/* the last page went without frames: with
								 * them it did not fit */
} WcColumnsMemo;

typedef enum WcColumnsResult
{
	WC_COLUMNS_OK,
	WC_COLUMNS_TOO_BIG,			/* more than the capacity */
	WC_COLUMNS_UNSUITABLE		/* columns too many or too wide */
} WcColumnsResult;
extern WcColumnsResult wc_columns_encode(TupleDesc desc, const char *raw, Size rawsize,
										 WcCodec codec, int level, bool hex_ok,
										 bool heads_ok, WcDictBuilder *dict,
										 WcColumnsMemo *memo, Size capacity,
										 char *scratch, char *out, Size *outlen);
extern const char *wc_columns_assemble(const char *payload, Size len, char *dst,
									   Size rawsize, const WcDictRef *dict);
extern bool wc_columns_use_frames(const char *payload, Size len);

/*
 * One value page opened in column layout for lazy reads: its payload is
 * kept and a column decoded the first time one of its values is asked for.
 * Everything lives in one buffer of wc_columns_state_size bytes (at most
 * WC_COLUMNS_STATE_SIZE; a page that needs more is read as tuples).
 */
#define WC_COLUMNS_STATE_SIZE (512 * 1024)
typedef struct WcColumnsPage WcColumnsPage;

extern Size wc_columns_state_size(const char *payload, Size len);
extern WcColumnsPage *wc_columns_open(char *state, Size size, const char *payload, Size len,
									  Size rawsize, bool point, const WcDictRef *dict,
									  const char **problem);
extern int	wc_columns_ordinal(WcColumnsPage *cp, uint32 tupoff);
extern int	wc_columns_fetch_row(WcColumnsPage *cp, int ordinal, TupleDesc desc,
								 const bool *skip, int from, int upto, Datum *values,
								 bool *isnull, const char **problem);

#endif
